package exec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpuflow/gpuflow/plugins/api"
)

func TestOutputSinkSplitsLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxLine+10)
	tests := map[string]struct {
		writes []string
		want   []string
	}{
		"whole lines":      {[]string{"a\nb\n"}, []string{"a", "b"}},
		"split writes":     {[]string{"a", "b\nc", "\n"}, []string{"ab", "c"}},
		"no final newline": {[]string{"a\nlast"}, []string{"a", "last"}},
		"crlf":             {[]string{"a\r\n"}, []string{"a"}},
		"overlong line":    {[]string{long + "\n"}, []string{long[:maxLine], long[maxLine:]}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var file strings.Builder
			var got []string
			o := &outputSink{file: &file, events: api.EventSinkFunc(func(e api.Event) { got = append(got, e.Log.Message) })}
			for _, w := range tc.writes {
				if n, err := o.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			o.flush()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if file.String() != strings.Join(tc.writes, "") {
				t.Error("the file did not get the bytes as written")
			}
		})
	}
}
