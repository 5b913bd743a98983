package controller_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/controller"
	"github.com/zns-mysql/zns-mysql/operator/internal/opmetrics"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/scale"
	"github.com/zns-mysql/zns-mysql/test/kubetest"
)

// The suite runs one real kube-apiserver and etcd (envtest) and one manager with the operator's reconcilers.
// No kubelet, scheduler or controller-manager runs: tests play their part by writing the status of Jobs,
// StatefulSets and Pods, which is exactly what the reconciler reads.
var (
	k8s       client.Client
	restCfg   *rest.Config
	envReason string // why the suite cannot run, "" when it can
	nsCounter atomic.Int64
)

const (
	testPreflightRetry = 2 * time.Second
	testBlockedRetry   = time.Second
	perconaTestImage   = "example.test/percona-zenfs:test"
	percona84TestImage = "example.test/percona-84:test"
	mariadbTestImage   = "example.test/mariadb-myrocks:test"
	benchTestImage     = "example.test/bench:test"
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if envReason = kubetest.SkipReason(); envReason != "" {
		return m.Run()
	}
	// Reconcile errors are expected in the failure-path tests; show the operator's log only when asked.
	logOut := io.Discard
	if os.Getenv("ZNS_TEST_VERBOSE") != "" {
		logOut = os.Stderr
	}
	logf.SetLogger(zap.New(zap.WriteTo(logOut), zap.UseDevMode(true)))
	env, cfg, err := kubetest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	restCfg = cfg

	if err := v1alpha1.AddToScheme(clientgoscheme.Scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := startManager(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopManager()

	k8s, err = client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func requireEnv(t *testing.T) {
	t.Helper()
	if envReason != "" {
		t.Skip(envReason)
	}
}

// newNamespace gives each test its own namespace, so tests do not see each other's objects.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%d", time.Now().Unix()%100000, nsCounter.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// eventuallyTimeout bounds a wait for the operator. Uncontended, its reconciles take milliseconds; in make test's
// stage 6 the QEMU guest tier emulates a CPU beside this package on 2 cores, and there a clean-clone .ci/run
// (2026-11-28) waited more than 20 s for a Benchmark's run Job after its last steady-state round.
const eventuallyTimeout = 60 * time.Second

// eventually polls cond until it returns nil or the timeout expires, and fails with its last error.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(eventuallyTimeout)
	var last error
	for time.Now().Before(deadline) {
		if last = cond(); last == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, last)
}

// consistently checks that cond holds for the whole duration.
func consistently(t *testing.T, what string, d time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := cond(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var (
	stopCurrent func()
	// metricsAddr is where the suite's manager serves its metrics (the same port across restarts).
	metricsAddr     string
	managerRequests = scale.NewRequestCounter()
	// podLogs plays the kubelet's log endpoint, which envtest lacks: tests record what a runner pod printed.
	podLogs = &recordedLogs{logs: map[string]string{}}
)

// startManager starts the suite's manager.
func startManager() error {
	stop, err := launchManager(nil)
	if err != nil {
		return err
	}
	stopCurrent = stop
	return nil
}

// launchManager starts a manager with the operator's reconcilers, as cmd/manager does. With replicaClient it
// starts a second one beside the suite's, as two operators would run for a moment without leader election: it
// reconciles ZNSDatabases only, serves no metrics, and reads through replicaClient's wrapping of its client.
func launchManager(replicaClient func(client.Client) client.Client) (stop func(), err error) {
	replica := replicaClient != nil
	// Every request the manager makes is counted (TestNoWritesWhenNothingChanges).
	mcfg := rest.CopyConfig(restCfg)
	mcfg.WrapTransport = managerRequests.Wrap
	if metricsAddr == "" {
		addr, err := freeLocalAddr()
		if err != nil {
			return nil, err
		}
		metricsAddr = addr
	}
	metrics := metricsserver.Options{BindAddress: metricsAddr, SecureServing: true,
		FilterProvider: filters.WithAuthenticationAndAuthorization}
	if replica {
		metrics = metricsserver.Options{BindAddress: "0"}
	}
	mgr, err := ctrl.NewManager(mcfg, ctrl.Options{
		Scheme: clientgoscheme.Scheme,
		// As cmd/manager serves them: HTTPS, callers authenticated and authorized by the API server.
		Metrics: metrics,
		Client:  client.Options{Cache: &client.CacheOptions{DisableFor: controller.UncachedObjects()}},
		NewClient: func(cfg *rest.Config, opts client.Options) (client.Client, error) {
			c, err := client.New(cfg, opts)
			if err != nil || !replica {
				return c, err
			}
			return replicaClient(c), nil
		},
		// A restarted manager registers the same controller names again.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	if err := controller.SetupZNSDatabase(mgr, controller.Options{
		Images: map[resources.ImageKey]string{
			{Flavor: v1alpha1.FlavorPercona, Version: v1alpha1.MySQL80}: perconaTestImage,
			{Flavor: v1alpha1.FlavorPercona, Version: v1alpha1.MySQL84}: percona84TestImage,
			{Flavor: v1alpha1.FlavorMariaDB}:                            mariadbTestImage,
		},
		BenchImage:     benchTestImage,
		PreflightRetry: testPreflightRetry,
		BlockedRetry:   testBlockedRetry,
	}); err != nil {
		return nil, err
	}
	if replica {
		return startedManager(mgr), nil
	}
	if err := controller.SetupBenchmark(mgr, benchTestImage, podLogs); err != nil {
		return nil, err
	}
	if err := controller.SetupZonedDeviceHolder(mgr); err != nil {
		return nil, err
	}
	if err := opmetrics.Register(crmetrics.Registry, mgr.GetClient()); err != nil {
		return nil, err
	}
	return startedManager(mgr), nil
}

func startedManager(mgr ctrl.Manager) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() { cancel(); <-done }
}

func stopManager() {
	if stopCurrent != nil {
		stopCurrent()
		stopCurrent = nil
	}
}

// restartManager plays an operator restart: every in-memory state of the reconcilers is lost.
func restartManager(t *testing.T) {
	t.Helper()
	stopManager()
	if err := startManager(); err != nil {
		t.Fatal(err)
	}
}

type recordedLogs struct {
	mu   sync.Mutex
	logs map[string]string
}

func (r *recordedLogs) set(namespace, pod, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs[namespace+"/"+pod] = text
}

func (r *recordedLogs) Read(_ context.Context, namespace, pod, _ string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	text, ok := r.logs[namespace+"/"+pod]
	if !ok {
		return "", fmt.Errorf("no log recorded for pod %s/%s", namespace, pod)
	}
	return text, nil
}
