// Prints the Jinja chat template ("gguf") of one model of
// @huggingface/ollama-utils' chat-template map.
//   node template_map.js chat-template-automap.ts library/llama3.1:8b
const fs = require("fs");

const [file, model] = process.argv.slice(2);
const src = fs.readFileSync(file, "utf8");
// The map is a TypeScript array of object literals: from its "[" on it
// is plain JavaScript.
const start = src.indexOf("[", src.indexOf("OLLAMA_CHAT_TEMPLATE_MAPPING"));
const entries = new Function("return " + src.slice(start).trim().replace(/;$/, ""))();
const entry = entries.find((e) => e.model === model);
if (!entry) {
  console.error(`${model} is not in the map; models: ${entries.map((e) => e.model).join(", ")}`);
  process.exit(1);
}
process.stdout.write(entry.gguf);
