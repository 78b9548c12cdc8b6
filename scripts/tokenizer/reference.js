// reference.js encodes the corpus with Hugging Face tokenizers' Node binding
// (its Rust core), once per vocabulary, timing the encoding alone, and
// writes what it produced for the Go side to compare: NAME.ids holds, per
// document, a little-endian uint32 count then the ids of encode(text) with
// special tokens added, as Hugging Face's encode does by default;
// NAME.time.json holds the timing. Usage:
//   node reference.js MODULES CORPUS.jsonl OUTDIR NAME=tokenizer.json ...
// Run it with RAYON_NUM_THREADS=1 for the figure per core.
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, corpus, outDir, ...vocabs] = process.argv.slice(2);
const { Tokenizer } = require(path.join(modules, 'tokenizers'));
const docs = fs.readFileSync(corpus, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l).text);
const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d), 0);

async function run(name, file) {
  const tok = Tokenizer.fromFile(file);
  await tok.encodeBatch(docs.slice(0, 50), { addSpecialTokens: true });
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const encs = await tok.encodeBatch(docs, { addSpecialTokens: true });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  let tokens = 0;
  const parts = [];
  for (const e of encs) {
    const ids = e.getIds();
    tokens += ids.length;
    const buf = Buffer.alloc(4 * (ids.length + 1));
    buf.writeUInt32LE(ids.length, 0);
    ids.forEach((id, k) => buf.writeUInt32LE(id, 4 * (k + 1)));
    parts.push(buf);
  }
  fs.writeFileSync(path.join(outDir, name + '.ids'), Buffer.concat(parts));
  const timing = {
    implementation: 'Hugging Face tokenizers ' + require(path.join(modules, 'tokenizers', 'package.json')).version + ' (Node binding)',
    threads: Number(process.env.RAYON_NUM_THREADS || 0), documents: docs.length, bytes, tokens,
    seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6, tokens_per_s: tokens / seconds,
  };
  fs.writeFileSync(path.join(outDir, name + '.time.json'), JSON.stringify(timing, null, 1) + '\n');
  console.log(`${name}: ${tokens} tokens in ${seconds.toFixed(2)} s, ${(tokens / seconds / 1e6).toFixed(2)} M tokens/s`);
}

(async () => {
  for (const v of vocabs) {
    const [name, file] = v.split('=');
    await run(name, file);
  }
})().catch((e) => { console.error(e); process.exit(1); });
