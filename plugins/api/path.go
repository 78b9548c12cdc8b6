package api

import (
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// PathString renders a path into a stage body as HCL writes it:
// command[0], env["HOME"], lora.rank; "" for the whole body.
func PathString(path cty.Path) string {
	var b strings.Builder
	for _, step := range path {
		switch s := step.(type) {
		case cty.GetAttrStep:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		case cty.IndexStep:
			if s.Key.Type() == cty.String {
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			} else {
				fmt.Fprintf(&b, "[%s]", s.Key.AsBigFloat().Text('f', 0))
			}
		}
	}
	return b.String()
}
