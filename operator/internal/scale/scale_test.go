//go:build scale

package scale

import (
	"context"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/controller"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/test/kubetest"
)

// TestScale runs the operator's manager, wired as cmd/manager wires it, against a real kube-apiserver and etcd
// (envtest) with ZNS_SCALE_DATABASES ZNSDatabases (default 500) and ZNS_SCALE_BENCHMARKS Benchmarks (default
// 100), and prints what it costs: the reconcile time per controller (p50, p99, from controller-runtime's own
// histograms), the API requests it makes while nothing changes (ZNS_SCALE_IDLE, default 60 s; the goal for
// writes is 0), and its memory. It is behind the build tag scale: make bench-scale runs it.
//
// The test plays the StatefulSet controller and kubelet for most namespaces (their StatefulSets become ready),
// so that their Benchmarks take their databases, switch them to the bulkload profile and start prepare Jobs,
// which then never finish (no kubelet): a Benchmark in the middle of its work. In the other namespaces nothing
// becomes ready: their Benchmarks wait for their targets. Nothing changes after that.
func TestScale(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs KUBEBUILDER_ASSETS (make bench-scale sets it from hack/envtest-assets.sh)")
	}
	nDB, nBench := envInt(t, "ZNS_SCALE_DATABASES", 500), envInt(t, "ZNS_SCALE_BENCHMARKS", 100)
	idle := time.Duration(envInt(t, "ZNS_SCALE_IDLE", 60)) * time.Second
	const perNS = 10 // databases per namespace; the first 4 are the targets of 2 Benchmarks
	nNS := (nDB + perNS - 1) / perNS
	if nBench > 2*nNS {
		t.Fatalf("%d Benchmarks need %d namespaces of %d databases", nBench, (nBench+1)/2, perNS)
	}
	readyNS := nNS * 4 / 5 // the rest never becomes ready

	cfg, scheme, k8s := startEnvtest(t)

	counter := NewRequestCounter()
	stop := startManager(t, cfg, scheme, counter)
	t.Cleanup(stop)
	before, _ := ReadMemory()
	base := reconcileHists(t, controllers, nil)

	ctx := context.Background()
	start := time.Now()
	ready := map[string]bool{}
	var dbs []*v1alpha1.ZNSDatabase
	var benches []*v1alpha1.Benchmark
	for i := range nNS {
		ns := fmt.Sprintf("scale-%03d", i)
		ready[ns] = i < readyNS
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < perNS && len(dbs) < nDB; j++ {
			db := volumeDB(ns, fmt.Sprintf("db-%d", j), j)
			if err := k8s.Create(ctx, db); err != nil {
				t.Fatal(err)
			}
			dbs = append(dbs, db)
		}
		for j := 0; j < 2 && len(benches) < nBench; j++ {
			b := benchmark(ns, fmt.Sprintf("bench-%d", j), fmt.Sprintf("db-%d", 2*j), fmt.Sprintf("db-%d", 2*j+1))
			if err := k8s.Create(ctx, b); err != nil {
				t.Fatal(err)
			}
			benches = append(benches, b)
		}
	}
	created := time.Since(start)
	t.Logf("created %d ZNSDatabases and %d Benchmarks in %d namespaces in %s", len(dbs), len(benches), nNS, created.Round(time.Millisecond))

	playCtx, stopPlaying := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); playStatefulSets(playCtx, k8s, ready) }()
	t.Cleanup(func() { stopPlaying(); wg.Wait() })

	// Converged: every database observed with an Available condition, every Benchmark where it stays: its
	// prepare Jobs created in a ready namespace, waiting for its targets in the others.
	deadline := time.Now().Add(time.Duration(envInt(t, "ZNS_SCALE_CONVERGE", 40)) * time.Minute)
	var last string
	nextReport := time.Now().Add(30 * time.Second)
	for {
		if last = notConverged(ctx, k8s, ready); last == "" {
			break
		}
		if time.Now().After(nextReport) || time.Now().After(deadline) {
			snap, h := counter.Snapshot(), reconcileHists(t, controllers, base)
			t.Logf("%s: %d API requests (%d writes), %d + %d reconciles so far; not converged: %s", time.Since(start).Round(time.Second),
				total(snap), Writes(snap), h["znsdatabase"].Count, h["benchmark"].Count, last)
			nextReport = time.Now().Add(30 * time.Second)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not converged after %s (ZNS_SCALE_CONVERGE minutes):\n%s", time.Since(start).Round(time.Second), Format(counter.Snapshot()))
		}
		time.Sleep(time.Second)
	}
	converged := time.Since(start)
	t.Logf("converged %s after the first create", converged.Round(time.Millisecond))
	busyHists := reconcileHists(t, controllers, base)
	busy := counter.Snapshot()

	// Steady state: nothing changes. A short settle lets the last status writes' own watch events pass.
	time.Sleep(5 * time.Second)
	if last := notConverged(ctx, k8s, ready); last != "" {
		t.Fatalf("left its converged state while settling: %s", last)
	}
	counter.Reset()
	idleStart := reconcileHists(t, controllers, base)
	// Per minute too: writes left over from the convergence (items in their error backoff) die out, a
	// steady cause does not.
	prevWrites := 0
	eachMinute(idle, func(elapsed, step time.Duration) {
		snap, h := counter.Snapshot(), reconcileHists(t, controllers, base)
		t.Logf("idle %s: %d writes in the last %s; %d znsdatabase reconciles so far", elapsed, Writes(snap)-prevWrites, step,
			h["znsdatabase"].Count-idleStart["znsdatabase"].Count)
		prevWrites = Writes(snap)
	})
	quiet := counter.Snapshot()
	idleEnd := reconcileHists(t, controllers, base)
	mem, err := ReadMemory()
	if err != nil {
		t.Fatal(err)
	}
	if last := notConverged(ctx, k8s, ready); last != "" {
		t.Errorf("left its converged state while idle: %s", last)
	}

	perMin := func(n int) float64 { return float64(n) / idle.Minutes() }
	fmt.Printf("\n== operator at scale (envtest, kube-apiserver + etcd %s; %d CPUs) ==\n", os.Getenv("KUBEBUILDER_ASSETS"), goruntime.NumCPU())
	fmt.Printf("objects: %d ZNSDatabases, %d Benchmarks in %d namespaces (%d with ready StatefulSets)\n", len(dbs), len(benches), nNS, readyNS)
	fmt.Printf("create: %s; converged: %s after the first create\n", created.Round(time.Millisecond), converged.Round(time.Millisecond))
	fmt.Printf("until converged: %d API requests, %d of them writes\n", total(busy), Writes(busy))
	fmt.Printf("reconcile time until converged (controller-runtime histogram, interpolated within buckets):\n")
	for _, c := range controllers {
		h := busyHists[c]
		fmt.Printf("  %-12s %6d reconciles  p50 %7.1f ms  p99 %7.1f ms  mean %7.1f ms\n", c, h.Count,
			h.Quantile(0.5)*1000, h.Quantile(0.99)*1000, h.Sum/float64(max(h.Count, 1))*1000)
	}
	fmt.Printf("idle %s (nothing changes): %.1f API writes/min, %.1f requests/min\n", idle, perMin(Writes(quiet)), perMin(total(quiet)))
	for _, c := range controllers {
		d := idleEnd[c].Sub(idleStart[c])
		fmt.Printf("  %-12s %6.1f reconciles/min", c, perMin(int(d.Count)))
		if d.Count > 0 {
			fmt.Printf("  p50 %7.1f ms  p99 %7.1f ms", d.Quantile(0.5)*1000, d.Quantile(0.99)*1000)
		}
		fmt.Println()
	}
	fmt.Print(Format(quiet))
	fmt.Printf("memory of the test process (manager + the test's client): heap in use %.1f MiB (%d objects; %.1f MiB before the objects), Go sys %.1f MiB, RSS %.1f MiB, peak RSS %.1f MiB\n",
		mib(mem.HeapInuse), mem.HeapObjects, mib(before.HeapInuse), mib(mem.Sys), mib(uint64(mem.RSS)), mib(uint64(mem.PeakRSS)))
}

