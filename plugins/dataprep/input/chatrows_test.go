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
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	chunk := f.Metadata().RowGroups[1].Columns[1].MetaData
	start := chunk.DataPageOffset
	if chunk.DictionaryPageOffset > 0 && chunk.DictionaryPageOffset < start {
		start = chunk.DictionaryPageOffset
	}
	for k := start; k < start+chunk.TotalCompressedSize; k++ {
		data[k] = 0xFF
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
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
