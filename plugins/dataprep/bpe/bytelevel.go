package bpe

// byteLevelRunes is GPT-2's bytes_to_unicode table: Hugging Face byte-level
// vocabularies spell each byte of a token as this rune, so that every token
// is printable text in tokenizer.json.
var byteLevelRunes = func() [256]rune {
	var table [256]rune
	next := rune(256)
	for b := range 256 {
		printable := ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF)
		if printable {
			table[b] = rune(b)
			continue
		}
		table[b] = next
		next++
	}
	return table
}()

// byteLevelBytes inverts byteLevelRunes.
var byteLevelBytes = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	for b, r := range byteLevelRunes {
		m[r] = byte(b)
	}
	return m
}()

// decodeByteLevel turns a byte-level token spelling back into its bytes.
func decodeByteLevel(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := byteLevelBytes[r]
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}