var controllers = []string{"znsdatabase", "benchmark"}

// reconcileHists reads controller-runtime's reconcile-time histogram of each named controller from its registry,
// less what base holds (nil: nothing). The registry is the process's: a test that shares its process with
// another one's manager counts from a base read when its own manager started.
func reconcileHists(t *testing.T, names []string, base map[string]Histogram) map[string]Histogram {
	out := map[string]Histogram{}
	for _, c := range names {
		h, err := GatherHistogram(crmetrics.Registry, "controller_runtime_reconcile_time_seconds", map[string]string{"controller": c})
		if err != nil {
			t.Fatal(err)
		}
		out[c] = h.Sub(base[c])
	}
	return out
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// eachMinute sleeps for d in steps of at most a minute and calls f after each, with the time slept so far.
func eachMinute(d time.Duration, f func(elapsed, step time.Duration)) {
	for elapsed := time.Duration(0); elapsed < d; {
		step := min(time.Minute, d-elapsed)
		time.Sleep(step)
		elapsed += step
		f(elapsed, step)
	}
}

// startEnvtest starts kube-apiserver and etcd with the project's CRDs (stopped at the test's end) and sets the
// process's logger: silent, since the operator logs every step, unless ZNS_TEST_VERBOSE is set. It returns the
// admin config, the scheme, and the test's own client, which is neither counted nor throttled.
func startEnvtest(t *testing.T) (*rest.Config, *runtime.Scheme, client.WithWatch) {
	logOut := io.Discard
	if os.Getenv("ZNS_TEST_VERBOSE") != "" {
		logOut = os.Stderr
	}
	logf.SetLogger(zap.New(zap.WriteTo(logOut)))
	env, cfg, err := kubetest.Start(func(env *envtest.Environment) {
		// envtest's default service range, 10.0.0.0/24, holds 254 ClusterIPs: fewer than one Service per database.
		env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	testCfg := rest.CopyConfig(cfg)
	testCfg.QPS, testCfg.Burst = 500, 1000
	k8s, err := client.NewWithWatch(testCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, scheme, k8s
}

// startManager starts a manager as cmd/manager does, through a config whose requests the counter sees, with
// the client-side rate limit ctrl.GetConfig gives it (20 QPS, burst 30).
func startManager(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme, counter *RequestCounter) func() {
	mcfg := rest.CopyConfig(cfg)
	mcfg.QPS, mcfg.Burst = 20, 30
	mcfg.WrapTransport = counter.Wrap
	managed := labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue})
	mgr, err := ctrl.NewManager(mcfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Client:  client.Options{Cache: &client.CacheOptions{DisableFor: controller.UncachedObjects()}},
		Cache:   cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: managed}}},
		// Controller names are checked process-wide: the package's two tests each start a manager.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := controller.SetupZNSDatabase(mgr, controller.Options{
		Images: map[resources.ImageKey]string{
			{Flavor: v1alpha1.FlavorPercona, Version: v1alpha1.MySQL80}: "example.test/percona:scale",
			{Flavor: v1alpha1.FlavorMariaDB}:                            "example.test/mariadb:scale",
		},
		PreflightRetry: time.Minute, BlockedRetry: 30 * time.Second, // cmd/manager's defaults
	}); err != nil {
		t.Fatal(err)
	}
	if err := controller.SetupBenchmark(mgr, "example.test/bench:scale", noLogs{}); err != nil {
		t.Fatal(err)
	}
	if err := controller.SetupZonedDeviceHolder(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() { cancel(); <-done }
}

