// corpus.js writes the mixed corpus the exactness and speed comparison runs
// on, one JSON line {"text": ...} per document: Go's own source code (real
// code), the licence texts of the system (real English), and seeded
// synthetic text of every kind a tokenizer must get right: many scripts,
// combining marks in decomposed form, emoji sequences, runes Unicode
// assigned after 15.0, whitespace runs, numbers, the replacement runes a
// decoder makes of invalid UTF-8, literal special-token text, and very long
// lines. Usage: node corpus.js OUT.jsonl MEGABYTES GOROOT
'use strict';
const fs = require('fs');
const path = require('path');

const [out, megabytes, goroot] = [process.argv[2], Number(process.argv[3] || 12), process.argv[4]];
const target = megabytes * 1e6;

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(18);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

// Real text: files under a folder, sorted, whole.
function files(dir, keep) {
  const outFiles = [];
  const walk = (d) => {
    let entries;
    try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries.sort((a, b) => a.name < b.name ? -1 : 1)) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && keep(p)) outFiles.push(p);
    }
  };
  walk(dir);
  return outFiles;
}

// Rune ranges of scripts, so that synthetic words look like words.
const scripts = [
  [0x61, 0x7a], [0x41, 0x5a], [0xe0, 0xff], [0x100, 0x17f], [0x391, 0x3c9], [0x410, 0x44f],
  [0x5d0, 0x5ea], [0x627, 0x64a], [0x905, 0x939], [0x985, 0x9b9], [0xe01, 0xe2e], [0x10d0, 0x10fa],
  [0x3041, 0x3096], [0x30a1, 0x30fa], [0x4e00, 0x9fa5], [0xac00, 0xd7a3], [0x1200, 0x1248],
  [0x20000, 0x2a6df], [0x2ebf0, 0x2ee5d], [0x31350, 0x323af], [0x1e030, 0x1e06d], [0x10d4a, 0x10d65],
];
const combining = [0x301, 0x300, 0x308, 0x303, 0x327, 0x30a, 0x323];
const emoji = ['😀', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇫🇷', '❤️', '🫠', '🧑🏿‍💻', '✈︎', '🪿'];
const spaces = [' ', '  ', '\t', '\n', '\r\n', '\n\n', '    ', '\u00a0', '\u3000', '\u2009', '\u0085', '\u200b', ' \n ', '\t\t\n'];
const punct = ['.', ',', '!', '?', ';', ':', '...', '—', '–', '«', '»', '“', '”', '(', ')', '[', ']', '{', '}', '/', '\\', '"', "'", '’', '#', '@', '&', '%', '$', '€', '¥', '。', '、', '！', '？', '...', '->', '=>', '::', '!=', '==='];
const specials = ['<|endoftext|>', '<s>', '</s>', '<|im_start|>', '<|im_end|>', '<|begin_of_text|>', '<|eot_id|>', '<bos>', '<eos>', '<unk>', '<pad>', '<0x0A>', '▁', '▁▁'];
const contractions = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", 'ſ'];

function word() {
  const [lo, hi] = pick(scripts);
  let w = '';
  const n = int(1, 9);
  for (let k = 0; k < n; k++) {
    w += String.fromCodePoint(int(lo, hi));
    if (rand() < 0.08) w += String.fromCodePoint(pick(combining));
  }
  return w;
}

function fragment() {
  const r = rand();
  if (r < 0.45) return word();
  if (r < 0.6) return pick(spaces);
  if (r < 0.7) return pick(punct);
  if (r < 0.77) return String(int(0, 10 ** int(1, 9)));
  if (r < 0.82) return pick(emoji);
  if (r < 0.86) return pick(contractions);
  if (r < 0.89) return '\ufffd'.repeat(int(1, 3));
  if (r < 0.91) return pick(specials);
  if (r < 0.94) return String.fromCodePoint(int(0x20, 0x7e)).repeat(int(1, 40));
  return pick(['e\u0301', 'A\u030a', 'n\u0303', '\u1100\u1161\u11a8', 'ﬁ', 'Å', 'Ω', '½', '²', '①', '٣', '߀']);
}

function synthetic() {
  let s = '';
  const n = int(5, 400);
  for (let k = 0; k < n; k++) s += fragment();
  return s;
}

// A very long line: a run with no break the pre-tokenizers could use.
function longLine() {
  const unit = pick(['a', 'ab', '=', '0123456789', 'ZmFrZSBkYXRh', ' ', '字', '\t', 'x1', '😀']);
  return unit.repeat(Math.ceil(int(20000, 200000) / unit.length));
}

const docs = [];
let size = 0;
const add = (text) => {
  if (text.trim() === '') return;
  docs.push(text);
  size += Buffer.byteLength(text);
};

const code = files(path.join(goroot, 'src'), (p) => p.endsWith('.go') && !p.includes('testdata'));
const prose = files('/usr/share/common-licenses', () => true);
for (const p of prose) add(fs.readFileSync(p, 'utf8'));
let codeBytes = 0;
for (let k = 0; k < code.length && codeBytes < target * 0.35; k += 7) {
  const text = fs.readFileSync(code[k], 'utf8');
  add(text);
  codeBytes += Buffer.byteLength(text);
}
for (let k = 0; k < 40; k++) add(longLine());
while (size < target) add(synthetic());

// Interleave so each part of the corpus meets each vocabulary alike.
const order = docs.map((d, k) => [rand(), k]).sort((a, b) => a[0] - b[0]).map(([, k]) => docs[k]);
fs.writeFileSync(out, order.map((text) => JSON.stringify({ text })).join('\n') + '\n');
console.log(`${order.length} documents, ${(size / 1e6).toFixed(2)} MB of text (${(codeBytes / 1e6).toFixed(2)} MB Go source) in ${out}`);
