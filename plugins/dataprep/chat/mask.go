package chat

import (
	"fmt"
	"strings"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
)

// What the loss is computed on: every assistant message (as Axolotl's
// train_on_inputs = false and TRL's assistant_only_loss), only the last
// one, or the whole render.
const (
	TrainAssistant     = "assistant"
	TrainLastAssistant = "last_assistant"
	TrainAll           = "all"
)

// Span is a stretch of rendered text and whether the loss is computed on it.
type Span struct {
	Text  string
	Train bool
}

// Spans renders c and cuts the text into stretches: each assistant
// message's own bytes (after the generation prompt that precedes it, up to
// and with its end-of-turn text) are trained, the rest is not. With
// TrainLastAssistant only the last assistant message's bytes are trained;
// with TrainAll the whole render is one trained span.
func (t *Template) Spans(c *Conversation, trainOn string) ([]Span, error) {
	full, err := t.Render(c, len(c.Messages), false)
	if err != nil {
		return nil, err
	}
	if trainOn == TrainAll {
		return []Span{{Text: full, Train: true}}, nil
	}
	last := -1
	for i, m := range c.Messages {
		if m["role"] == RoleAssistant {
			last = i
		}
	}
	var spans []Span
	done := 0
	for i, m := range c.Messages {
		// With TrainLastAssistant the earlier replies are untrained
		// text like the prompts around them: no need to find them.
		if m["role"] != RoleAssistant || trainOn == TrainLastAssistant && i != last {
			continue
		}
		prompt, err := t.Render(c, i, true)
		if err != nil {
			return nil, err
		}
		reply := full // the last message's reply is the whole render
		if i+1 < len(c.Messages) {
			if reply, err = t.Render(c, i+1, false); err != nil {
				return nil, err
			}
		}
		switch {
		case !strings.HasPrefix(reply, prompt) || len(prompt) < done:
			return nil, fmt.Errorf("messages[%d]: the template renders the turns before this assistant message differently once it follows, so its span cannot be found; use train_on = %q", i, TrainAll)
		case !strings.HasPrefix(full, reply):
			return nil, fmt.Errorf("messages[%d]: the template renders this assistant message differently when later turns follow, so its span cannot be found; use train_on = %q", i, TrainAll)
		}
		if len(prompt) > done {
			spans = append(spans, Span{Text: full[done:len(prompt)]})
		}
		if len(reply) > len(prompt) {
			spans = append(spans, Span{Text: full[len(prompt):len(reply)], Train: true})
		}
		done = len(reply)
	}
	if done < len(full) {
		spans = append(spans, Span{Text: full[done:]})
	}
	return spans, nil
}

// Encode tokenizes the text of spans, special-token text becoming special
// tokens, and appends to ids and mask (1 for a trained token, 0 otherwise).
// The whole text is encoded at once, so the tokens are those of the plain
// render. Where a span starts is found by encoding the text before it: the
// tokens both encodings share lie before the span, the rest at or after it.
// A token that straddles a span's start is therefore in the span, one that
// straddles its end is not.
func Encode(enc *bpe.Encoder, spans []Span, ids []uint32, mask []uint8) ([]uint32, []uint8) {
	var text strings.Builder
	for _, s := range spans {
		text.WriteString(s.Text)
	}
	whole := enc.EncodeSpecial(nil, text.String())
	var prefix []uint32
	at, from := 0, 0
	for k, s := range spans {
		at += len(s.Text)
		if k < len(spans)-1 && spans[k+1].Train == s.Train {
			// The mask goes on unchanged: no start to find here, and
			// finding one costs an encoding of the text before it.
			continue
		}
		to := len(whole)
		if k < len(spans)-1 {
			prefix = enc.EncodeSpecial(prefix[:0], text.String()[:at])
			to = max(from, sharedPrefix(prefix, whole))
		}
		var m uint8
		if s.Train {
			m = 1
		}
		for range to - from {
			mask = append(mask, m)
		}
		from = to
	}
	return append(ids, whole...), mask
}

// sharedPrefix is the number of leading ids a and b have in common.
func sharedPrefix(a, b []uint32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
