package input

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"unicode/utf8"
)

// Format is how a record becomes text.
type Format string

// The record formats.
const (
	FormatJSONL    Format = "jsonl"    // a string field of a JSON object per line
	FormatTemplate Format = "template" // a JSON object per line, rendered through a template
	FormatText     Format = "text"     // a whole plain-text file
	FormatParquet  Format = "parquet"  // a string column of a Parquet file, a row per record
	FormatChat     Format = "chat"     // a conversation (messages or conversations) per JSON line or Parquet row
)

// Unit is what one record of the format is.
func (f Format) Unit() Unit {
	switch f {
	case FormatText:
		return UnitFile
	case FormatParquet:
		return UnitRow
	case FormatChat:
		return UnitConversation
	}
	return UnitLine
}

// Decoder turns records into text. It is safe for concurrent use.
type Decoder struct {
	format   Format
	field    string
	tmpl     *template.Template
	tmplText string
}

// NewJSONLDecoder reads the string field named field of each record.
func NewJSONLDecoder(field string) (*Decoder, error) {
	if field == "" {
		return nil, fmt.Errorf("text_field is empty; name the JSON field that holds the text")
	}
	return &Decoder{format: FormatJSONL, field: field}, nil
}

// NewTemplateDecoder renders each record through a Go text/template whose
// dot is the record's JSON object. A field the template uses but the record
// lacks is an error for that record, not an empty string; write an optional
// field as {{with index . "name"}}...{{end}}. Besides the
// built-in functions, the template has json (a value as compact JSON, for
// function-calling schemas) and trim (strings.TrimSpace).
func NewTemplateDecoder(text string) (*Decoder, error) {
	t, err := template.New("template").Option("missingkey=error").Funcs(template.FuncMap{
		"json": toJSON,
		"trim": strings.TrimSpace,
	}).Parse(text)
	if err != nil {
		return nil, err
	}
	return &Decoder{format: FormatTemplate, tmpl: t, tmplText: text}, nil
}

// NewChatDecoder passes each JSON line, or each Parquet row written as
// one, through, checking it is UTF-8, for the conversation it holds to be
// rendered by the model's chat template.
func NewChatDecoder() *Decoder { return &Decoder{format: FormatChat} }

// NewTextDecoder passes plain text through, checking it is UTF-8.
func NewTextDecoder() *Decoder { return &Decoder{format: FormatText} }

// NewParquetDecoder reads the string column field of Parquet files: a
// column name, or a dotted path into nested records ("meta.text").
func NewParquetDecoder(field string) (*Decoder, error) {
	if field == "" {
		return nil, fmt.Errorf("text_field is empty; name the column that holds the text")
	}
	return &Decoder{format: FormatParquet, field: field}, nil
}

// NewReader returns the Reader of files that yields this decoder's records.
func (d *Decoder) NewReader(files []string) *Reader {
	if d.format == FormatParquet {
		return NewRowReader(files, strings.Split(d.field, "."))
	}
	return NewReader(files, d.format.Unit())
}

// Key identifies what the decoder does, for fingerprints: its format and
// its field or template.
func (d *Decoder) Key() string {
	switch d.format {
	case FormatJSONL:
		return "jsonl:" + d.field
	case FormatTemplate:
		return "template:" + d.tmplText
	case FormatParquet:
		return "parquet:" + d.field
	}
	return string(d.format)
}

// Format is the decoder's record format.
func (d *Decoder) Format() Format { return d.format }

// Decode returns the text of rec, or a *RecordError.
func (d *Decoder) Decode(rec Record) (string, error) {
	if bad := invalidUTF8At(rec.Data); bad >= 0 {
		pos := rec.Pos
		pos.Line += bytes.Count(rec.Data[:bad], []byte{'\n'})
		return "", &RecordError{Pos: pos, Reason: fmt.Sprintf("not valid UTF-8 (byte 0x%02x)", rec.Data[bad])}
	}
	switch d.format {
	case FormatJSONL:
		return d.decodeField(rec)
	case FormatTemplate:
		return d.render(rec)
	}
	return string(rec.Data), nil
}

func (d *Decoder) decodeField(rec Record) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(rec.Data, &obj); err != nil {
		return "", malformed(rec.Pos, err)
	}
	raw, ok := obj[d.field]
	if !ok {
		return "", &RecordError{Pos: rec.Pos, Reason: fmt.Sprintf("no field %q%s", d.field, fieldHint(obj))}
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return "", &RecordError{Pos: rec.Pos, Reason: fmt.Sprintf("field %q is %s, want a string", d.field, jsonKind(raw))}
	}
	return text, nil
}

func (d *Decoder) render(rec Record) (string, error) {
	var obj any
	dec := json.NewDecoder(bytes.NewReader(rec.Data))
	dec.UseNumber() // render numbers as written, not as float64
	if err := dec.Decode(&obj); err != nil {
		return "", malformed(rec.Pos, err)
	}
	if dec.More() {
		return "", &RecordError{Pos: rec.Pos, Reason: "malformed JSON: more than one value on the line"}
	}
	if _, ok := obj.(map[string]any); !ok {
		return "", &RecordError{Pos: rec.Pos, Reason: fmt.Sprintf("record is %s, want a JSON object", jsonKind(rec.Data))}
	}
	var b strings.Builder
	if err := d.tmpl.Execute(&b, obj); err != nil {
		return "", &RecordError{Pos: rec.Pos, Reason: err.Error()}
	}
	return b.String(), nil
}

func malformed(pos Position, err error) *RecordError {
	return &RecordError{Pos: pos, Reason: "malformed JSON: " + err.Error()}
}

// fieldHint names the fields a record has, to point at a misspelt field.
func fieldHint(obj map[string]json.RawMessage) string {
	if len(obj) == 0 {
		return " (the record has no fields)"
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, fmt.Sprintf("%q", k))
	}
	if len(names) > 8 {
		return ""
	}
	slices.Sort(names)
	return " (the record has " + strings.Join(names, ", ") + ")"
}

func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// invalidUTF8At returns the offset of the first byte that is not valid
// UTF-8, or -1.
func invalidUTF8At(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
