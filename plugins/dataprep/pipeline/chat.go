package pipeline

import (
	"errors"

	"github.com/gpuflow/gpuflow/plugins/dataprep/bpe"
	"github.com/gpuflow/gpuflow/plugins/dataprep/chat"
	"github.com/gpuflow/gpuflow/plugins/dataprep/input"
)

// Chat says how conversation records become documents with a loss mask.
type Chat struct {
	Template *chat.Template
	// TrainOn is chat.TrainAssistant, chat.TrainLastAssistant or
	// chat.TrainAll.
	TrainOn string
	// TemplateID identifies the template's source (a content hash) for
	// the manifest fingerprint.
	TemplateID string
}

func (c *Chat) key() string {
	if c == nil {
		return ""
	}
	return c.TrainOn + ":" + c.TemplateID
}

// Mask file names: a shard's loss mask sits beside it, one uint8 per token
// in the same order, 1 where the loss is computed.
const (
	MaskSuffix    = ".mask"
	NpyMaskSuffix = ".mask.npy"
)

// tokenizeChat renders the record text holds and encodes it with its mask:
// the BOS (never trained), the render (trained as the spans say), and the
// EOS, trained when the token before it is, so the model learns to stop
// after a reply it is trained on.
func (r *runner) tokenizeChat(enc *bpe.Encoder, it *item, text string) {
	fail := func(err error) { it.err = &input.RecordError{Pos: it.rec.Pos, Reason: err.Error()} }
	conv, err := chat.Parse([]byte(text))
	if err != nil {
		fail(err)
		return
	}
	spans, err := r.cfg.Chat.Template.Spans(conv, r.cfg.Chat.TrainOn)
	if err != nil {
		fail(err)
		return
	}
	if !anyTrained(spans) {
		fail(errors.New("no assistant message to train on"))
		return
	}
	doc := make([]uint32, 0, len(text)/4+len(r.bos)+len(r.eos))
	mask := make([]uint8, 0, cap(doc))
	doc = append(doc, r.bos...)
	mask = append(mask, make([]uint8, len(r.bos))...)
	doc, mask = chat.Encode(enc, spans, doc, mask)
	last := mask[len(mask)-1]
	for range r.eos {
		mask = append(mask, last)
	}
	it.doc, it.mask = append(doc, r.eos...), mask
}

func anyTrained(spans []chat.Span) bool {
	for _, s := range spans {
		if s.Train && s.Text != "" {
			return true
		}
	}
	return false
}
