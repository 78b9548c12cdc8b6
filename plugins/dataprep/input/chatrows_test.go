package input

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
)

type chatMessage struct {
	Role      string     `parquet:"role"`
	Content   *string    `parquet:"content,optional"`
	ToolCalls []toolCall `parquet:"tool_calls,list"`
}

type toolCall struct {
	Name      string `parquet:"name"`
	Arguments string `parquet:"arguments"`
}

type chatRow struct {
	ID       int64         `parquet:"id"`
	Messages []chatMessage `parquet:"messages,list,optional"`
	Tools    *string       `parquet:"tools,optional"`
}

type shareGPTTurn struct {
	From  string `parquet:"from"`
	Value string `parquet:"value"`
}

type shareGPTRow struct {
	Conversations []shareGPTTurn `parquet:"conversations,list"`
}

type textRow struct {
	Messages string `parquet:"messages"`
}

func text(s string) *string { return &s }

func TestParquetChats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openai := filepath.Join(dir, "openai.parquet")
	writeParquet(t, openai, []chatRow{
		{ID: 1, Messages: []chatMessage{{Role: "user", Content: text("Hi <b>&</b> \"you\"")}, {Role: "assistant", Content: text("Hello.")}}},
		{ID: 2, Messages: []chatMessage{{Role: "user", Content: text("2+2?")}, {Role: "assistant", ToolCalls: []toolCall{{Name: "add", Arguments: `{"a":2,"b":2}`}}}},
			Tools: text(`[{"type":"function","function":{"name":"add"}}]`)},
		{ID: 3},
		{ID: 4, Messages: []chatMessage{{Role: "user", Content: text("x")}}, Tools: text("not json")},
	}, 2)
	sharegpt := filepath.Join(dir, "sharegpt.parquet")
	writeParquet(t, sharegpt, []shareGPTRow{{Conversations: []shareGPTTurn{{"human", "Name a prime."}, {"gpt", "7"}}}}, 10)
	noColumn := filepath.Join(dir, "flat.parquet")
	writeParquet(t, noColumn, flatRows("a"), 10)
	notList := filepath.Join(dir, "text.parquet")
	writeParquet(t, notList, []textRow{{Messages: "hi"}}, 10)
	notParquet := writeFile(t, dir, "chat.parquet", "this is not parquet\n")
	jsonl := writeFile(t, dir, "more.jsonl", `{"messages":[{"role":"user","content":"line"}]}`+"\n")

	tests := map[string]struct {
		files []string
		want  []string
	}{
		"messages, tool calls and tools text": {files: []string{openai}, want: []string{
			openai + `: row group 0, row 0: {"messages":[{"role":"user","content":"Hi <b>&</b> \"you\"","tool_calls":[]},{"role":"assistant","content":"Hello.","tool_calls":[]}]}`,
			openai + `: row group 0, row 1: {"messages":[{"role":"user","content":"2+2?","tool_calls":[]},{"role":"assistant","tool_calls":[{"name":"add","arguments":"{\"a\":2,\"b\":2}"}]}],"tools":[{"type":"function","function":{"name":"add"}}]}`,
			"error: " + openai + `: row group 1, row 0: column "messages" is null`,
			"error: " + openai + `: row group 1, row 1: column "tools" is a string but not JSON`,
		}},
		"sharegpt, then JSONL": {files: []string{sharegpt, jsonl}, want: []string{
			sharegpt + `: row group 0, row 0: {"conversations":[{"from":"human","value":"Name a prime."},{"from":"gpt","value":"7"}]}`,
			jsonl + `:1: {"messages":[{"role":"user","content":"line"}]}`,
		}},
		"no conversation column": {files: []string{noColumn}, want: []string{
			"error: " + noColumn + `: no "messages" or "conversations" column; the columns are "id", "text"`,
		}},
		"not parquet, then JSONL": {files: []string{notParquet, jsonl}, want: []string{
			"error: " + notParquet + ": not a readable Parquet file: invalid magic header of parquet file: \"this\"",
			jsonl + `:1: {"messages":[{"role":"user","content":"line"}]}`,
		}},
		"not a list": {files: []string{notList}, want: []string{
			"error: " + notList + `: column "messages" is not a list; want a list of messages (role and content, or from and value)`,
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, readRecords(t, NewChatDecoder().NewReader(tc.files))); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParquetChatsCorruptRowGroup damages the middle row group: it is
// reported once, named by file, row group and row, and reading goes on
// with the next.
func TestParquetChatsCorruptRowGroup(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "corrupt.parquet")
	var rows []shareGPTRow
	for _, v := range []string{"first-aaaaaaaaaaaa", "first-bbbbbbbbbbbb", "middle-cccccccccccc", "middle-dddddddddddd", "last-eeeeeeeeeeee"} {
		rows = append(rows, shareGPTRow{Conversations: []shareGPTTurn{{"human", v}}})
	}
	writeParquet(t, path, rows, 2)
	corruptColumnChunk(t, path, 1, 1)
	got := readRecords(t, NewChatDecoder().NewReader([]string{path}))
	if len(got) != 4 {
		t.Fatalf("got %d records, want 2 good, 1 error, 1 good: %q", len(got), got)
	}
	if want := "error: " + path + ": row group 1, row 0: row group cannot be read from this row on"; !strings.HasPrefix(got[2], want) {
		t.Errorf("record 2 = %q, want it to start %q", got[2], want)
	}
	if want := path + `: row group 2, row 0: {"conversations":[{"from":"human","value":"last-eeeeeeeeeeee"}]}`; got[3] != want {
		t.Errorf("record 3 = %q, want %q", got[3], want)
	}
}

// listGroup is a LIST-annotated group of any shape, as older writers made
// them, which the Parquet library's own list constructor does not.
type listGroup struct{ parquet.Group }

func (listGroup) Type() parquet.Type { return parquet.List(parquet.String()).Type() }

// writeParquetRows writes rows of the schema root, built value by value.
func writeParquetRows(t *testing.T, path string, root parquet.Node, rows ...parquet.Row) {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, parquet.NewSchema("chat", root))
	if _, err := w.WriteRows(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestParquetChatsListLayouts reads lists in the two-level layouts of
// older writers by the Parquet format's backward-compatibility rules.
func TestParquetChatsListLayouts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	str := func(s string, rep, def, col int) parquet.Value { return parquet.ValueOf(s).Level(rep, def, col) }
	null := func(col int) parquet.Value { return parquet.Value{}.Level(0, 0, col) }
	oneField := func(name string) parquet.Node {
		return parquet.Group{"messages": parquet.Optional(listGroup{parquet.Group{
			name: parquet.Repeated(parquet.Group{"role": parquet.String()})}})}
	}
	oneFieldRow := parquet.Row{str("user", 0, 2, 0), str("assistant", 1, 2, 0)}

	structs := filepath.Join(dir, "structs.parquet")
	writeParquetRows(t, structs, parquet.Group{
		"messages": parquet.Optional(listGroup{parquet.Group{"msg": parquet.Repeated(parquet.Group{
			"content": parquet.String(), "role": parquet.String()})}}),
		"tools": parquet.Optional(listGroup{parquet.Group{"tool": parquet.Repeated(parquet.String())}}),
	},
		parquet.Row{str("Hi", 0, 2, 0), str("Hello.", 1, 2, 0), str("user", 0, 2, 1), str("assistant", 1, 2, 1), str("add", 0, 2, 2), str("sub", 1, 2, 2)},
		parquet.Row{str("x", 0, 2, 0), str("user", 0, 2, 1), null(2)},
	)
	array := filepath.Join(dir, "array.parquet")
	writeParquetRows(t, array, oneField("array"), oneFieldRow)
	tuple := filepath.Join(dir, "tuple.parquet")
	writeParquetRows(t, tuple, oneField("messages_tuple"), oneFieldRow)
	threeLevel := filepath.Join(dir, "three.parquet")
	writeParquetRows(t, threeLevel, oneField("list"), oneFieldRow)
	nested := filepath.Join(dir, "nested.parquet")
	writeParquetRows(t, nested, parquet.Group{
		"messages": parquet.Optional(listGroup{parquet.Group{"list": parquet.Repeated(parquet.Group{"element": parquet.Group{
			"role":       parquet.String(),
			"tool_calls": parquet.Optional(listGroup{parquet.Group{"call": parquet.Repeated(parquet.String())}}),
		}})}})},
		parquet.Row{str("assistant", 0, 2, 0), str("add", 0, 4, 1), str("sub", 2, 4, 1)})
	malformed := filepath.Join(dir, "malformed.parquet")
	writeParquetRows(t, malformed, parquet.Group{
		"messages": parquet.Optional(listGroup{parquet.Group{"role": parquet.String()}})})

	tests := map[string]struct {
		file string
		want []string
	}{
		"two-level structs and strings": {file: structs, want: []string{
			structs + `: row group 0, row 0: {"messages":[{"content":"Hi","role":"user"},{"content":"Hello.","role":"assistant"}],"tools":["add","sub"]}`,
			structs + `: row group 0, row 1: {"messages":[{"content":"x","role":"user"}]}`,
		}},
		"one-field group named array is the element": {file: array, want: []string{
			array + `: row group 0, row 0: {"messages":[{"role":"user"},{"role":"assistant"}]}`,
		}},
		"one-field group named for the list is the element": {file: tuple, want: []string{
			tuple + `: row group 0, row 0: {"messages":[{"role":"user"},{"role":"assistant"}]}`,
		}},
		"one-field group otherwise wraps the element": {file: threeLevel, want: []string{
			threeLevel + `: row group 0, row 0: {"messages":["user","assistant"]}`,
		}},
		"two-level inside three-level": {file: nested, want: []string{
			nested + `: row group 0, row 0: {"messages":[{"role":"assistant","tool_calls":["add","sub"]}]}`,
		}},
		"no repeated field": {file: malformed, want: []string{
			"error: " + malformed + `: column "messages": a LIST group holds exactly one repeated field by the Parquet format; this one does not`,
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, readRecords(t, NewChatDecoder().NewReader([]string{tc.file}))); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}
