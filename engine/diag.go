package engine

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/gpuflow/gpuflow/dsl"
)

// rangeOr returns the range recorded for key, or fallback.
func rangeOr(ranges map[string]hcl.Range, key string, fallback hcl.Range) *hcl.Range {
	if r, ok := ranges[key]; ok {
		return &r
	}
	return fallback.Ptr()
}

// didYouMean suggests the closest candidate as a sentence of its own, with
// a leading space; "" when none is close.
func didYouMean(given string, candidates []string) string {
	if s := dsl.Suggest(given, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

func suggestTail(given string, candidates []string) string {
	if s := dsl.Suggest(given, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// declaredList is " Declared: a, b." or "" when there are none.
func declaredList(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " Declared: " + strings.Join(names, ", ") + "."
}

func joinNames(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
