package chat

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
)

func TestToJSON(t *testing.T) {
	tests := map[string]struct {
		record, template, want string
	}{
		"record key order and python separators": {
			record:   `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"b":1,"a":[1.5,2,true,null]}}}]}`,
			template: `{{ tools[0] | tojson }}`,
			want:     `{"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": [1.5, 2, true, null]}}}`,
		},
		"non-ascii kept, controls escaped": {
			record:   `{"messages":[{"role":"user","content":"é \"q\" \\ \n\t\u0001 '"}]}`,
			template: `{{ messages[0].content | tojson }}`,
			want:     `"é \"q\" \\ \n\t\u0001 '"`,
		},
		"indent": {
			record:   `{"messages":[{"role":"user","content":"x"}],"tools":[{"z":[],"a":{}}]}`,
			template: `{{ tools[0] | tojson(indent=2) }}`,
			want:     "{\n  \"z\": [],\n  \"a\": {}\n}",
		},
		"sort_keys and separators": {
			record:   `{"messages":[{"role":"user","content":"x"}],"tools":[{"z":1,"a":2}]}`,
			template: `{{ tools[0] | tojson(sort_keys=true, separators=[",", ":"]) }}`,
			want:     `{"a":2,"z":1}`,
		},
		"floats as python repr": {
			record:   `{"messages":[{"role":"user","content":"x"}],"tools":[[1.0,0.1,1e-05,1e16,123456.75]]}`,
			template: `{{ tools[0] | tojson }}`,
			want:     `[1.0, 0.1, 1e-05, 1e+16, 123456.75]`,
		},
		"template dict literal keeps its order": {
			record:   `{"messages":[{"role":"user","content":"x"}]}`,
			template: `{{ {"name": "n", "arguments": {"k": "v"}} | tojson }}`,
			want:     `{"name": "n", "arguments": {"k": "v"}}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Parse([]byte(tc.record))
			if err != nil {
				t.Fatal(err)
			}
			got := renderWhole(t, tc.template, c)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tojson (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct{ record, want string }{
		"not json":         {`{"messages":`, "not a JSON object"},
		"no messages":      {`{"text":"x"}`, `no "messages" or "conversations" list`},
		"empty messages":   {`{"messages":[]}`, `"messages" is empty`},
		"missing role":     {`{"messages":[{"content":"x"}]}`, `messages[0] has no "role" string`},
		"unknown role":     {`{"messages":[{"role":"user","content":"x"},{"role":"bot","content":"y"}]}`, `messages[1]: unknown role "bot"`},
		"unknown speaker":  {`{"conversations":[{"from":"robot","value":"x"}]}`, `conversations[0]: unknown speaker "robot"`},
		"sharegpt value":   {`{"conversations":[{"from":"human"}]}`, `conversations[0] has no "value" string`},
		"tools not a list": {`{"messages":[{"role":"user","content":"x"}],"tools":{}}`, `"tools" is not a list`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.record))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%s) = %v, want an error with %q", tc.record, err, tc.want)
			}
		})
	}
}

func TestTemplateFunctions(t *testing.T) {
	c, err := Parse([]byte(`{"conversations":[{"from":"human","value":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Compile(`{{ messages[0].get("role") }}{{ messages[0].get("missing", "-") }}{{ bos_token }}{{ strftime_now("%Y") | length }}`, "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(c, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("user-<s>4", got); diff != "" {
		t.Errorf("render (-want +got):\n%s", diff)
	}
	raising, err := Compile(`{{ raise_exception("roles must alternate") }}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raising.Render(c, 1, false); err == nil || !strings.Contains(err.Error(), "roles must alternate") {
		t.Errorf("raise_exception gave %v, want the template's message", err)
	}
}

// TestPythonSemantics covers where gonja's own behaviour parts from
// Python's and real templates depend on Python's.
func TestPythonSemantics(t *testing.T) {
	c, err := Parse([]byte(`{"tools":[{"function":{"name":"f","description":"d","parameters":{"type":"object","properties":{}}}}],` +
		`"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, source, want string }{
		{"last of one item", `{{ (messages | selectattr("role", "equalto", "user") | list)[-1].content }}`, "a"},
		{"last of two", `{{ messages[-1].content }}{{ messages[-2].content }}`, "ba"},
		{"past the start", `{{ messages[-3] is defined }}`, "False"},
		{"set from the end", `{% set u = [messages[0]] %}{% set last = u[-1] %}{{ last == messages[0] }}`, "True"},
		{"items in record order", `{% for k, v in tools[0].function.items() %}{{ k }},{% endfor %}`, "name,description,parameters,"},
		{"keys and values", `{{ tools[0].function.keys() | join(",") }} {{ tools[0].function.parameters.values() | first }}`, "name,description,parameters object"},
		{"nested tojson from items", `{% for k, v in tools[0].function.items() if k == "parameters" %}{{ v | tojson }}{% endfor %}`, `{"type": "object", "properties": {}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renderWhole(t, tc.source, c)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("render (-want +got):\n%s", diff)
			}
		})
	}
}

// turnTemplate writes each turn as "role: content" and the end-of-text
// token; its generation prompt is "assistant: ".
const turnTemplate = `{% for m in messages %}{{ m.role }}: {{ m.content }}{{ eos_token }}
{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}`

func TestMask(t *testing.T) {
	tok, err := bpe.Open("../bpe/testdata/vocab/gpt4o.tokenizer.json.gz", bpe.KindHF, "")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Compile(turnTemplate, "", "<|endoftext|>")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte(`{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"},{"role":"user","content":"Bye"},{"role":"assistant","content":"See you."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		trainOn       string
		trained, rest string
	}{
		// " Hello" and " See" straddle the prompt's end and are trained.
		"assistant": {TrainAssistant, " Hello!<|endoftext|>\n See you.<|endoftext|>\n",
			"system: Be brief.<|endoftext|>\nuser: Hi<|endoftext|>\nassistant:user: Bye<|endoftext|>\nassistant:"},
		"last_assistant": {TrainLastAssistant, " See you.<|endoftext|>\n",
			"system: Be brief.<|endoftext|>\nuser: Hi<|endoftext|>\nassistant: Hello!<|endoftext|>\nuser: Bye<|endoftext|>\nassistant:"},
		"all": {TrainAll, "system: Be brief.<|endoftext|>\nuser: Hi<|endoftext|>\nassistant: Hello!<|endoftext|>\nuser: Bye<|endoftext|>\nassistant: See you.<|endoftext|>\n", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spans, err := tmpl.Spans(c, tc.trainOn)
			if err != nil {
				t.Fatal(err)
			}
			enc := tok.NewEncoder()
			ids, mask := Encode(enc, spans, nil, nil)
			if len(ids) != len(mask) {
				t.Fatalf("%d ids, %d mask entries", len(ids), len(mask))
			}
			var trained, rest []uint32
			for k, id := range ids {
				if mask[k] == 1 {
					trained = append(trained, id)
				} else {
					rest = append(rest, id)
				}
			}
			for _, part := range []struct {
				ids  []uint32
				want string
			}{{trained, tc.trained}, {rest, tc.rest}} {
				got, err := tok.Decode(part.ids)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(part.want, string(got)); diff != "" {
					t.Errorf("tokens (-want +got):\n%s", diff)
				}
			}
			full, err := tmpl.Render(c, len(c.Messages), false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(enc.EncodeSpecial(nil, full), ids); diff != "" {
				t.Errorf("span-wise ids differ from the whole render's (-whole +spans):\n%s", diff)
			}
		})
	}
}

func TestSpansRejectsUnsplittableTemplate(t *testing.T) {
	// This template numbers turns from the end, so a prefix renders
	// differently once later turns follow.
	tmpl, err := Compile(`{% for m in messages %}{{ messages|length - loop.index0 }}{{ m.content }}{% endfor %}`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte(`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Spans(c, TrainAssistant)
	if err == nil || !strings.Contains(err.Error(), `use train_on = "all"`) {
		t.Errorf("Spans = %v, want an error advising train_on = \"all\"", err)
	}
}

// renderWhole compiles source and renders the whole conversation c.
func renderWhole(t *testing.T, source string, c *Conversation) string {
	t.Helper()
	tmpl, err := Compile(source, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(c, len(c.Messages), false)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
