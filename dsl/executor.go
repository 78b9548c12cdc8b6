package dsl

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Executor kinds besides the implicit local one: stages run as Slurm jobs,
// or as Kubernetes Jobs.
const (
	ExecutorSlurm      = "slurm"
	ExecutorKubernetes = "kubernetes"
)

// executorKinds are the kinds an executor block may name.
var executorKinds = []string{ExecutorSlurm, ExecutorKubernetes}

// kindArguments are the arguments and blocks only one kind takes; the
// others (nodes, gpus_per_node, time_limit, env) every kind takes.
var kindArguments = map[string][]string{
	ExecutorSlurm: {"partition", "account", "qos", "cpus_per_task", "exclusive", "container_image", "retries", "extra_sbatch"},
	ExecutorKubernetes: {"kubeconfig", "context", "namespace", "image", "service_account", "pending_timeout",
		"node_selector", "annotations", "toleration", "volume"},
}

// Executor is an executor block: where the stages that name it run
// instead of this machine. Stages without an executor run locally.
type Executor struct {
	Kind      string
	Name      string
	Spec      ExecutorSpec
	Ranges    map[string]hcl.Range
	DeclRange hcl.Range
	// Decoded is false when the body had errors; Spec is then partial.
	Decoded bool
	body    hcl.Body
}

// Addr is the executor's address, executor.KIND.NAME, as stages refer to it.
func (e *Executor) Addr() string { return "executor." + e.Kind + "." + e.Name }

// ExecutorSpec holds the arguments of an executor block; nil or empty
// means not set.
type ExecutorSpec struct {
	Partition      *string `hcl:"partition,optional"`
	Account        *string `hcl:"account,optional"`
	QoS            *string `hcl:"qos,optional"`
	TimeLimit      *string `hcl:"time_limit,optional"`
	Nodes          *int    `hcl:"nodes,optional"`
	GPUsPerNode    *int    `hcl:"gpus_per_node,optional"`
	CPUsPerTask    *int    `hcl:"cpus_per_task,optional"`
	Exclusive      *bool   `hcl:"exclusive,optional"`
	ContainerImage *string `hcl:"container_image,optional"`
	// Retries is how often a job that was preempted or lost a node is
	// submitted again.
	Retries *int `hcl:"retries,optional"`
	// ExtraSbatch are further sbatch options, one per element.
	ExtraSbatch []string
	// Env is exported on every node before the stage starts.
	Env map[string]string

	// Kubernetes: the cluster (a kubeconfig and a context in it; empty
	// for $KUBECONFIG and its current context) and what every pod gets.
	Kubeconfig     *string `hcl:"kubeconfig,optional"`
	Context        *string `hcl:"context,optional"`
	Namespace      *string `hcl:"namespace,optional"`
	Image          *string `hcl:"image,optional"`
	ServiceAccount *string `hcl:"service_account,optional"`
	// PendingTimeout is how long a pod may wait for a node before the
	// stage fails with the scheduler's reason.
	PendingTimeout *string `hcl:"pending_timeout,optional"`
	NodeSelector   map[string]string
	Annotations    map[string]string
	Tolerations    []ExecutorToleration
	Volumes        []ExecutorVolume
}

// ExecutorToleration is a toleration block: the pods tolerate a taint.
type ExecutorToleration struct {
	Key      *string `hcl:"key,optional"`
	Operator *string `hcl:"operator,optional"`
	Value    *string `hcl:"value,optional"`
	Effect   *string `hcl:"effect,optional"`
}

// ExecutorVolume is a volume "NAME" block: a PersistentVolumeClaim or a
// host path, mounted in every pod.
type ExecutorVolume struct {
	Name      string
	Claim     *string `hcl:"claim,optional"`
	HostPath  *string `hcl:"host_path,optional"`
	MountPath *string `hcl:"mount_path,optional"`
	ReadOnly  *bool   `hcl:"read_only,optional"`
	Range     hcl.Range
}

// PendingTimeoutDuration is pending_timeout as a duration; zero when not
// set. Decoding has checked it.
func (s *ExecutorSpec) PendingTimeoutDuration() time.Duration {
	if s.PendingTimeout == nil {
		return 0
	}
	d, _ := time.ParseDuration(*s.PendingTimeout)
	return d
}

// TimeLimitDuration is time_limit as a duration; zero when not set.
// Decoding has checked it.
func (s *ExecutorSpec) TimeLimitDuration() time.Duration {
	if s.TimeLimit == nil {
		return 0
	}
	d, _ := parseTimeLimit(*s.TimeLimit)
	return d
}

// ExecutorRef is a stage's executor = executor.KIND.NAME.
type ExecutorRef struct {
	Kind, Name string
	Range      hcl.Range
}

// Addr is the referenced executor's address.
func (r *ExecutorRef) Addr() string { return "executor." + r.Kind + "." + r.Name }

// executorCollections are the list and map arguments, decoded apart from
// the scalar ones.
var executorCollections = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "extra_sbatch"}, {Name: "env"}, {Name: "node_selector"}, {Name: "annotations"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "toleration"}, {Type: "volume", LabelNames: []string{"name"}}},
}

