package dsl

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// decodeKubernetes reads node_selector, annotations and the toleration and
// volume blocks.
func (e *Executor) decodeKubernetes(content *hcl.BodyContent, ctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for name, target := range map[string]*map[string]string{"node_selector": &e.Spec.NodeSelector, "annotations": &e.Spec.Annotations} {
		if a := content.Attributes[name]; a != nil {
			e.Ranges[name] = a.Expr.Range()
			var d hcl.Diagnostics
			*target, d = decodeStringMap(a, ctx, fmt.Sprintf(`%s = { "kubernetes.io/arch" = "amd64" }`, name))
			diags = append(diags, d...)
		}
	}
	for _, b := range content.Blocks.OfType("toleration") {
		var t ExecutorToleration
		_, d := decodeArgs(b.Body, ctx, &t)
		diags = append(diags, d...)
		e.Spec.Tolerations = append(e.Spec.Tolerations, t)
		e.Ranges["toleration"] = b.DefRange
	}
	for _, b := range content.Blocks.OfType("volume") {
		v := ExecutorVolume{Name: b.Labels[0], Range: b.DefRange}
		_, d := decodeArgs(b.Body, ctx, &v)
		diags = append(diags, d...)
		e.Spec.Volumes = append(e.Spec.Volumes, v)
		e.Ranges["volume"] = b.DefRange
	}
	return diags
}

func decodeStringMap(a *hcl.Attribute, ctx *hcl.EvalContext, example string) (map[string]string, hcl.Diagnostics) {
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	m, err := convert.Convert(v, cty.Map(cty.String))
	if err != nil || m.IsNull() || !m.IsWhollyKnown() {
		return nil, hcl.Diagnostics{typeError(a, "a map of strings", example, v)}
	}
	out := map[string]string{}
	for k, el := range m.AsValueMap() {
		if el.IsNull() {
			return nil, hcl.Diagnostics{argError(a, "Invalid "+a.Name+" value", fmt.Sprintf("%s[%q] is null; give it a string or leave it out.", a.Name, k))}
		}
		out[k] = el.AsString()
	}
	return out, nil
}

// Toleration operators and effects Kubernetes knows.
var (
	tolerationOperators = []string{"Equal", "Exists"}
	taintEffects        = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
)

// checkKubernetes reports what a kubernetes executor needs and does not
// have; what the API server alone can judge (label syntax, names) it
// reports when apply submits the Job.
func (e *Executor) checkKubernetes() hcl.Diagnostics {
	s := &e.Spec
	var diags hcl.Diagnostics
	if s.Image == nil || strings.TrimSpace(*s.Image) == "" {
		diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing image",
			Detail:  fmt.Sprintf("%s needs image = \"REGISTRY/IMAGE:TAG\": an image with gpuflow on its $PATH and what the stage's plugin runs (PyTorch for training).", e.Addr()),
			Subject: e.DeclRange.Ptr()})
	}
	if s.TimeLimit != nil {
		if d, err := parseTimeLimit(*s.TimeLimit); err != nil || d < time.Second {
			diags = diags.Append(e.argError("time_limit", "Invalid time_limit",
				fmt.Sprintf("%q is not a time limit of a second or more; write a number and a unit, like \"90s\", \"30m\" or \"4h\".", *s.TimeLimit)))
		}
	}
	if s.PendingTimeout != nil {
		if d, err := time.ParseDuration(*s.PendingTimeout); err != nil || d < time.Second {
			diags = diags.Append(e.argError("pending_timeout", "Invalid pending_timeout",
				fmt.Sprintf("%q is not a duration of a second or more; write a number and a unit, like \"90s\", \"30m\" or \"4h\".", *s.PendingTimeout)))
		}
	}
	for _, t := range s.Tolerations {
		if t.Operator != nil && !slices.Contains(tolerationOperators, *t.Operator) {
			diags = diags.Append(e.argError("toleration", "Invalid toleration operator",
				fmt.Sprintf("operator = %q: Kubernetes knows %s.%s", *t.Operator, strings.Join(tolerationOperators, " and "), didYouMean(*t.Operator, tolerationOperators))))
		}
		if t.Effect != nil && !slices.Contains(taintEffects, *t.Effect) {
			diags = diags.Append(e.argError("toleration", "Invalid toleration effect",
				fmt.Sprintf("effect = %q: Kubernetes knows %s.%s", *t.Effect, strings.Join(taintEffects, ", "), didYouMean(*t.Effect, taintEffects))))
		}
	}
	for _, v := range s.Volumes {
		diags = append(diags, checkVolume(v)...)
	}
	return diags
}

func checkVolume(v ExecutorVolume) hcl.Diagnostics {
	fail := func(detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid volume", Detail: detail, Subject: v.Range.Ptr()}}
	}
	switch {
	case (v.Claim == nil) == (v.HostPath == nil):
		return fail(fmt.Sprintf("volume %q needs exactly one of claim (a PersistentVolumeClaim's name) and host_path (a directory on the node).", v.Name))
	case v.MountPath == nil || !strings.HasPrefix(*v.MountPath, "/"):
		return fail(fmt.Sprintf("volume %q needs mount_path, an absolute path in the pod, like mount_path = \"/data\".", v.Name))
	case v.HostPath != nil && !strings.HasPrefix(*v.HostPath, "/"):
		return fail(fmt.Sprintf("volume %q: host_path = %q is not an absolute path on the node.", v.Name, *v.HostPath))
	}
	return nil
}