type noLogs struct{}

func (noLogs) Read(context.Context, string, string, string) (string, error) {
	return "", fmt.Errorf("no pod logs at scale: no Job finishes")
}

func volumeDB(ns, name string, i int) *v1alpha1.ZNSDatabase {
	engine, flavor := v1alpha1.EngineRocksDB, v1alpha1.FlavorMariaDB
	if i%2 == 1 {
		engine = v1alpha1.EngineInnoDB
	}
	if i%4 >= 2 {
		flavor = v1alpha1.FlavorPercona
	}
	return &v1alpha1.ZNSDatabase{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ZNSDatabaseSpec{
			Storage: v1alpha1.StorageSpec{Volume: &v1alpha1.VolumeSource{StorageClassName: ptr.To("fast-xfs"), Size: resource.MustParse("20Gi")}},
			Engine:  engine, Flavor: flavor,
		},
	}
}

func benchmark(ns, name string, targets ...string) *v1alpha1.Benchmark {
	b := &v1alpha1.Benchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.BenchmarkSpec{Workload: "oltp_update_index", Tables: 2, TableSize: 1000, Threads: 8,
			DurationSeconds: 60, ReportIntervalSeconds: 1, Iterations: 1, TargetTimeoutSeconds: 3600},
	}
	for _, tg := range targets {
		b.Spec.Targets = append(b.Spec.Targets, v1alpha1.BenchmarkTarget{Name: tg})
	}
	return b
}

