package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// Template is a compiled chat template with the special tokens its
// tokenizer configuration names. It is safe for concurrent use.
type Template struct {
	tmpl     *exec.Template
	BOS, EOS string
}

// Load reads the chat template of a tokenizer_config.json (its
// "chat_template", or the entry named "default" when it lists several) or
// of a .jinja file, whose bos and eos tokens are then bos and eos.
func Load(path, bos, eos string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	source := string(data)
	if filepath.Ext(path) == ".json" {
		source, bos, eos, err = fromTokenizerConfig(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	t, err := Compile(source, bos, eos)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func fromTokenizerConfig(data []byte) (source, bos, eos string, err error) {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", "", "", err
	}
	if len(cfg.ChatTemplate) == 0 || string(cfg.ChatTemplate) == "null" {
		return "", "", "", errors.New(`no "chat_template"; give the model's chat_template.jinja instead`)
	}
	if err := json.Unmarshal(cfg.ChatTemplate, &source); err != nil {
		var named []struct{ Name, Template string }
		if json.Unmarshal(cfg.ChatTemplate, &named) != nil {
			return "", "", "", errors.New(`"chat_template" is neither a string nor a list of named templates`)
		}
		for _, n := range named {
			if n.Name == "default" {
				source = n.Template
			}
		}
		if source == "" {
			return "", "", "", errors.New(`"chat_template" lists no template named "default"`)
		}
	}
	return source, specialToken(cfg.BOS), specialToken(cfg.EOS), nil
}

// specialToken reads a token given as a string or as an added-token
// object {"content": ...}; null gives "".
func specialToken(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var tok struct{ Content string }
	json.Unmarshal(raw, &tok)
	return tok.Content
}

// Compile parses a template with the settings transformers renders chat
// templates with: trim_blocks and lstrip_blocks on, raise_exception and
// strftime_now defined, and tojson as Python's json.dumps.
func Compile(source, bos, eos string) (*Template, error) {
	cfg := config.New()
	cfg.TrimBlocks = true
	cfg.LeftStripBlocks = true
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters)
	if err := filters.Replace("tojson", toJSONFilter); err != nil {
		return nil, err
	}
	if err := filters.Register(fromEndFilter, fromEndIndex); err != nil {
		return nil, err
	}
	globals := exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables)
	globals.Set("raise_exception", raiseException)
	globals.Set("strftime_now", strftimeNow)
	env := &exec.Environment{
		Context:           globals,
		Filters:           filters,
		Tests:             builtins.Tests,
		ControlStructures: builtins.ControlStructures,
		Methods: exec.Methods{
			Bool: builtins.Methods.Bool, Int: builtins.Methods.Int, Float: builtins.Methods.Float,
			Str: builtins.Methods.Str, List: builtins.Methods.List, Dict: dictMethods(),
		},
	}
	files, err := loaders.NewFileSystemLoader("")
	if err != nil {
		return nil, err
	}
	loader, err := loaders.NewShiftedLoader("chat_template", strings.NewReader(source), files)
	if err != nil {
		return nil, err
	}
	tmpl, err := exec.NewTemplate("chat_template", cfg, loader, env)
	if err != nil {
		return nil, fmt.Errorf("chat template does not parse: %w", err)
	}
	countFromEnd(tmpl.Root())
	return &Template{tmpl: tmpl, BOS: bos, EOS: eos}, nil
}

// Render renders the first n messages of c, ending with the prompt for an
// assistant reply when generationPrompt is set.
func (t *Template) Render(c *Conversation, n int, generationPrompt bool) (string, error) {
	messages := make([]any, n)
	for i := range n {
		messages[i] = c.Messages[i]
	}
	var tools any
	if c.Tools != nil {
		tools = c.Tools
	}
	ctx := exec.NewContext(map[string]any{
		"messages":              messages,
		"tools":                 tools,
		"add_generation_prompt": generationPrompt,
		"bos_token":             t.BOS,
		"eos_token":             t.EOS,
	})
	var b bytes.Buffer
	err := t.tmpl.Execute(&b, ctx)
	// The record's key order lives as long as c (see remember).
	runtime.KeepAlive(c)
	if err != nil {
		// gonja flattens errors into its call trace's text; the
		// template's own reason is what the user needs.
		if at := strings.Index(err.Error(), refusedPrefix); at >= 0 {
			return "", errors.New(err.Error()[at:])
		}
		return "", fmt.Errorf("chat template: %w", err)
	}
	return b.String(), nil
}

// refusedPrefix opens the error raise_exception raises.
const refusedPrefix = "the chat template refuses the record: "

func raiseException(_ *exec.Evaluator, params *exec.VarArgs) (any, error) {
	if len(params.Args) == 0 {
		return nil, errors.New(refusedPrefix + "(no reason given)")
	}
	return nil, errors.New(refusedPrefix + params.Args[0].String())
}

// strftimeNow formats the current local time with a Python strftime format.
func strftimeNow(_ *exec.Evaluator, params *exec.VarArgs) (any, error) {
	if len(params.Args) != 1 {
		return nil, errors.New("strftime_now takes one format string")
	}
	return strftime(time.Now(), params.Args[0].String())
}

var strftimeLayouts = map[byte]string{
	'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'B': "January", 'b': "Jan",
	'A': "Monday", 'a': "Mon", 'H': "15", 'I': "03", 'M': "04", 'S': "05",
	'p': "PM", 'Z': "MST", 'z': "-0700",
}

func strftime(now time.Time, format string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		i++
		if i == len(format) {
			return "", errors.New("strftime_now format ends in %")
		}
		switch c := format[i]; c {
		case '%':
			b.WriteByte('%')
		case 'j':
			fmt.Fprintf(&b, "%03d", now.YearDay())
		case 'e':
			fmt.Fprintf(&b, "%2d", now.Day())
		default:
			layout, ok := strftimeLayouts[c]
			if !ok {
				return "", fmt.Errorf("strftime_now does not know %%%c", c)
			}
			b.WriteString(now.Format(layout))
		}
	}
	return b.String(), nil
}
