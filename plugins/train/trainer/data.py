"""Training samples from Megatron indexed datasets (PREFIX.bin with tokens,
PREFIX.idx in the MMIDIDX layout, as plugins/dataprep/shard writes them).

Documents sit back to back in a .bin, so each shard is read, memory-mapped,
as one token stream cut into samples of seq_len+1 tokens (inputs and the
labels shifted by one). Samples are visited in a seeded random order, a new
order each epoch; the sample of a given step, micro-batch and data-parallel
rank depends on nothing else, so a resumed run reads what an uninterrupted
one would have.

A shard may have a loss mask beside it, PREFIX.mask.bin/.idx: one uint8 per
token in the same order (dtype code 1), 1 where the loss is computed, as
the data_prep stage writes for chat records. A sample's labels are then
IGNORE wherever the mask leaves the label token out.
"""

import numpy as np
import torch

MAGIC = b"MMIDIDX\x00\x00"
# The label F.cross_entropy leaves out (its ignore_index).
IGNORE = -100
# Megatron-LM's dtype codes.
DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64, 7: np.float32, 8: np.uint16}


class DataError(Exception):
    pass


def shard_dtype(prefix):
    """Reads the token type from PREFIX.idx's header."""
    try:
        with open(prefix + ".idx", "rb") as f:
            head = f.read(len(MAGIC) + 8 + 1)
    except OSError as e:
        raise DataError(f"cannot read {prefix}.idx: {e}") from e
    if len(head) < len(MAGIC) + 9 or head[: len(MAGIC)] != MAGIC:
        raise DataError(f"{prefix}.idx is not a Megatron (MMIDIDX) index")
    version = int.from_bytes(head[len(MAGIC) : len(MAGIC) + 8], "little")
    code = head[len(MAGIC) + 8]
    if version != 1 or code not in DTYPES:
        raise DataError(f"{prefix}.idx has version {version} and dtype code {code}; version 1 and codes {sorted(DTYPES)} are read")
    return np.dtype(DTYPES[code])


class TokenShards:
    """Samples of seq_len+1 tokens cut from each shard's token stream."""

    def __init__(self, prefixes, seq_len, masks=None):
        """masks, when given, are the loss masks' prefixes, one per shard."""
        self.seq_len = seq_len
        self.streams = []
        self.masks = [] if masks else None
        counts = []
        for k, p in enumerate(prefixes):
            stream = _map(p)
            n = (len(stream) - 1) // seq_len
            if n > 0:
                self.streams.append(stream)
                counts.append(n)
                if masks:
                    self.masks.append(_mask(masks[k], len(stream), p))
        self.offsets = np.cumsum([0] + counts)
        self.samples = int(self.offsets[-1])
        if self.samples == 0:
            raise DataError(f"the shards hold fewer than {seq_len + 1} tokens, not one sample of seq_len + 1")

    def sample(self, i):
        s, start = self._locate(i)
        return np.asarray(self.streams[s][start : start + self.seq_len + 1], dtype=np.int64)

    def sample_mask(self, i):
        """The loss mask of sample i (uint8), or None without masks."""
        if self.masks is None:
            return None
        s, start = self._locate(i)
        return np.asarray(self.masks[s][start : start + self.seq_len + 1], dtype=np.uint8)

    def _locate(self, i):
        s = int(np.searchsorted(self.offsets, i, side="right")) - 1
        return s, (i - int(self.offsets[s])) * self.seq_len


def _map(prefix):
    dtype = shard_dtype(prefix)
    try:
        return np.memmap(prefix + ".bin", dtype=dtype, mode="r")
    except (OSError, ValueError) as e:
        raise DataError(f"cannot map {prefix}.bin: {e}") from e


def _mask(prefix, tokens, shard):
    """A loss mask, checked to be uint8 and as long as its shard."""
    if shard_dtype(prefix) != np.uint8:
        raise DataError(f"{prefix}.idx is not a loss mask: its values are not uint8")
    mask = _map(prefix)
    if len(mask) != tokens:
        raise DataError(f"{prefix}.bin holds {len(mask)} mask values for the {tokens} tokens of {shard}.bin; prepare the data again")
    return mask


def inputs_and_labels(tokens, mask=None):
    """The inputs and next-token labels of (B, seq_len+1) samples; a label
    whose token the mask leaves out is IGNORE."""
    inputs, labels = tokens[:, :-1].contiguous(), tokens[:, 1:].clone()
    if mask is not None:
        labels[mask[:, 1:] == 0] = IGNORE
    return inputs, labels


class Batches:
    """The global batch of each step in a seeded order; a data-parallel rank
    takes its contiguous slice of it."""

    def __init__(self, shards: TokenShards, global_batch, seed):
        self.shards = shards
        self.global_batch = global_batch
        self.seed = seed
        self._orders = {}

    def _order(self, epoch):
        if epoch not in self._orders:
            if len(self._orders) >= 2:  # a step spans at most two epochs
                self._orders.pop(min(self._orders))
            self._orders[epoch] = np.random.default_rng([self.seed, epoch]).permutation(self.shards.samples)
        return self._orders[epoch]

    def indices(self, step):
        out = []
        for k in range(step * self.global_batch, (step + 1) * self.global_batch):
            epoch, pos = divmod(k, self.shards.samples)
            out.append(int(self._order(epoch)[pos]))
        return out

    def local(self, step, dp_rank, dp):
        """The (global_batch/dp, seq_len+1) tokens rank dp_rank trains on at step."""
        return torch.from_numpy(np.stack([self.shards.sample(i) for i in self._local(step, dp_rank, dp)]))

    def local_mask(self, step, dp_rank, dp):
        """The loss masks of local's samples, or None without masks."""
        if self.shards.masks is None:
            return None
        return torch.from_numpy(np.stack([self.shards.sample_mask(i) for i in self._local(step, dp_rank, dp)]))

    def _local(self, step, dp_rank, dp):
        per = self.global_batch // dp
        return self.indices(step)[dp_rank * per : (dp_rank + 1) * per]

    def epochs(self, steps):
        return steps * self.global_batch / self.shards.samples


class InOrder:
    """Validation batches: global batch b holds samples b*global_batch
    onwards in file order, the same at every validation. There are at most
    as many batches as cover the set once; the last wraps round to the
    first samples where the set does not fill it."""

    def __init__(self, shards: TokenShards, global_batch, batches):
        self.shards = shards
        self.global_batch = global_batch
        self.batches = max(1, min(batches, -(-shards.samples // global_batch)))

    def local(self, batch, dp_rank, dp):
        """The (global_batch/dp, seq_len+1) tokens rank dp_rank validates on
        in batch `batch`."""
        per = self.global_batch // dp
        first = batch * self.global_batch + dp_rank * per
        return torch.from_numpy(np.stack([self.shards.sample((first + k) % self.shards.samples) for k in range(per)]))