// playStatefulSets plays the StatefulSet controller and kubelet in the ready namespaces: a StatefulSet becomes
// ready on its current generation, as a rolled pod does. It writes only what changed.
func playStatefulSets(ctx context.Context, k8s client.Client, ready map[string]bool) {
	kubetest.ReadyStatefulSets(ctx, k8s, 500*time.Millisecond, func(sts *appsv1.StatefulSet) bool { return ready[sts.Namespace] })
}

// notConverged says what is not yet where it stays, "" when everything is.
func notConverged(ctx context.Context, k8s client.Client, ready map[string]bool) string {
	dbs := &v1alpha1.ZNSDatabaseList{}
	if err := k8s.List(ctx, dbs); err != nil {
		return err.Error()
	}
	for _, db := range dbs.Items {
		c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionAvailable)
		if db.Status.ObservedGeneration != db.Generation || c == nil {
			return fmt.Sprintf("ZNSDatabase %s/%s not observed yet", db.Namespace, db.Name)
		}
		if ready[db.Namespace] && c.Status != metav1.ConditionTrue {
			return fmt.Sprintf("ZNSDatabase %s/%s not Available: %s", db.Namespace, db.Name, c.Reason)
		}
	}
	benches := &v1alpha1.BenchmarkList{}
	if err := k8s.List(ctx, benches); err != nil {
		return err.Error()
	}
	jobs := &batchv1.JobList{}
	if err := k8s.List(ctx, jobs); err != nil {
		return err.Error()
	}
	perNS := map[string]int{}
	for _, j := range jobs.Items {
		perNS[j.Namespace]++
	}
	for _, b := range benches.Items {
		want := v1alpha1.BenchmarkWaitingForTargets
		if ready[b.Namespace] {
			want = v1alpha1.BenchmarkPreparing
		}
		if b.Status.Phase != want {
			return fmt.Sprintf("Benchmark %s/%s in phase %q, not %q", b.Namespace, b.Name, b.Status.Phase, want)
		}
	}
	wantJobs := map[string]int{}
	for _, b := range benches.Items {
		if ready[b.Namespace] {
			wantJobs[b.Namespace] += len(b.Spec.Targets) // one prepare Job per target
		}
	}
	for ns, n := range wantJobs {
		if perNS[ns] < n {
			return fmt.Sprintf("namespace %s has %d of %d prepare Jobs", ns, perNS[ns], n)
		}
	}
	return ""
}
