// table.js prints the exactness and speed table from what exactness.sh
// left in its folder: NAME.time.json from reference.js and bench.txt from
// the Go benchmark, both in tokens per CPU-second.
'use strict';
const fs = require('fs');
const path = require('path');
const dir = process.argv[2];
const bench = fs.readFileSync(path.join(dir, 'bench.txt'), 'utf8');
console.log('| vocabulary | documents | MB | tokens (equal) | HF tokens/CPU-s | gpuflow tokens/CPU-s | ratio |');
console.log('|---|---|---|---|---|---|---|');
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.time.json')).sort()) {
  const name = f.replace('.time.json', '');
  const hf = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  const m = bench.match(new RegExp('BenchmarkReference/' + name + '\\s.*?([0-9.]+) tokens/cpu-s'));
  const hfRate = hf.tokens / hf.cpu_seconds;
  const goRate = m ? Number(m[1]) : NaN;
  const fmt = (x) => Math.round(x).toLocaleString('en-US');
  console.log(`| ${name} | ${hf.documents} | ${(hf.bytes / 1e6).toFixed(2)} | ${fmt(hf.tokens)} | ${fmt(hfRate)} | ${fmt(goRate)} | ${(goRate / hfRate).toFixed(1)}x |`);
}
