// gen.js writes the test vocabularies and the golden encodings of the bpe
// package: the reference ids come from tiktoken's Rust core (the tiktoken npm
// package, compiled to WebAssembly) and from Hugging Face tokenizers' Rust
// core (native Node binding). Run it through regen.sh, which installs them.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const crypto = require('crypto');

const modules = process.argv[2];
const here = __dirname;
const vocabDir = path.join(here, '..', 'vocab');

// The published sha256 of each rank file, as tiktoken checks it on download.
const rankFiles = {
  r50k_base: '306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930',
  cl100k_base: '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7',
  o200k_base: '446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d',
};

// The npm package stores ranks as "prefix offset token token ..." lines;
// rewrite them as the "token rank" lines of the published .tiktoken file.
function writeRankFile(name) {
  const src = path.join(modules, 'tiktoken', 'encoders', name + '.json');
  const data = JSON.parse(fs.readFileSync(src, 'utf8'));
  const lines = [];
  for (const line of data.bpe_ranks.split('\n')) {
    if (!line) continue;
    const parts = line.split(' ');
    const offset = parseInt(parts[1], 10);
    parts.slice(2).forEach((tok, k) => lines.push(tok + ' ' + (offset + k)));
  }
  const text = lines.join('\n') + '\n';
  const sum = crypto.createHash('sha256').update(text).digest('hex');
  if (sum !== rankFiles[name]) throw new Error(name + ': sha256 ' + sum + ' is not the published ' + rankFiles[name]);
  fs.writeFileSync(path.join(vocabDir, name + '.tiktoken.gz'), zlib.gzipSync(text, { level: 9 }));
}

function writeHFFile() {
  const src = path.join(modules, '@lenml', 'tokenizer-gpt4o', 'models', 'tokenizer.json');
  fs.writeFileSync(path.join(vocabDir, 'gpt4o.tokenizer.json.gz'), zlib.gzipSync(fs.readFileSync(src), { level: 9 }));
  fs.copyFileSync(path.join(modules, '@lenml', 'tokenizer-gpt4o', 'LICENSE'), path.join(vocabDir, 'LICENSE-gpt4o.tokenizer.json'));
  return src;
}

// A small seeded generator, so the random part of the corpus is stable.
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

// Fragments the random texts are built from: every class the patterns tell
// apart, and the boundaries between them.
const fragments = [
  ' ', '  ', '\t', '\n', '\r\n', '\r', '\u00a0', '\u3000', '\u2028', '\u0085', '\ufeff', '\u200b',
  'a', 'Z', 'word', 'Word', 'WORD', 'wORD', 'CamelCase', 'HTTPServer', 'é', 'e\u0301', '\u0301', 'ǅ', 'ʰ', 'ß', 'İ', 'ſ',
  "'", "'s", "'S", "'ll", "'LL", "'re", "'Ve", "'d", "'m", "'t", "'ſ", "'x", '"',
  '0', '7', '42', '1234567', '3.14', '٣٤٥', '²', '½', 'Ⅻ', '१२',
  '.', ',', '!?', '...', '-', '/', '//', '\\', '(', ')', '{', '}', '[', ']', '<', '>', '=', '==', '->', '#', '@', '$', '%', '&&', '_', '__init__', '`',
  '😀', '👍🏽', '👨‍👩‍👧', '🇫🇷', '❤️', '™', '€', '∑',
  '中文', '日本語', 'ひらがな', 'カタカナ', '한국어', 'ไทย', 'हिन्दी', 'العربية', 'עברית', 'Ελληνικά', 'Русский',
  '<|endoftext|>', '<|endofprompt|>', '<|fim_prefix|>', '<|endoftext', '<|', '|>',
];

