// Package pipeline turns input records into token shards: it reads records
// in input order, decodes and tokenizes them on a pool of workers, puts each
// document in a split (train, valid, ...) chosen by a seeded hash of its
// record number, and cuts the stream into shard groups of about
// ShardTokens tokens, each written as one shard per split and format.
//
// The output depends only on the inputs and the configuration, never on the
// number of workers: records keep their order whatever worker finished
// them, the split of a document depends on its record number and the seed,
// and the shuffle of a group is seeded by the seed and the group's number.
// Shuffling permutes documents within a group (memory stays bounded by one
// group); Megatron-LM shuffles samples again when it builds its indices.
//
// A group is recorded in the manifest (manifest.json in the output folder)
// only after its files are complete under their final names, so a run that
// stops part way resumes after the last recorded group, and a run whose
// manifest says complete with the same fingerprint does nothing.
//
// It is not the stage plugin: plugins/dataprep adapts it to api.Provider.
package pipeline
