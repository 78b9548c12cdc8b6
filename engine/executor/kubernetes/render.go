package kubernetes

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/gpuflow/gpuflow/engine/executor/rundir"
)

// Labels and names gpuflow puts on what it submits.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelStage     = "gpuflow.dev/stage"
	LabelRun       = "gpuflow.dev/run"
	ContainerName  = "node-host"
	// GPUResource is the extended resource NVIDIA's device plugin serves.
	GPUResource = "nvidia.com/gpu"
	// RunDirPlaceholder and WorkDirPlaceholder stand in the plan's
	// manifest for the directories apply fills in.
	RunDirPlaceholder  = "RUN_DIR"
	WorkDirPlaceholder = "WORK_DIR"
)

// Submission is what differs between two submissions of one rendered
// stage: the objects' name and the directories the node hosts use.
type Submission struct {
	// Name is the Job's (or JobSet's) and the Service's name.
	Name    string
	RunDir  string
	WorkDir string
}

// PlanSubmission is what the plan's manifest is rendered with: the name
// without apply's suffix and placeholders for the directories.
func PlanSubmission(j Job) Submission {
	return Submission{Name: BaseName(j.Stage), RunDir: RunDirPlaceholder, WorkDir: WorkDirPlaceholder}
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// BaseName is the stage's object name before apply's suffix: a DNS label
// short enough for the suffix and the pods' index.
func BaseName(stage string) string {
	n := strings.Trim(notDNS.ReplaceAllString(strings.ToLower("gpuflow-"+stage), "-"), "-")
	return strings.TrimRight(n[:min(len(n), 40)], "-")
}

// Objects are what apply creates for a submission, in creation order.
type Objects struct {
	Service *corev1.Service // nil for a JobSet, which makes its own
	Job     *batchv1.Job    // nil for a JobSet
	JobSet  *unstructured.Unstructured
}

// Render returns the objects of one submission of j.
func Render(j Job, s Submission) Objects {
	if j.JobSet {
		return Objects{JobSet: renderJobSet(j, s)}
	}
	o := Objects{Job: renderJob(j, s)}
	if j.Rendezvous {
		o.Service = renderService(j, s)
	}
	return o
}

// Manifest is the YAML of one submission's objects, as `kubectl apply -f`
// takes it.
func Manifest(j Job, s Submission) string {
	o := Render(j, s)
	var docs []any
	for _, obj := range []any{o.Service, o.Job, o.JobSet} {
		if !isNil(obj) {
			docs = append(docs, obj)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# gpuflow stage %s (plugin %s) through %s.\n", j.Stage, j.Plugin, j.Executor)
	fmt.Fprintf(&b, "# gpuflow apply submits it with a suffix on the names (%s-x7k2p) and the run's directories for %s and %s.\n",
		s.Name, RunDirPlaceholder, WorkDirPlaceholder)
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(toYAML(d))
	}
	return b.String()
}

func isNil(v any) bool {
	switch o := v.(type) {
	case *corev1.Service:
		return o == nil
	case *batchv1.Job:
		return o == nil
	case *unstructured.Unstructured:
		return o == nil
	}
	return v == nil
}

// toYAML writes an object without the fields the server fills in.
func toYAML(obj any) string {
	m := toMap(obj)
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	delete(m, "status")
	out, _ := yaml.Marshal(m)
	return string(out)
}

func toMap(obj any) map[string]any {
	data, _ := json.Marshal(obj)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	dropEmpty(m)
	return m
}

// dropEmpty removes the empty creationTimestamp and resources the typed
// structs always write.
func dropEmpty(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			dropEmpty(x)
			if x == nil {
				delete(t, k)
			}
			if mm, ok := x.(map[string]any); ok && len(mm) == 0 {
				delete(t, k)
			}
		}
	case []any:
		for _, x := range t {
			dropEmpty(x)
		}
	}
}

func labels(j Job, s Submission) map[string]string {
	return map[string]string{LabelManagedBy: "gpuflow", LabelStage: strings.TrimPrefix(BaseName(j.Stage), "gpuflow-"), LabelRun: s.Name}
}

func renderService(j Job, s Submission) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: j.Namespace, Labels: labels(j, s)},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{LabelRun: s.Name},
			// The rendezvous must resolve before any pod is ready.
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: "rendezvous", Port: RendezvousPort, TargetPort: intstr.FromInt32(RendezvousPort)}},
		},
	}
}

func renderJob(j Job, s Submission) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: j.Namespace, Labels: labels(j, s)},
		Spec:       jobSpec(j, s, rendezvousHost(j, s, s.Name+"-0."+s.Name)),
	}
}

// jobSpec runs one pod per node, all at once, and no pod again: a
// failed pod fails the stage, and gpuflow's own policy decides more.
func jobSpec(j Job, s Submission, head string) batchv1.JobSpec {
	nodes := int32(max(1, j.Nodes))
	spec := batchv1.JobSpec{
		CompletionMode: ptr.To(batchv1.IndexedCompletion),
		Completions:    ptr.To(nodes),
		Parallelism:    ptr.To(nodes),
		BackoffLimit:   ptr.To(int32(0)),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels(j, s), Annotations: j.Annotations},
			Spec:       podSpec(j, s, head),
		},
	}
	if j.TimeLimitS > 0 {
		spec.ActiveDeadlineSeconds = ptr.To(int64(j.TimeLimitS))
	}
	return spec
}