// addExecutor records an executor block; its body waits for variables.
func (c *Config) addExecutor(b *hcl.Block) hcl.Diagnostics {
	e := &Executor{Kind: b.Labels[0], Name: b.Labels[1], body: b.Body, DeclRange: b.DefRange}
	var diags hcl.Diagnostics
	if !contains(executorKinds, e.Kind) {
		diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported executor kind",
			Detail: fmt.Sprintf("gpuflow has no %q executor; the kinds are %s (stages without an executor run on this machine).%s",
				e.Kind, strings.Join(executorKinds, ", "), didYouMean(e.Kind, executorKinds)),
			Subject: b.LabelRanges[0].Ptr()})
	}
	if !hclsyntax.ValidIdentifier(e.Name) {
		diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid executor label",
			Detail:  fmt.Sprintf("%q is not a valid identifier: use letters, digits, underscores and dashes, starting with a letter.", e.Name),
			Subject: b.LabelRanges[1].Ptr()})
	}
	c.Executors[e.Kind+"."+e.Name] = e
	return diags
}

// decodeExecutors decodes every executor block's arguments, then checks
// the stages' references to them.
func (c *Config) decodeExecutors(ctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, key := range slices.Sorted(maps.Keys(c.Executors)) {
		e := c.Executors[key]
		if d := c.CheckReferences(BodyTraversals(e.body)); d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		d := e.decode(ctx)
		e.Decoded = !d.HasErrors()
		diags = append(diags, d...)
	}
	for _, s := range c.Stages {
		diags = append(diags, c.checkExecutorRef(s)...)
	}
	return diags
}

func (e *Executor) decode(ctx *hcl.EvalContext) hcl.Diagnostics {
	content, remain, diags := e.body.PartialContent(executorCollections)
	var d hcl.Diagnostics
	e.Ranges, d = decodeArgs(remain, ctx, &e.Spec)
	diags = append(diags, d...)
	if a := content.Attributes["extra_sbatch"]; a != nil {
		e.Ranges[a.Name] = a.Expr.Range()
		e.Spec.ExtraSbatch, d = decodeSbatchOptions(a, ctx)
		diags = append(diags, d...)
	}
	if a := content.Attributes["env"]; a != nil {
		e.Ranges[a.Name] = a.Expr.Range()
		e.Spec.Env, d = decodeExecutorEnv(a, ctx)
		diags = append(diags, d...)
	}
	diags = append(diags, e.decodeKubernetes(content, ctx)...)
	if diags.HasErrors() {
		return diags
	}
	if d := e.checkKind(); d.HasErrors() {
		return d
	}
	return e.check()
}

// checkKind reports arguments of another kind of executor.
func (e *Executor) checkKind() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for kind, args := range kindArguments {
		if kind == e.Kind {
			continue
		}
		for _, arg := range args {
			if r, ok := e.Ranges[arg]; ok {
				diags = diags.Append(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported argument",
					Detail: fmt.Sprintf("%s is an argument of %s executors; a %s executor takes nodes, gpus_per_node, time_limit, env and %s.",
						arg, kind, e.Kind, strings.Join(kindArguments[e.Kind], ", ")),
					Subject: r.Ptr()})
			}
		}
	}
	return diags
}

// slurmWord is what may follow --partition=, --account= and --qos= on an
// #SBATCH line: Slurm names and comma-separated lists of them.
var slurmWord = regexp.MustCompile(`^[A-Za-z0-9_.,:@+-]+$`)

// check reports values Slurm would refuse, or that would change the
// meaning of the rendered script.
func (e *Executor) check() hcl.Diagnostics {
	s := &e.Spec
	var diags hcl.Diagnostics
	for name, v := range map[string]*string{"partition": s.Partition, "account": s.Account, "qos": s.QoS} {
		if v != nil && !slurmWord.MatchString(*v) {
			diags = diags.Append(e.argError(name, "Invalid "+name,
				fmt.Sprintf("%s = %q is not a Slurm name: use letters, digits and _ . , : @ + -, without spaces.", name, *v)))
		}
	}
	if s.ContainerImage != nil && (*s.ContainerImage == "" || strings.ContainsAny(*s.ContainerImage, " \t\r\n,")) {
		diags = diags.Append(e.argError("container_image", "Invalid container_image",
			"container_image names an image for pyxis/enroot, like \"nvcr.io#nvidia/pytorch:25.01-py3\", without spaces or commas."))
	}
	diags = append(diags, e.checkCounts()...)
	if e.Kind == ExecutorKubernetes {
		return append(diags, e.checkKubernetes()...)
	}
	return append(diags, e.checkTimeLimit()...)
}

