package engine

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/dsl"
	"github.com/gpuflow/gpuflow/plugins/api"
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

// numbersInRange reports a number in a decoded stage body that
// dsl.FindOutOfRange refuses, pointing at its source.
func numbersInRange(config cty.Value, body hcl.Body, spec hcldec.Spec) hcl.Diagnostics {
	path, bad := dsl.FindOutOfRange(config)
	if !bad {
		return nil
	}
	r := api.PathRange(body, spec, path)
	return hcl.Diagnostics{dsl.OutOfRangeDiagnostic(&r)}
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
