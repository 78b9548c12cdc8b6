package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
)

// question is one line of a multiple_choice file.
type question struct {
	Context string   `json:"context"`
	Choices []string `json:"choices"`
	Label   *int     `json:"label"`
}

// promptRecord is one line of a prompts file: its fields, kept to be
// written back beside the completion, and the prompt.
type promptRecord struct {
	fields map[string]json.RawMessage
	prompt string
}

// tokenize reads the questions and prompts and writes them as tokens for
// the evaluator.
func (r *evalRun) tokenize(runDir string) api.Diagnostics {
	if r.questionsPath == "" && r.promptsPath == "" {
		return nil
	}
	tok, err := bpe.Open(r.tokenizer.path, r.tokenizer.kind, r.tokenizer.encoding)
	if err != nil {
		return api.Diagnostics{{Severity: api.Error, Summary: "Cannot read the tokenizer", Path: cty.GetAttrPath("tokenizer"), Detail: err.Error() + "."}}
	}
	enc := tok.NewEncoder()
	seq := r.cfg.Model.SeqLen
	if r.questionsPath != "" {
		at := cty.GetAttrPath("multiple_choice").GetAttr("path")
		if r.questions, err = readQuestions(r.questionsPath); err != nil {
			return api.Diagnostics{{Severity: api.Error, Summary: "Unreadable questions", Path: at, Detail: err.Error() + "."}}
		}
		if err := writeQuestions(r.cfg.Choices.Questions, enc, r.questions, r.questionsPath, seq); err != nil {
			return api.Diagnostics{{Severity: api.Error, Summary: "Unusable questions", Path: at, Detail: err.Error() + "."}}
		}
	}
	if r.promptsPath != "" {
		at := cty.GetAttrPath("generate").GetAttr("prompts")
		if r.prompts, err = readPrompts(r.promptsPath); err != nil {
			return api.Diagnostics{{Severity: api.Error, Summary: "Unreadable prompts", Path: at, Detail: err.Error() + "."}}
		}
		if err := writePrompts(r.cfg.Generate.Prompts, enc, r.prompts); err != nil {
			return api.Diagnostics{ioDiagnostic("Cannot write the prompts' tokens", err)}
		}
		if id, ok := tok.SpecialID(tok.DefaultEOS()); ok && tok.DefaultEOS() != "" {
			r.cfg.Generate.Stop = []uint32{id}
		}
	}
	r.decoder = tok
	return nil
}

// eachLine calls fn with every non-blank line of a JSONL file and its
// number; fn's error is reported at path:line.
func eachLine(path string, fn func(line []byte, n int) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := fn(sc.Bytes(), n); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

func readQuestions(path string) ([]question, error) {
	var out []question
	err := eachLine(path, func(line []byte, _ int) error {
		var q question
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return fmt.Errorf(`not a question {"context": "...", "choices": ["...", ...], "label": INDEX}: %w`, err)
		}
		switch {
		case len(q.Choices) < 2:
			return fmt.Errorf("a question needs at least two choices, this one has %d", len(q.Choices))
		case q.Label == nil || *q.Label < 0 || *q.Label >= len(q.Choices):
			return fmt.Errorf("label must be the index of the right choice, 0 to %d", len(q.Choices)-1)
		}
		out = append(out, q)
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s holds no questions", path)
	}
	return out, err
}

func readPrompts(path string) ([]promptRecord, error) {
	var out []promptRecord
	err := eachLine(path, func(line []byte, _ int) error {
		var p promptRecord
		if err := json.Unmarshal(line, &p.fields); err != nil {
			return fmt.Errorf(`not a prompt {"prompt": "..."}: %w`, err)
		}
		if err := json.Unmarshal(p.fields["prompt"], &p.prompt); err != nil || p.prompt == "" {
			return fmt.Errorf(`a line needs "prompt", a string that is not empty`)
		}
		out = append(out, p)
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s holds no prompts", path)
	}
	return out, err
}

// encodePair tokenizes a context and one choice as lm-evaluation-harness
// does: the context's trailing spaces move to the choice, the two are
// encoded whole, and the choice's tokens are what follows the context's
// own encoding, so a token that spans the seam counts as the choice's.
func encodePair(enc *bpe.Encoder, context, choice string) (ctx, cont []uint32) {
	trimmed := strings.TrimRightFunc(context, unicode.IsSpace)
	choice, context = context[len(trimmed):]+choice, trimmed
	ctx = enc.Encode(nil, context)
	whole := enc.Encode(nil, context+choice)
	if len(whole) < len(ctx) {
		return ctx, nil
	}
	return ctx, whole[len(ctx):]
}

// writeQuestions writes each question's context and continuations as
// tokens, one JSON line each.
func writeQuestions(path string, enc *bpe.Encoder, qs []question, source string, seqLen int) error {
	var b bytes.Buffer
	for i, q := range qs {
		row := struct {
			Context       []uint32   `json:"context"`
			Continuations [][]uint32 `json:"continuations"`
		}{}
		for _, c := range q.Choices {
			ctx, cont := encodePair(enc, q.Context, c)
			switch {
			case len(ctx) == 0:
				return fmt.Errorf("%s: question %d has an empty context; every choice is scored after one", source, i+1)
			case len(cont) == 0 || len(cont) > seqLen:
				return fmt.Errorf("%s: question %d's choice %q is %d tokens; a choice is 1 to %d (the model's seq_len)", source, i+1, c, len(cont), seqLen)
			}
			row.Context = ctx
			row.Continuations = append(row.Continuations, cont)
		}
		line, _ := json.Marshal(row) // ids and lists always encode
		b.Write(append(line, '\n'))
	}
	return writeFileAtomic(path, b.Bytes())
}

func writePrompts(path string, enc *bpe.Encoder, ps []promptRecord) error {
	var b bytes.Buffer
	for _, p := range ps {
		line, _ := json.Marshal(map[string][]uint32{"tokens": enc.Encode(nil, p.prompt)})
		b.Write(append(line, '\n'))
	}
	return writeFileAtomic(path, b.Bytes())
}

// writeFileAtomic writes the whole file beside path, then renames it.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".partial"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