// rendezvousHost is the DNS name of the pod of index 0; "" without a
// rendezvous.
func rendezvousHost(j Job, s Submission, host string) string {
	if !j.Rendezvous {
		return ""
	}
	return host
}

func podSpec(j Job, s Submission, head string) corev1.PodSpec {
	spec := corev1.PodSpec{
		RestartPolicy:      corev1.RestartPolicyNever,
		ServiceAccountName: j.ServiceAccount,
		NodeSelector:       j.NodeSelector,
		Containers:         []corev1.Container{container(j, s, head)},
	}
	if head != "" && !j.JobSet {
		spec.Subdomain = s.Name
	}
	for _, t := range j.Tolerations {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator),
			Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	for _, v := range j.Volumes {
		spec.Volumes = append(spec.Volumes, volume(v))
	}
	return spec
}

func volume(v Volume) corev1.Volume {
	if v.Claim != "" {
		return corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.Claim, ReadOnly: v.ReadOnly}}}
	}
	return corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: v.HostPath, Type: ptr.To(corev1.HostPathDirectory)}}}
}

// container runs the node host, which runs the stage's plugin in the pod
// and writes its events and result into the run directory.
func container(j Job, s Submission, head string) corev1.Container {
	c := corev1.Container{
		Name:       ContainerName,
		Image:      j.Image,
		Command:    []string{"gpuflow", "node-host", "-run-dir", s.RunDir},
		WorkingDir: s.WorkDir,
		Env:        env(j, s, head),
	}
	if j.GPUsPerNode > 0 {
		gpus := resource.MustParse(strconv.Itoa(j.GPUsPerNode))
		c.Resources.Limits = corev1.ResourceList{GPUResource: gpus}
	}
	if head != "" {
		c.Ports = []corev1.ContainerPort{{Name: "rendezvous", ContainerPort: RendezvousPort}}
	}
	for _, v := range j.Volumes {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: v.MountPath, ReadOnly: v.ReadOnly})
	}
	return c
}

// env is the plan's NCCL settings, the executor's environment, where the
// node host finds its job and node, and torchrun's rendezvous.
func env(j Job, s Submission, head string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, group := range [][]EnvVar{j.NCCLEnv, j.Env} {
		for _, e := range group {
			out = append(out, corev1.EnvVar{Name: e.Name, Value: e.Value})
		}
	}
	nodes := strconv.Itoa(max(1, j.Nodes))
	out = append(out,
		corev1.EnvVar{Name: rundir.EnvClusterJob, Value: s.Name},
		corev1.EnvVar{Name: rundir.EnvNodes, Value: nodes},
		corev1.EnvVar{Name: rundir.EnvNodeName, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}})
	if head == "" {
		return out
	}
	endpoint := fmt.Sprintf("%s:%d", head, RendezvousPort)
	args := "--nnodes=" + nodes
	if j.GPUsPerNode > 0 {
		args += fmt.Sprintf(" --nproc-per-node=%d", j.GPUsPerNode)
	}
	args += fmt.Sprintf(" --rdzv-backend=c10d --rdzv-endpoint=%s --rdzv-id=%s", endpoint, s.Name)
	return append(out,
		corev1.EnvVar{Name: rundir.EnvRendezvous, Value: endpoint},
		corev1.EnvVar{Name: rundir.EnvRendezvousID, Value: s.Name},
		corev1.EnvVar{Name: rundir.EnvTorchrunArgs, Value: args})
}

// JobSet API the cluster may serve.
const (
	JobSetGroup    = "jobset.x-k8s.io"
	JobSetVersion  = "v1alpha2"
	JobSetResource = "jobsets"
	jobSetReplica  = "node"
)

// renderJobSet wraps the same Job in a JobSet of one replicated job; the
// JobSet controller makes the headless Service (named after the JobSet)
// and restarts nothing.
func renderJobSet(j Job, s Submission) *unstructured.Unstructured {
	head := rendezvousHost(j, s, fmt.Sprintf("%s-%s-0-0.%s", s.Name, jobSetReplica, s.Name))
	jobTemplate := toMap(batchv1.JobTemplateSpec{Spec: jobSpec(j, s, head)})
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": JobSetGroup + "/" + JobSetVersion,
		"kind":       "JobSet",
		"metadata":   map[string]any{"name": s.Name, "namespace": j.Namespace, "labels": anyMap(labels(j, s))},
		"spec": map[string]any{
			"network":        map[string]any{"enableDNSHostnames": true, "publishNotReadyAddresses": true},
			"failurePolicy":  map[string]any{"maxRestarts": int64(0)},
			"replicatedJobs": []any{map[string]any{"name": jobSetReplica, "replicas": int64(1), "template": jobTemplate}},
		},
	}}
}

func anyMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
