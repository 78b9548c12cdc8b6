package kubernetes

import (
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Target names a cluster: a kubeconfig file (empty: $KUBECONFIG, else
// ~/.kube/config) and a context in it (empty: its current context).
type Target struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
}

func (t Target) loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if t.Kubeconfig != "" {
		rules.ExplicitPath = t.Kubeconfig
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: t.Context})
}

// Namespace is the namespace of the target's context, "default" when it
// names none. It reads the kubeconfig only.
func (t Target) Namespace() (string, error) {
	ns, _, err := t.loader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	return ns, nil
}

// Cluster is a connection to a cluster's API server.
type Cluster struct {
	Client  k8s.Interface
	Dynamic dynamic.Interface
	// Host is the API server's URL, for messages.
	Host string
}

// Connect returns a connection to the target's API server; it sends no
// request.
func Connect(t Target) (*Cluster, error) {
	cfg, err := t.loader().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	return NewCluster(cfg)
}

// NewCluster returns a connection made with cfg.
func NewCluster(cfg *rest.Config) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "gpuflow"
	client, err := k8s.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Client: client, Dynamic: dyn, Host: cfg.Host}, nil
}

// HasJobSet reports whether the cluster serves the JobSet API: its CRD is
// installed.
func (c *Cluster) HasJobSet() (bool, error) {
	list, err := c.Client.Discovery().ServerResourcesForGroupVersion(JobSetGroup + "/" + JobSetVersion)
	if err != nil {
		if discovery.IsGroupDiscoveryFailedError(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == JobSetResource }), nil
}

// Probe answers the plan's questions about the clusters that kubernetes
// executors name, each request bounded by Timeout.
type Probe struct {
	Timeout time.Duration
}

// HasJobSet reports whether t's cluster serves the JobSet API.
func (p Probe) HasJobSet(t Target) (bool, error) {
	cfg, err := t.loader().ClientConfig()
	if err != nil {
		return false, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.Timeout = p.Timeout
	c, err := NewCluster(cfg)
	if err != nil {
		return false, err
	}
	return c.HasJobSet()
}
