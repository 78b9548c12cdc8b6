// Package chat turns conversation records into training text with the
// model's own chat template, and marks which bytes of that text came from
// the turns the model is trained on.
//
// A record holds OpenAI-style "messages" (role, content, tool_calls) or
// ShareGPT "conversations" (from, value), and optionally "tools". The
// template is the Jinja chat_template of tokenizer_config.json or a
// chat_template.jinja file, run by gonja with the settings transformers
// uses (trim_blocks, lstrip_blocks, bos_token, eos_token,
// raise_exception, strftime_now, and a tojson that writes what Python's
// json.dumps writes), and with Python's meaning where gonja's differs
// and real templates care: x[-k] counts from the end of any list, and a
// record's objects keep their key order in tojson, items(), keys() and
// values().
//
// The trained spans are found by rendering prefixes of the conversation:
// the bytes an assistant message adds after the generation prompt of the
// turns before it are that message's. A template whose renders of a
// prefix are not a prefix of the whole render cannot be split this way,
// and the record is rejected with that reason (Qwen3's template, which
// writes a reasoning block only on the turns after the last user message,
// is one); train_on = "all" still renders it.
//
// Encode tokenizes the whole render at once, as plain text would be, and
// places each span's start by encoding the text before it, so the mask
// follows the render's own tokens.
package chat
