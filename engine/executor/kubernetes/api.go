package kubernetes

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var jobSetResource = schema.GroupVersionResource{Group: JobSetGroup, Version: JobSetVersion, Resource: JobSetResource}

// fieldManager names gpuflow in the objects' managed fields.
const fieldManager = "gpuflow"

// submit creates a submission's objects: the Job (or JobSet), then the
// Service, owned by the Job so that deleting the Job deletes it too.
func (c *Cluster) submit(ctx context.Context, j Job, s Submission) (Ref, error) {
	o := Render(j, s)
	ref := Ref{Kind: KindJob, Namespace: j.Namespace, Name: s.Name, RunDir: s.RunDir}
	create := metav1.CreateOptions{FieldManager: fieldManager}
	if o.JobSet != nil {
		ref.Kind = KindJobSet
		created, err := c.Dynamic.Resource(jobSetResource).Namespace(j.Namespace).Create(ctx, o.JobSet, create)
		if err != nil {
			return ref, err
		}
		ref.UID = string(created.GetUID())
		return ref, nil
	}
	created, err := c.Client.BatchV1().Jobs(j.Namespace).Create(ctx, o.Job, create)
	if err != nil {
		return ref, err
	}
	ref.UID = string(created.UID)
	if o.Service == nil {
		return ref, nil
	}
	o.Service.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: created.Name,
		UID: created.UID, BlockOwnerDeletion: ptr.To(true)}}
	if _, err := c.Client.CoreV1().Services(j.Namespace).Create(ctx, o.Service, create); err != nil {
		_ = c.delete(ctx, ref)
		return ref, err
	}
	return ref, nil
}

// delete deletes the Job (or JobSet) with foreground propagation: the
// object stays until its pods are gone.
func (c *Cluster) delete(ctx context.Context, ref Ref) error {
	opts := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
		Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID(ref.UID))}}
	var err error
	if ref.Kind == KindJobSet {
		err = c.Dynamic.Resource(jobSetResource).Namespace(ref.Namespace).Delete(ctx, ref.Name, opts)
	} else {
		err = c.Client.BatchV1().Jobs(ref.Namespace).Delete(ctx, ref.Name, opts)
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or another object of that name
	}
	return err
}

// exists reports whether the Job ref names is still there.
func (c *Cluster) exists(ctx context.Context, ref Ref) (bool, error) {
	st, err := c.status(ctx, ref)
	if err != nil {
		return false, err
	}
	return !st.gone, nil
}

// jobStatus is what the follower reads on each poll.
type jobStatus struct {
	// gone: the object is not there (deleted, or replaced by another of
	// its name).
	gone     bool
	deleting bool
	// done: the Job completed; failed: it failed, for reason.
	done, failed    bool
	reason, message string
	pods            []corev1.Pod
}

func (c *Cluster) status(ctx context.Context, ref Ref) (jobStatus, error) {
	var st jobStatus
	var err error
	if ref.Kind == KindJobSet {
		st, err = c.jobSetStatus(ctx, ref)
	} else {
		st, err = c.jobStatus(ctx, ref)
	}
	if err != nil || st.gone {
		return st, err
	}
	pods, err := c.Client.CoreV1().Pods(ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + ref.Name})
	if err != nil {
		return st, err
	}
	st.pods = pods.Items
	return st, nil
}

func (c *Cluster) jobStatus(ctx context.Context, ref Ref) (jobStatus, error) {
	job, err := c.Client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return jobStatus{gone: true}, nil
	}
	if err != nil {
		return jobStatus{}, err
	}
	st := jobStatus{gone: string(job.UID) != ref.UID, deleting: job.DeletionTimestamp != nil}
	for _, cond := range job.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			st.done = true
		case batchv1.JobFailed:
			st.failed, st.reason, st.message = true, cond.Reason, cond.Message
		}
	}
	return st, nil
}

func (c *Cluster) jobSetStatus(ctx context.Context, ref Ref) (jobStatus, error) {
	js, err := c.Dynamic.Resource(jobSetResource).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return jobStatus{gone: true}, nil
	}
	if err != nil {
		return jobStatus{}, err
	}
	st := jobStatus{gone: string(js.GetUID()) != ref.UID, deleting: js.GetDeletionTimestamp() != nil}
	conds, _, _ := unstructured.NestedSlice(js.Object, "status", "conditions")
	for _, x := range conds {
		cond, _ := x.(map[string]any)
		if cond["status"] != "True" {
			continue
		}
		switch cond["type"] {
		case "Completed":
			st.done = true
		case "Failed":
			st.failed, st.reason, st.message = true, fmt.Sprint(cond["reason"]), fmt.Sprint(cond["message"])
		}
	}
	return st, nil
}
