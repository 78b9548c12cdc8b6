package chat

import (
	"fmt"
	"strings"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
)

// What the loss is computed on.
const (
	TrainAssistant = "assistant"
	TrainAll       = "all"
)

// Span is a stretch of rendered text and whether the loss is computed on it.
type Span struct {
	Text  string
	Train bool
}

// Spans renders c and cuts the text into stretches: each assistant
// message's own bytes (after the generation prompt that precedes it, up to
// and with its end-of-turn text) are trained, the rest is not. With
// TrainAll the whole render is one trained span.
func (t *Template) Spans(c *Conversation, trainOn string) ([]Span, error) {
	full, err := t.Render(c, len(c.Messages), false)
	if err != nil {
		return nil, err
	}
	if trainOn == TrainAll {
		return []Span{{Text: full, Train: true}}, nil
	}
	var spans []Span
	done := 0
	for i, m := range c.Messages {
		if m["role"] != RoleAssistant {
			continue
		}
		prompt, err := t.Render(c, i, true)
		if err != nil {
			return nil, err
		}
		reply, err := t.Render(c, i+1, false)
		if err != nil {
			return nil, err
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
// render; a token with any byte in a trained span is trained. Tokenizers
// whose tokens do not spell the text byte for byte (those that normalize
// spaces) encode each span on its own instead, which can differ from the
// whole render's tokens where a span boundary falls inside a word.
func Encode(tok *bpe.Tokenizer, enc *bpe.Encoder, spans []Span, ids []uint32, mask []uint8) ([]uint32, []uint8, error) {
	var text strings.Builder
	for _, s := range spans {
		text.WriteString(s.Text)
	}
	n := len(ids)
	ids = enc.EncodeSpecial(ids, text.String())
	ends, err := tokenEnds(tok, ids[n:], text.Len())
	if err != nil {
		return nil, nil, err
	}
	if ends == nil {
		return encodeSpanwise(enc, spans, ids[:n], mask)
	}
	// Each token is matched against the spans it overlaps; both run
	// forward, so this is one pass.
	k, spanStart, start := 0, 0, 0
	for _, end := range ends {
		var m uint8
		for j, at := k, spanStart; j < len(spans) && at < end; j++ {
			if spans[j].Train && at+len(spans[j].Text) > start && len(spans[j].Text) > 0 {
				m = 1
			}
			at += len(spans[j].Text)
		}
		mask = append(mask, m)
		for k < len(spans) && spanStart+len(spans[k].Text) <= end {
			spanStart += len(spans[k].Text)
			k++
		}
		start = end
	}
	return ids, mask, nil
}

// tokenEnds returns the byte offset in the text where each token ends, or
// nil when the tokens do not spell the text's length.
func tokenEnds(tok *bpe.Tokenizer, ids []uint32, textLen int) ([]int, error) {
	ends := make([]int, len(ids))
	end := 0
	for k, id := range ids {
		b, err := tok.Decode([]uint32{id})
		if err != nil {
			return nil, err
		}
		end += len(b)
		ends[k] = end
	}
	if end != textLen {
		return nil, nil
	}
	return ends, nil
}

func encodeSpanwise(enc *bpe.Encoder, spans []Span, ids []uint32, mask []uint8) ([]uint32, []uint8, error) {
	for k, s := range spans {
		n := len(ids)
		ids = enc.EncodeSpecialPart(ids, s.Text, k == 0)
		var m uint8
		if s.Train {
			m = 1
		}
		for range len(ids) - n {
			mask = append(mask, m)
		}
	}
	return ids, mask, nil
}
