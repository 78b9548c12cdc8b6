package bpe

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// hfNormalizer is a tokenizer.json normalizer.
type hfNormalizer struct {
	Type        string          `json:"type"`
	Normalizers []*hfNormalizer `json:"normalizers"`
	Prepend     string          `json:"prepend"`
	Pattern     hfPattern       `json:"pattern"`
	Content     string          `json:"content"`
}

// build returns the normalizer as a function, or nil where it does nothing.
// Byte-level vocabularies take only Unicode normalization (Qwen2's NFC);
// SentencePiece-style ones also Prepend and Replace of a string.
func (n *hfNormalizer) build(byteLevel bool) (func(string, bool) string, error) {
	if n == nil {
		return nil, nil
	}
	switch n.Type {
	case "Sequence":
		var steps []func(string, bool) string
		for _, c := range n.Normalizers {
			step, err := c.build(byteLevel)
			if err != nil {
				return nil, err
			}
			steps = append(steps, step)
		}
		return chain(steps...), nil
	case "NFC":
		return func(s string, _ bool) string { return norm.NFC.String(s) }, nil
	case "Prepend":
		if !byteLevel && n.Prepend != "" {
			prefix := n.Prepend
			return func(s string, _ bool) string {
				if s == "" {
					return s
				}
				return prefix + s
			}, nil
		}
	case "Replace":
		if !byteLevel && n.Pattern.String != nil && *n.Pattern.String != "" {
			old, content := *n.Pattern.String, n.Content
			return func(s string, _ bool) string { return strings.ReplaceAll(s, old, content) }, nil
		}
	}
	return nil, fmt.Errorf("%s is not supported%s", n.describe(), n.supportedHint(byteLevel))
}

func (n *hfNormalizer) describe() string {
	if n.Type == "Replace" && n.Pattern.Regex != nil {
		return "Replace of a Regex"
	}
	return n.Type
}

func (n *hfNormalizer) supportedHint(byteLevel bool) string {
	if byteLevel {
		return " by byte-level BPE here; NFC, alone or in a Sequence, is"
	}
	return "; NFC, Prepend and Replace of a String, alone or in a Sequence, are"
}

// chain runs the non-nil steps in order; nil where there are none.
func chain(steps ...func(string, bool) string) func(string, bool) string {
	var live []func(string, bool) string
	for _, s := range steps {
		if s != nil {
			live = append(live, s)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return func(s string, atStart bool) string {
		for _, step := range live {
			s = step(s, atStart)
		}
		return s
	}
}

// hfPostProcess is a tokenizer.json post-processor: ByteLevel (which only
// adjusts offsets), TemplateProcessing (special tokens around the text), or
// a Sequence of them, as Llama 3.1 writes it.
type hfPostProcess struct {
	Type       string           `json:"type"`
	Processors []*hfPostProcess `json:"processors"`
	Single     []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	} `json:"single"`
}

// template returns the special tokens that encoding one text puts before
// and after it, "" for none.
func (p *hfPostProcess) template() (before, after string, err error) {
	if p == nil {
		return "", "", nil
	}
	switch p.Type {
	case "ByteLevel":
		return "", "", nil
	case "Sequence":
		for _, c := range p.Processors {
			b, a, err := c.template()
			if err != nil {
				return "", "", err
			}
			if b != "" || a != "" {
				if before != "" || after != "" {
					return "", "", fmt.Errorf("more than one TemplateProcessing in the Sequence is not supported")
				}
				before, after = b, a
			}
		}
		return before, after, nil
	case "TemplateProcessing":
		return p.singleTemplate()
	}
	return "", "", fmt.Errorf("post-processor %s is not supported; ByteLevel and TemplateProcessing, alone or in a Sequence, are", p.Type)
}

// singleTemplate reads a template of at most one special token, the text,
// and at most one special token.
func (p *hfPostProcess) singleTemplate() (before, after string, err error) {
	seen := false
	for _, piece := range p.Single {
		switch {
		case piece.Sequence != nil && !seen:
			seen = true
		case piece.SpecialToken != nil && !seen && before == "":
			before = piece.SpecialToken.ID
		case piece.SpecialToken != nil && seen && after == "":
			after = piece.SpecialToken.ID
		default:
			return "", "", fmt.Errorf("TemplateProcessing: only [special] $A [special] is supported for a single text")
		}
	}
	if !seen {
		return "", "", fmt.Errorf("TemplateProcessing: the single template lacks the text ($A)")
	}
	return before, after, nil
}

// hfConfig is the part of a tokenizer_config.json this package reads: the
// tokens that begin and end a document.
type hfConfig struct {
	BOSToken    hfTokenName `json:"bos_token"`
	EOSToken    hfTokenName `json:"eos_token"`
	AddBOSToken *bool       `json:"add_bos_token"`
}

// hfTokenName is a token given by its text or as an AddedToken object.
type hfTokenName string

func (n *hfTokenName) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != nil {
			*n = hfTokenName(*s)
		}
		return nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("want a token's text or an object with its content: %w", err)
	}
	*n = hfTokenName(obj.Content)
	return nil
}

// specials picks a document's BOS and EOS: the post-processor's BOS (what
// encode adds), else the config's where it adds one; the config's EOS, else
// the post-processor's. Names missing from the vocabulary are dropped.
func (c hfConfig) specials(bos, eos string, known map[string]uint32) (string, string) {
	has := func(name hfTokenName) bool { _, ok := known[string(name)]; return name != "" && ok }
	if bos == "" && c.AddBOSToken != nil && *c.AddBOSToken && has(c.BOSToken) {
		bos = string(c.BOSToken)
	}
	if has(c.EOSToken) {
		eos = string(c.EOSToken)
	}
	return bos, eos
}