const handWritten = [
  '',
  'Hello, world!',
  "I'm sure you'll see it's the dog's bone, isn't it? We've, they'd, I'D, YOU'LL, SHE'S.",
  'The quick brown fox jumps over the lazy dog.\n\nThe end.  ',
  '   leading spaces and trailing spaces   ',
  'tabs\tand\t\tmore\t\t\ttabs\n\twith indentation\n',
  'Windows\r\nline\r\nendings\r\n\r\n',
  'Numbers: 1 12 123 1234 12345 123456 1234567890 3.14159 1,000,000 -42 +7 1e10 0x1F',
  'Unicode café naïve résumé Straße İstanbul Ελληνικά Русский язык',
  'Combining: e\u0301 a\u0308 n\u0303 and precomposed é ä ñ',
  '中文分词测试：这是一个句子。日本語のテキストです。한국어 문장입니다.',
  'Emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷🇩🇪 ❤️‍🔥 done',
  'def main():\n    x = [i * 2 for i in range(10)]\n    print(f"{x!r}")\n    return 0\n',
  'func (e *Encoder) Encode(dst []uint32, text string) []uint32 {\n\treturn dst\n}\n',
  '{"key": "value", "list": [1, 2, 3], "nested": {"a": null, "b": true}}',
  '<html><body class="main"><p>Hello &amp; welcome</p></body></html>',
  'https://example.com/path/to/page?query=1&other=two#frag //comment /* block */',
  'Special tokens: <|endoftext|> between <|endofprompt|> and <|fim_prefix|><|fim_middle|><|fim_suffix|> text.',
  'Half special <|endoftext and <| endoftext |> and <|endoftext|><|endoftext|>',
  'CamelCaseWords HTTPServer iPhone McDonald\'s ALLCAPS lowercase MiXeD',
  'Whitespace runs:' + ' '.repeat(300) + 'end',
  '\n'.repeat(50) + 'x' + '\t \n'.repeat(40),
  'a'.repeat(700),
  'Long base64: ' + Buffer.from(Array.from({ length: 900 }, (_, k) => (k * 37) % 256)).toString('base64'),
  'Marks alone \u0301\u0302 and after space \u0301 and Hindi हिन्दी नमस्ते and Thai สวัสดีครับ',
  'Arabic العربية ٣٤٥ and Hebrew עברית with numbers 123',
  'Modifier letters ʰʲ and titlecase ǅungla ǈ and long s ſ, \'ſ, \'S',
  'Other spaces:\u00a0\u2002\u3000\u202f end\u2028next\u2029para\u0085nel\ufeffbom',
  'Fractions ½ ¾ superscripts x² y³ roman Ⅻ circled ① ②',
  "quotes 'single' \"double\" `back` 'tis '90s rock'n'roll",
  '...!!!???;;;:::---___***',
  '  \n  \n\n   x   \r\n\t y',
];

function corpus() {
  const next = rng(20240607);
  const texts = handWritten.slice();
  for (let n = 0; n < 400; n++) {
    const len = 1 + Math.floor(next() * 24);
    let s = '';
    for (let k = 0; k < len; k++) s += fragments[Math.floor(next() * fragments.length)];
    texts.push(s);
  }
  return texts;
}

function writeJSON(name, value) {
  fs.writeFileSync(path.join(here, name), JSON.stringify(value, null, 0).replace(/\],\[/g, '],\n[') + '\n');
}

async function main() {
  fs.mkdirSync(vocabDir, { recursive: true });
  Object.keys(rankFiles).forEach(writeRankFile);
  const hfPath = writeHFFile();
  const texts = corpus();
  writeJSON('corpus.json', texts);

  const { get_encoding } = require(path.join(modules, 'tiktoken'));
  for (const name of Object.keys(rankFiles)) {
    const enc = get_encoding(name);
    writeJSON(name + '.ordinary.json', texts.map((t) => Array.from(enc.encode_ordinary(t))));
    writeJSON(name + '.special.json', texts.map((t) => Array.from(enc.encode(t, 'all'))));
    enc.free();
  }

  const hf = require(path.join(modules, '@anush008', 'tokenizers-linux-x64-gnu'));
  const tok = hf.Tokenizer.fromFile(hfPath);
  const ids = [];
  for (const t of texts) ids.push(Array.from((await tok.encode(t, null, { addSpecialTokens: false })).getIds()));
  writeJSON('gpt4o.hf.json', ids);
}

main().catch((e) => { console.error(e); process.exit(1); });