func (e *Executor) checkCounts() hcl.Diagnostics {
	s := &e.Spec
	var diags hcl.Diagnostics
	for _, c := range []struct {
		name string
		v    *int
		min  int
	}{{"nodes", s.Nodes, 1}, {"gpus_per_node", s.GPUsPerNode, 0}, {"cpus_per_task", s.CPUsPerTask, 1}, {"retries", s.Retries, 0}} {
		if c.v != nil && *c.v < c.min {
			diags = diags.Append(e.argError(c.name, "Invalid "+c.name,
				fmt.Sprintf("%s must be at least %d, not %d.", c.name, c.min, *c.v)))
		}
	}
	return diags
}

func (e *Executor) checkTimeLimit() hcl.Diagnostics {
	if e.Spec.TimeLimit == nil {
		return nil
	}
	_, err := parseTimeLimit(*e.Spec.TimeLimit)
	switch {
	case errors.Is(err, errNotWholeMinutes):
		return hcl.Diagnostics{e.argError("time_limit", "Invalid time_limit",
			fmt.Sprintf("Slurm counts time limits in whole minutes; %q is not one. Use at least \"1m\", in whole minutes.", *e.Spec.TimeLimit))}
	case err != nil:
		return hcl.Diagnostics{e.argError("time_limit", "Invalid time_limit",
			fmt.Sprintf("%q is not a time limit; write a duration like \"30m\" or \"4h\", or one of Slurm's forms: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (\"02:00:00\", \"2-00:00:00\").", *e.Spec.TimeLimit))}
	}
	return nil
}

func (e *Executor) argError(name, summary, detail string) *hcl.Diagnostic {
	r := e.Ranges[name]
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: r.Ptr()}
}

// decodeSbatchOptions reads extra_sbatch: a list of options, each written
// as one #SBATCH line, so each must be one option starting with "-".
func decodeSbatchOptions(a *hcl.Attribute, ctx *hcl.EvalContext) ([]string, hcl.Diagnostics) {
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	list, err := convert.Convert(v, cty.List(cty.String))
	if err != nil || list.IsNull() || !list.IsWhollyKnown() {
		return nil, hcl.Diagnostics{typeError(a, "a list of strings", `extra_sbatch = ["--mem=0"]`, v)}
	}
	var out []string
	for _, el := range list.AsValueSlice() {
		opt := el.AsString()
		if !strings.HasPrefix(opt, "-") || strings.ContainsAny(opt, "\r\n") {
			return nil, hcl.Diagnostics{argError(a, "Invalid extra_sbatch option",
				fmt.Sprintf("%q is not an sbatch option: each element is one option on a line of its own, starting with \"-\", like \"--mem=0\".", opt))}
		}
		out = append(out, opt)
	}
	return out, nil
}

// shellName is an environment variable name a shell can export.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func decodeExecutorEnv(a *hcl.Attribute, ctx *hcl.EvalContext) (map[string]string, hcl.Diagnostics) {
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	m, err := convert.Convert(v, cty.Map(cty.String))
	if err != nil || m.IsNull() || !m.IsWhollyKnown() {
		return nil, hcl.Diagnostics{typeError(a, "a map of strings", `env = { OMP_NUM_THREADS = "8" }`, v)}
	}
	out := map[string]string{}
	for k, el := range m.AsValueMap() {
		if el.IsNull() {
			return nil, hcl.Diagnostics{argError(a, "Invalid env value", fmt.Sprintf("env.%s is null; give it a string or leave it out.", k))}
		}
		if !shellName.MatchString(k) {
			return nil, hcl.Diagnostics{argError(a, "Invalid env name",
				fmt.Sprintf("%q cannot be exported by the job script: names are letters, digits and underscores, not starting with a digit.", k))}
		}
		out[k] = el.AsString()
	}
	return out, nil
}

// decodeExecutorRef reads a stage's executor = executor.KIND.NAME.
func decodeExecutorRef(a *hcl.Attribute) (*ExecutorRef, hcl.Diagnostics) {
	tr, diags := hcl.AbsTraversalForExpr(a.Expr)
	if !diags.HasErrors() && len(tr) == 3 && tr.RootName() == "executor" {
		kind, ok1 := tr[1].(hcl.TraverseAttr)
		name, ok2 := tr[2].(hcl.TraverseAttr)
		if ok1 && ok2 {
			return &ExecutorRef{Kind: kind.Name, Name: name.Name, Range: a.Expr.Range()}, nil
		}
	}
	return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid executor reference",
		Detail:  "executor must refer to an executor block, like executor = executor.slurm.NAME; leave it out to run the stage on this machine.",
		Subject: a.Expr.Range().Ptr()}}
}

// checkExecutorRef reports a stage naming an executor nobody declared.
func (c *Config) checkExecutorRef(s *Stage) hcl.Diagnostics {
	ref := s.Executor
	if ref == nil || c.Executors[ref.Kind+"."+ref.Name] != nil {
		return nil
	}
	var names []string
	for _, e := range c.Executors {
		names = append(names, e.Addr())
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared executor",
		Detail: fmt.Sprintf("No executor %s is declared.%s Declare it with an executor %q %q block or fix the reference.",
			ref.Addr(), didYouMean(ref.Addr(), names), ref.Kind, ref.Name),
		Subject: ref.Range.Ptr()}}
}
