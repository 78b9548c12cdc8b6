package convert

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
	pluginv1 "github.com/gpuflow/gpuflow/plugins/proto/v1"
)

// PathToProto encodes an attribute path. Index keys that are neither strings
// nor whole numbers cannot point into HCL source, so the path stops before
// them.
func PathToProto(path cty.Path) *pluginv1.AttributePath {
	if len(path) == 0 {
		return nil
	}
	out := &pluginv1.AttributePath{}
	for _, step := range path {
		s := stepToProto(step)
		if s == nil {
			break
		}
		out.Steps = append(out.Steps, s)
	}
	return out
}

func stepToProto(step cty.PathStep) *pluginv1.AttributePath_Step {
	switch step := step.(type) {
	case cty.GetAttrStep:
		return &pluginv1.AttributePath_Step{Selector: &pluginv1.AttributePath_Step_AttributeName{AttributeName: step.Name}}
	case cty.IndexStep:
		key := step.Key
		if !key.IsKnown() || key.IsNull() {
			return nil
		}
		switch key.Type() {
		case cty.String:
			return &pluginv1.AttributePath_Step{Selector: &pluginv1.AttributePath_Step_ElementKeyString{ElementKeyString: key.AsString()}}
		case cty.Number:
			i, acc := key.AsBigFloat().Int64()
			if acc != 0 {
				return nil
			}
			return &pluginv1.AttributePath_Step{Selector: &pluginv1.AttributePath_Step_ElementKeyInt{ElementKeyInt: i}}
		}
	}
	return nil
}

// PathFromProto decodes what PathToProto encoded.
func PathFromProto(p *pluginv1.AttributePath) cty.Path {
	var path cty.Path
	for _, step := range p.GetSteps() {
		switch sel := step.GetSelector().(type) {
		case *pluginv1.AttributePath_Step_AttributeName:
			path = path.GetAttr(sel.AttributeName)
		case *pluginv1.AttributePath_Step_ElementKeyString:
			path = path.Index(cty.StringVal(sel.ElementKeyString))
		case *pluginv1.AttributePath_Step_ElementKeyInt:
			path = path.Index(cty.NumberIntVal(sel.ElementKeyInt))
		}
	}
	return path
}

// DiagnosticsToProto encodes diagnostics.
func DiagnosticsToProto(diags api.Diagnostics) []*pluginv1.Diagnostic {
	var out []*pluginv1.Diagnostic
	for _, d := range diags {
		sev := pluginv1.Diagnostic_ERROR
		if d.Severity == api.Warning {
			sev = pluginv1.Diagnostic_WARNING
		}
		out = append(out, &pluginv1.Diagnostic{
			Severity: sev,
			Summary:  d.Summary,
			Detail:   d.Detail,
			Path:     PathToProto(d.Path),
		})
	}
	return out
}

// DiagnosticsFromProto decodes diagnostics. An unknown severity from a newer
// plugin reads as an error, the safe side.
func DiagnosticsFromProto(diags []*pluginv1.Diagnostic) api.Diagnostics {
	var out api.Diagnostics
	for _, d := range diags {
		sev := api.Error
		if d.GetSeverity() == pluginv1.Diagnostic_WARNING {
			sev = api.Warning
		}
		out = append(out, api.Diagnostic{
			Severity: sev,
			Summary:  d.GetSummary(),
			Detail:   d.GetDetail(),
			Path:     PathFromProto(d.GetPath()),
		})
	}
	return out
}
