package kubernetes

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/gpuflow/gpuflow/plugins/api"
)

// fieldArguments map a field of the rendered objects to the executor
// argument it comes from, most specific first.
var fieldArguments = []struct{ field, argument string }{
	{"containers[0].image", "image"},
	{"serviceAccountName", "service_account"},
	{"nodeSelector", "node_selector"},
	{"tolerations", "toleration"},
	{"volumeMounts", "volume"},
	{"volumes", "volume"},
	{"annotations", "annotations"},
	{"resources", "gpus_per_node"},
	{"containers[0].env", "env"},
	{"activeDeadlineSeconds", "time_limit"},
	{"completions", "nodes"},
	{"parallelism", "nodes"},
	{"namespace", "namespace"},
}

// argumentFor is the executor argument a rejected field comes from; ""
// for a field gpuflow sets itself.
func argumentFor(field string) string {
	for _, fa := range fieldArguments {
		if strings.Contains(field, fa.field) {
			return fa.argument
		}
	}
	return ""
}

// submitDiagnostic reports a submission the API server refused, each
// rejected field with the executor argument, and where it is written,
// that it comes from.
func (r *Run) submitDiagnostic(c *Cluster, err error) api.Diagnostic {
	d := api.Diagnostic{Severity: api.Error, Summary: "Kubernetes refused the Job",
		Detail: fmt.Sprintf("The API server at %s did not accept the %s of stage %s: %s.", c.Host, kindOf(r.job), r.job.Stage, strings.TrimSuffix(err.Error(), "."))}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return d
	}
	st := status.Status()
	if apierrors.IsNotFound(err) && st.Details != nil && st.Details.Kind == "namespaces" {
		d.Detail += r.at("namespace", fmt.Sprintf("namespace %q does not exist; create it or name another", r.job.Namespace))
		return d
	}
	if apierrors.IsForbidden(err) {
		d.Detail += fmt.Sprintf(" The kubeconfig's user may not create Jobs in namespace %s; `kubectl auth can-i create jobs -n %s` checks.", r.job.Namespace, r.job.Namespace)
	}
	if st.Details == nil {
		return d
	}
	for _, cause := range st.Details.Causes {
		if cause.Field == "" {
			continue
		}
		arg := argumentFor(cause.Field)
		if arg == "" {
			d.Detail += fmt.Sprintf("\n  %s: %s", cause.Field, cause.Message)
			continue
		}
		d.Detail += fmt.Sprintf("\n  %s: %s%s", cause.Field, cause.Message, r.at(arg, ""))
	}
	return d
}

// at points at an executor argument: " (image at main.hcl:12:3 in
// executor.kubernetes.k)", with why when given.
func (r *Run) at(arg, why string) string {
	s := " (" + arg
	if pos := r.job.Positions[arg]; pos != "" {
		s += " at " + pos
	}
	s += " in " + r.job.Executor
	if why != "" {
		s += ": " + why
	}
	return s + ")"
}

func kindOf(j Job) string {
	if j.JobSet {
		return KindJobSet
	}
	return KindJob
}
