package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/dataprep/chat"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
	"github.com/gpuflow/gpuflow/plugins/dataprep/shard"
)

// chatTemplate writes each turn as "role: content" ending in the EOS; its
// generation prompt is "assistant:". It refuses tool turns, as templates
// refuse what they cannot write.
const chatTemplate = `{% for m in messages %}{% if m.role == "tool" %}{{ raise_exception("tool turns are not supported") }}{% endif %}{{ m.role }}: {{ m.content }}{{ eos_token }}
{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}`

func chatConfig(t *testing.T, files []string, out, trainOn string) Config {
	t.Helper()
	tmpl, err := chat.Compile(chatTemplate, "", "<|endoftext|>")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, files, out)
	cfg.Decoder = input.NewChatDecoder()
	cfg.Chat = &Chat{Template: tmpl, TrainOn: trainOn, TemplateID: "test"}
	cfg.Splits = map[string]float64{"train": 1}
	cfg.Shuffle = false
	cfg.EOS = "<|endofprompt|>"
	return cfg
}

var chatRecords = []string{
	`{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"},{"role":"user","content":"Bye"},{"role":"assistant","content":"See you."}]}`,
	`{"conversations":[{"from":"human","value":"Name a prime."},{"from":"gpt","value":"7"}]}`,
}

// TestChatMasks checks what each train_on marks, read back from the mask
// shards beside the token shards: the megatron mask has the token shard's
// document sizes, and the documents' tokens stand back to back with the
// EOS after each, trained when the reply before it is.
func TestChatMasks(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		trainOn       string
		trained, rest string
	}{
		"assistant": {chat.TrainAssistant,
			" Hello!<|endoftext|>\n See you.<|endoftext|>\n<|endofprompt|> 7<|endoftext|>\n<|endofprompt|>",
			"user: Hi<|endoftext|>\nassistant:user: Bye<|endoftext|>\nassistant:user: Name a prime.<|endoftext|>\nassistant:"},
		"last_assistant": {chat.TrainLastAssistant,
			" See you.<|endoftext|>\n<|endofprompt|> 7<|endoftext|>\n<|endofprompt|>",
			"user: Hi<|endoftext|>\nassistant: Hello!<|endoftext|>\nuser: Bye<|endoftext|>\nassistant:user: Name a prime.<|endoftext|>\nassistant:"},
		"all": {chat.TrainAll,
			"user: Hi<|endoftext|>\nassistant: Hello!<|endoftext|>\nuser: Bye<|endoftext|>\nassistant: See you.<|endoftext|>\n<|endofprompt|>user: Name a prime.<|endoftext|>\nassistant: 7<|endoftext|>\n<|endofprompt|>", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "chat.jsonl")
			os.WriteFile(path, []byte(strings.Join(chatRecords, "\n")), 0o644)
			cfg := chatConfig(t, []string{path}, filepath.Join(dir, "out"), tc.trainOn)
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			split := res.Splits["train"]
			if len(split.Masks) != 1 || split.Masks[0] != split.Megatron[0]+MaskSuffix {
				t.Fatalf("masks %v beside shards %v, want one at PREFIX%s", split.Masks, split.Megatron, MaskSuffix)
			}
			tokens, err := shard.ReadMegatron(split.Megatron[0])
			if err != nil {
				t.Fatal(err)
			}
			masks, err := shard.ReadMegatron(split.Masks[0])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tokens.Sizes, masks.Sizes); diff != "" {
				t.Fatalf("mask sizes differ from token sizes (-tokens +masks):\n%s", diff)
			}
			npyMask, _, err := shard.ReadNpy(filepath.Join(cfg.OutputDir, "train_00000"+NpyMaskSuffix))
			if err != nil {
				t.Fatal(err)
			}
			var trained, rest []uint32
			var mask []uint32
			for k := range tokens.Documents() {
				m := masks.Document(k)
				mask = append(mask, m...)
				for j, id := range tokens.Document(k) {
					if m[j] == 1 {
						trained = append(trained, id)
					} else {
						rest = append(rest, id)
					}
				}
			}
			if diff := cmp.Diff(mask, npyMask); diff != "" {
				t.Errorf("npy mask differs from megatron mask (-megatron +npy):\n%s", diff)
			}
			if res.TrainedTokens != int64(len(trained)) {
				t.Errorf("TrainedTokens = %d, the masks mark %d", res.TrainedTokens, len(trained))
			}
			for _, part := range []struct {
				ids  []uint32
				want string
			}{{trained, tc.trained}, {rest, tc.rest}} {
				got, err := cfg.Tokenizer.Decode(part.ids)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(part.want, string(got)); diff != "" {
					t.Errorf("tokens (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestChatBadRecords(t *testing.T) {
	t.Parallel()
	good := chatRecords[1]
	tests := map[string]struct {
		lines   []string
		trainOn string
		skip    bool
		wantErr string
		skipped int64
	}{
		"no messages":       {lines: []string{good, `{"text": "hi"}`}, wantErr: `chat.jsonl:2: no "messages" or "conversations" list`},
		"unknown role":      {lines: []string{`{"messages":[{"role":"robot","content":"x"}]}`}, wantErr: `chat.jsonl:1: messages[0]: unknown role "robot"`},
		"unknown speaker":   {lines: []string{good, good, `{"conversations":[{"from":"bot","value":"x"}]}`}, wantErr: `chat.jsonl:3: conversations[0]: unknown speaker "bot"`},
		"no assistant":      {lines: []string{`{"messages":[{"role":"user","content":"x"}]}`}, wantErr: "chat.jsonl:1: no assistant message to train on"},
		"no assistant, all": {lines: []string{`{"messages":[{"role":"user","content":"x"}]}`}, trainOn: chat.TrainAll},
		"template error":    {lines: []string{`{"messages":[{"role":"user","content":"x"},{"role":"tool","content":"y"}]}`}, wantErr: "chat.jsonl:1: the chat template refuses the record: tool turns are not supported"},
		"skipped":           {lines: []string{good, `{"text": "hi"}`, `{"messages":[{"role":"user","content":"x"}]}`, good}, skip: true, skipped: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "chat.jsonl")
			os.WriteFile(path, []byte(strings.Join(tc.lines, "\n")), 0o644)
			trainOn := tc.trainOn
			if trainOn == "" {
				trainOn = chat.TrainAssistant
			}
			cfg := chatConfig(t, []string{path}, filepath.Join(dir, "out"), trainOn)
			cfg.SkipErrors = tc.skip
			res, err := Run(context.Background(), cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Skipped != tc.skipped {
				t.Errorf("skipped %d, want %d", res.Skipped, tc.skipped)
			}
		})
	}
}
