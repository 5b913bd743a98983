// Package kubetest is the one way the project's suites get a real API server (envtest's kube-apiserver and
// etcd, with the project's CRDs) and the one stand-in for the parts of a cluster envtest lacks: the
// StatefulSet controller and the kubelet, which make a database's pod ready. Every suite that needs them
// (the controllers, the kubectl plugin, the chart, the scale test) uses these, so a change to how the servers
// start or how a pod becomes ready is made once.
package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/zns-mysql/zns-mysql/test/envtestreap"
)

// SkipReason is "" when envtest's binaries are configured, else the one line a suite skips with.
func SkipReason() string {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return "needs KUBEBUILDER_ASSETS (kube-apiserver and etcd; `make test` builds them with hack/envtest-assets.sh)"
	}
	return ""
}

// RepoRoot is the checkout's root, found from this file's place in it.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Start starts kube-apiserver and etcd with the project's CRDs (config/crd/bases), after configure has
// adjusted the environment (an API server flag, say). The servers are reaped when the test binary ends
// however it ends (envtestreap); the caller stops them with env.Stop on a normal exit.
func Start(configure ...func(*envtest.Environment)) (*envtest.Environment, *rest.Config, error) {
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	for _, c := range configure {
		c(env)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("envtest failed to start: %w", err)
	}
	// A panic or a -timeout ends the binary without running the caller's deferred Stop.
	envtestreap.Guard()
	return env, cfg, nil
}

// ReadyStatefulSets plays the StatefulSet controller and the kubelet until ctx ends: every StatefulSet the
// list options select and include accepts (nil: all) becomes ready on its current generation, as a rolled
// pod does, checked every `every`. It writes only what changed.
func ReadyStatefulSets(ctx context.Context, c client.Client, every time.Duration, include func(*appsv1.StatefulSet) bool,
	opts ...client.ListOption) {
	for ctx.Err() == nil {
		list := &appsv1.StatefulSetList{}
		if err := c.List(ctx, list, opts...); err == nil {
			for i := range list.Items {
				sts := &list.Items[i]
				if include != nil && !include(sts) || sts.Status.ObservedGeneration == sts.Generation && sts.Status.ReadyReplicas == 1 {
					continue
				}
				rev := fmt.Sprintf("r%d", sts.Generation)
				sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: 1,
					CurrentReplicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1, CurrentRevision: rev, UpdateRevision: rev}
				_ = c.Status().Update(ctx, sts)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}
