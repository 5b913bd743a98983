// Package e2e runs the whole flow against a real cluster: the chart installs the operator, ZNSDatabases become
// Available, rows go in and come out through the Service, a Benchmark of two targets completes with results,
// and deleting everything leaves nothing behind but what is kept on purpose.
//
// It runs only when asked (ZNS_E2E=1, which `make e2e` and CI set after creating the cluster and loading the
// images; ZNS_E2E_KUBECONFIG names the cluster's kubeconfig, else the usual KUBECONFIG rules apply, and
// ZNS_E2E_TAG the images' tag); otherwise every test skips with the reason.
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/yaml"

	"github.com/zns-mysql/zns-mysql/config/samples"
	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/test/benchtiming"
)

const operatorNamespace = "zns-mysql-system"

var (
	k8s       client.Client
	clientset *kubernetes.Clientset
	ctx       = context.Background()
	skipWhy   string
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	if os.Getenv("ZNS_E2E") != "1" {
		skipWhy = "needs a kind cluster with the images: `make test` or `make e2e` bring one up (or set ZNS_E2E=1 and ZNS_E2E_KUBECONFIG at a cluster with the images loaded)"
		if os.Getenv("ZNS_REQUIRE_E2E") == "1" {
			fmt.Fprintln(os.Stderr, "e2e: ZNS_REQUIRE_E2E=1 but ZNS_E2E is not 1: no cluster was brought up for the suite")
			os.Exit(1)
		}
		os.Exit(m.Run())
	}
	if err := v1alpha1.AddToScheme(clientgoscheme.Scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := clusterConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: ZNS_E2E=1 but no cluster configuration: %v\n", err)
		os.Exit(1)
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := clientset.Discovery().ServerVersion(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: ZNS_E2E=1 but the cluster does not answer: %v\n", err)
		os.Exit(1)
	}
	if err := installChart(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: installing the chart: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func clusterConfig() (*rest.Config, error) {
	if kc := os.Getenv("ZNS_E2E_KUBECONFIG"); kc != "" {
		return clientcmd.BuildConfigFromFlags("", kc)
	}
	return config.GetConfig()
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// installChart installs (or upgrades) the operator with the images the cluster has loaded.
func installChart() error {
	tag := env("ZNS_E2E_TAG", "latest")
	args := []string{"upgrade", "--install", "zns-mysql", filepath.Join(repoRoot(), "charts", "zns-mysql"),
		"--namespace", operatorNamespace, "--create-namespace", "--wait", "--timeout", (5 * time.Minute * timeScale).String(),
		"--set", "image.tag=" + tag, "--set", "mariadbImage.tag=" + tag, "--set", "perconaImage.tag=" + tag,
		"--set", "benchImage.tag=" + tag, "--set", "image.pullPolicy=IfNotPresent", "--set", "logLevel=debug"}
	if kc := os.Getenv("ZNS_E2E_KUBECONFIG"); kc != "" {
		args = append(args, "--kubeconfig", kc)
	}
	if p := os.Getenv("ZNS_E2E_PROBE_PERIOD"); p != "" { // the emulated zoned node (hack/qemu/zoned-node.sh env)
		args = append(args, "--set", "databaseProbePeriodSeconds="+p)
	}
	cmd := exec.Command(env("ZNS_HELM", "helm"), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func requireCluster(t *testing.T) {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
}

// beside runs the test beside the kind tier's others (t.Parallel; go test's -parallel, GOMAXPROCS by default,
// bounds how many): each works in its own namespace with its own devices and volumes, and most of a test's time
// is spent waiting for pods on a cluster that runs natively. The zoned node's tests never run beside each other
// (TestZonedNodeTestsListed): they share that node's two emulated vCPUs and its one spare zoned device. The
// timing lines the tests log are therefore taken beside other tests; docs/performance.md's were taken alone
// (go test -parallel 1).
func beside(t *testing.T) {
	t.Helper()
	requireCluster(t)
	t.Parallel()
}

func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dump(t, ns.Name)
		}
		_ = k8s.Delete(ctx, ns)
	})
	return ns.Name
}

// waitFor polls cond every two seconds until it holds or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() error) {
	t.Helper()
	start := time.Now()
	said := start
	var last error
	for time.Since(start) < timeout {
		if last = cond(); last == nil {
			t.Logf("%s after %s", what, time.Since(start).Round(time.Second))
			return
		}
		// make test's progress line quotes a running test's last line: a long wait says what it waits for
		if time.Since(said) >= waitReport {
			said = time.Now()
			t.Logf("still waiting for %s after %s (of %s): %s", what, time.Since(start).Round(time.Second), timeout, cut(last.Error(), 300))
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("%s: not within %s: %v", what, timeout, last)
}

// waitReport is how often waitFor says what it still waits for.
const waitReport = time.Minute

// cut shortens s to at most n bytes, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// scenario is part of a scenario of config/samples (samples.Lab, samples.ZonedNode) placed by p: the e2e flows
// create the objects the demo and a user's kubectl apply -k create, so that a scenario is described once.
func scenario(t *testing.T, dir string, p samples.Placement, names ...string) *samples.Scenario {
	t.Helper()
	s, err := samples.Load(dir)
	if err == nil {
		s, err = s.Select(names...)
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Place(p)
	return s
}

// labOnKind places the lab's scenario on the kind cluster: MariaDB (the Percona image needs repo.percona.com),
// and volumes and memory sized for a 2-core machine running several databases.
func labOnKind(ns string) samples.Placement {
	return samples.Placement{Namespace: ns, Flavor: v1alpha1.FlavorMariaDB, Memory: ptr.To(resource.MustParse("1Gi")),
		VolumeSize: ptr.To(resource.MustParse("2Gi"))}
}

// labVolumeDB is a database of the lab's scenario on a volume (myrocks-xfs, innodb-baseline) under another name,
// for tests that need one database of their own.
func labVolumeDB(t *testing.T, ns, sample, name string) *v1alpha1.ZNSDatabase {
	t.Helper()
	db := scenario(t, samples.Lab, labOnKind(ns), sample).Databases[0]
	db.Name = name
	return db
}

func waitAvailable(t *testing.T, db *v1alpha1.ZNSDatabase) {
	t.Helper()
	waitAvailableWithin(t, db, 8*time.Minute)
}

func waitAvailableWithin(t *testing.T, db *v1alpha1.ZNSDatabase, timeout time.Duration) {
	t.Helper()
	waitFor(t, db.Name+" Available", timeout, func() error {
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionAvailable)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("conditions: %s", briefConditions(cur.Status.Conditions))
		}
		return nil
	})
}

// briefConditions is type=status reason (message) of each condition, the ones not True first: what a wait
// reports every minute, and its failure.
func briefConditions(conds []metav1.Condition) string {
	var notTrue, isTrue []string
	for _, c := range conds {
		s := fmt.Sprintf("%s=%s %s (%s)", c.Type, c.Status, c.Reason, c.Message)
		if c.Status == metav1.ConditionTrue {
			isTrue = append(isTrue, s)
		} else {
			notTrue = append(notTrue, s)
		}
	}
	if len(conds) == 0 {
		return "none yet"
	}
	return strings.Join(append(notTrue, isTrue...), "; ")
}

// sqlJob runs the mysql client of the bench image against a database and returns its output.
func sqlJob(t *testing.T, db *v1alpha1.ZNSDatabase, sql string) string {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, GenerateName: "sql-"},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name:    "sql",
					Image:   "zns-mysql/bench:" + env("ZNS_E2E_TAG", "latest"),
					Command: []string{"mariadb", "-h", db.ServiceName() + "." + db.Namespace + ".svc", "-uroot", "-N", "-e", sql},
					// The client reads the password from the environment, so it is on no command line.
					Env: []corev1.EnvVar{{Name: "MYSQL_PWD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: db.RootSecretName()}, Key: "password"}}}},
				}},
			}},
		},
	}
	if err := k8s.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "SQL Job "+job.Name, 3*time.Minute*timeScale, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		if job.Status.Succeeded > 0 {
			return nil
		}
		if job.Status.Failed > 2 {
			t.Fatalf("SQL Job failed: %s", jobLogs(job))
		}
		return fmt.Errorf("succeeded %d failed %d", job.Status.Succeeded, job.Status.Failed)
	})
	// the succeeded pod's output alone: an earlier attempt that failed (the client refused while the
	// Service's endpoint was not ready yet, under emulation) would put its error before the answer
	return jobLogs(job, corev1.PodSucceeded)
}

// jobLogs: the logs of the Job's pods, of those in the given phases when any are given.
func jobLogs(job *batchv1.Job, phases ...corev1.PodPhase) string {
	pods, err := clientset.CoreV1().Pods(job.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job.Name})
	if err != nil || len(pods.Items) == 0 {
		return fmt.Sprintf("(no pod: %v)", err)
	}
	var b bytes.Buffer
	for _, p := range pods.Items {
		if len(phases) > 0 && !slices.Contains(phases, p.Status.Phase) {
			continue
		}
		raw, err := clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			fmt.Fprintf(&b, "(%s: %v)", p.Name, err)
			continue
		}
		b.Write(raw)
	}
	return b.String()
}

// TestConventionalFlow is the path every machine can run: MyRocks and InnoDB on conventional volumes.
func TestConventionalFlow(t *testing.T) {
	beside(t)
	ns := newNamespace(t, "e2e")
	// the lab's comparison (config/samples): MyRocks and InnoDB on volumes, InnoDB the baseline
	lab := scenario(t, samples.Lab, labOnKind(ns), "myrocks-xfs", "innodb-baseline", "compare")
	rocks, inno := lab.Databases[0], lab.Databases[1]
	for _, db := range []*v1alpha1.ZNSDatabase{rocks, inno} {
		if err := k8s.Create(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	waitAvailable(t, rocks)
	waitAvailable(t, inno)

	out := sqlJob(t, rocks, "CREATE DATABASE IF NOT EXISTS e2e; "+
		"CREATE TABLE e2e.t (id INT PRIMARY KEY, v VARCHAR(16)) ENGINE=ROCKSDB; "+
		"INSERT INTO e2e.t VALUES (1,'one'),(2,'two'),(3,'three'); "+
		"SELECT COUNT(*), ENGINE FROM e2e.t JOIN information_schema.TABLES ON TABLE_SCHEMA='e2e' AND TABLE_NAME='t' GROUP BY ENGINE;")
	if !strings.Contains(out, "3\tROCKSDB") {
		t.Errorf("rows through the Service: %q, want 3 rows in a ROCKSDB table", out)
	}

	// the sample's comparison, sized for this machine
	lab.Place(samples.Placement{Run: samples.Run{Workload: "oltp_update_index", Tables: 2, TableSize: 2000, Threads: 2,
		DurationSeconds: 15, Every: 1, Iterations: 1}})
	cmp := lab.Benchmarks[0].Spec
	cmp.StartDelaySeconds = 10 // the start is set once both runners are ready: this is only its way to them
	b := runBenchmark(t, ns, "cmp", cmp)
	for _, ts := range b.Status.Targets {
		if ts.State != v1alpha1.TargetDone || ts.Rows != 4000 || len(ts.Iterations) != 1 || ts.Mean == nil || ts.VsBaseline == nil {
			t.Errorf("target %s: %+v", ts.Name, ts)
			continue
		}
		r := ts.Iterations[0]
		for name, v := range map[string]string{"tps": r.TPS, "qps": r.QPS, "latencyAvgMs": r.LatencyAvgMs,
			"latencyPctMs": r.LatencyPctMs, "latencyMaxMs": r.LatencyMaxMs, "tpsRelDevPct": r.TPSRelDevPct,
			"ratio tps": ts.VsBaseline.TPS} {
			if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 {
				t.Errorf("target %s: %s = %q, want a positive figure", ts.Name, name, v)
			}
		}
		// sysbench's histogram gives the distribution; the runner reads the data size from the server.
		p50, _ := strconv.ParseFloat(r.LatencyP50Ms, 64)
		p999, _ := strconv.ParseFloat(r.LatencyP999Ms, 64)
		if p50 <= 0 || p999 < p50 {
			t.Errorf("target %s: latency distribution p50 %q p99.9 %q", ts.Name, r.LatencyP50Ms, r.LatencyP999Ms)
		}
		if ts.Size == nil || ts.Size.AfterPrepareBytes <= 0 || ts.Size.AfterRunBytes <= 0 || r.DataBytes <= 0 {
			t.Errorf("target %s: data size %+v, run %d bytes", ts.Name, ts.Size, r.DataBytes)
		}
		if r.SeriesConfigMap == "" {
			t.Errorf("target %s: no series ConfigMap", ts.Name)
		} else {
			cm := &corev1.ConfigMap{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.SeriesConfigMap}, cm); err != nil {
				t.Errorf("series ConfigMap: %v", err)
			} else if lines := strings.Count(cm.Data["series.csv"], "\n"); lines < 10 {
				t.Errorf("series.csv has %d lines for a 15 s run at 1 s intervals", lines)
			}
		}
	}
	if !strings.Contains(b.Status.Result, " vs ") || b.Status.Elapsed == "" {
		t.Errorf("result %q, elapsed %q", b.Status.Result, b.Status.Elapsed)
	}
	printComparison(t, b)

	// A second Benchmark over the same databases prepares afresh over the first one's tables, runs the
	// write-only phase on both (conventional) targets before its runs (rounds until their TPS settles), then two
	// workloads in turn over that one prepare.
	// Its clients go by node selector to MyRocks's node: the scheduler takes the selector, and the status records
	// where they ran and whether they shared their database's node (InnoDB's may be on another node of a
	// cluster of several).
	rule := v1alpha1.SteadyStateSpec{RoundSeconds: 5, MaxRounds: 3, Window: 2, MaxRangePercent: 50, MaxSlopeExcursionPercent: 50}
	workloads := []string{"oltp_point_select", "oltp_read_only"}
	dbPod := &corev1.Pod{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: rocks.PodName()}, dbPod); err != nil {
		t.Fatal(err)
	}
	node := dbPod.Spec.NodeName
	again := runBenchmark(t, ns, "again", v1alpha1.BenchmarkSpec{
		Workloads: workloads, Tables: 1, TableSize: 1000, Threads: 1,
		DurationSeconds: 5, ReportIntervalSeconds: 1, Iterations: 1, StartDelaySeconds: 10,
		SteadyState: &rule,
		Clients: &v1alpha1.BenchmarkClients{Placement: v1alpha1.ClientsBySelector,
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelHostname: node}}},
	})
	for _, ts := range again.Status.Targets {
		dbNode := node
		if ts.Name == inno.Name {
			pod := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: inno.PodName()}, pod); err != nil {
				t.Fatal(err)
			}
			dbNode = pod.Spec.NodeName
		}
		if c := ts.Client; c == nil || !slices.Equal(c.Nodes, []string{node}) || c.DatabaseNode != dbNode || c.SharedNode != (dbNode == node) {
			t.Errorf("second Benchmark, target %s: client record %+v, want its clients on %s and its database on %s", ts.Name, c, node, dbNode)
		}
		if ts.State != v1alpha1.TargetDone || ts.Rows != 1000 {
			t.Errorf("second Benchmark, target %s: state %s, %d rows (want 1000: fresh tables)", ts.Name, ts.State, ts.Rows)
		}
		checkSteadyState(t, ts, rule)
		if len(ts.Iterations) != 2 || len(ts.Workloads) != 2 {
			t.Errorf("second Benchmark, target %s: %d runs, %d workload results; want one run of each of %v", ts.Name,
				len(ts.Iterations), len(ts.Workloads), workloads)
			continue
		}
		for i, w := range ts.Workloads {
			if w.Workload != workloads[i] || ts.Iterations[i].Workload != workloads[i] || w.Mean == nil || w.Mean.TPS == "" {
				t.Errorf("second Benchmark, target %s, workload %d: %+v, run %+v", ts.Name, i, w, ts.Iterations[i])
			}
		}
		// a point select is one query, a read-only transaction fourteen: two scripts ran, not one twice
		if a, b := ts.Iterations[0].TPS, ts.Iterations[1].TPS; a == b {
			t.Errorf("second Benchmark, target %s: %s and %s ran at the same %s TPS", ts.Name, workloads[0], workloads[1], a)
		}
	}
	if err := k8s.Delete(ctx, again); err != nil {
		t.Fatal(err)
	}
	// The lease ends with the Benchmark and each database returns to its own profile; its spec is never written.
	for _, db := range []string{rocks.Name, inno.Name} {
		waitFor(t, db+" handed back in its own profile", time.Minute, func() error {
			cur := &v1alpha1.ZNSDatabase{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: db}, cur); err != nil {
				return err
			}
			if cur.Leased() || cur.Status.Profile != v1alpha1.ProfileWorkload || cur.Spec.Profile != v1alpha1.ProfileWorkload {
				return fmt.Errorf("lease %v, profile %s (spec %s)", cur.Annotations, cur.Status.Profile, cur.Spec.Profile)
			}
			return nil
		})
	}

	checkYCSB(t, ns)

	// Deleting everything leaves only what is kept on purpose: the datadir claims and generated Secrets.
	if err := k8s.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*v1alpha1.ZNSDatabase{rocks, inno} {
		if err := k8s.Delete(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "children gone", 3*time.Minute, func() error { return leftovers(ns) })
}

// checkYCSB runs go-ycsb's workload a (50% reads, 50% updates) on the flow's two databases through a Benchmark
// (spec.tool ycsb): the load on the bulk-load profile, then a run, with each operation type's figures apart.
func checkYCSB(t *testing.T, ns string) {
	t.Helper()
	b := runBenchmark(t, ns, "ycsb", v1alpha1.BenchmarkSpec{
		Tool: v1alpha1.ToolYCSB,
		YCSB: &v1alpha1.YCSBSpec{Workload: "a", RecordCount: intstr.FromInt32(2000), FieldCount: 1, FieldLength: 1024,
			RequestDistribution: "uniform", LoadThreads: 2},
		Threads: 2, DurationSeconds: 10, ReportIntervalSeconds: 2, Iterations: 1, StartDelaySeconds: 10,
	})
	for _, ts := range b.Status.Targets {
		if ts.State != v1alpha1.TargetDone || ts.YCSB == nil || ts.YCSB.RecordCount != 2000 || len(ts.Iterations) != 1 {
			t.Errorf("YCSB Benchmark, target %s: %+v", ts.Name, ts)
			continue
		}
		ops := map[string]v1alpha1.YCSBOperation{}
		var errs int64
		for _, o := range ts.Iterations[0].Operations {
			ops[o.Operation] = o
			errs += o.Errors
		}
		// go-ycsb cancels the operations in flight when the run's time is up and counts them as errors: at most
		// one per thread (seen on kind: 2 with 2 threads, READ or UPDATE)
		if errs > 2 {
			t.Errorf("YCSB target %s: %d failed operations, want at most the 2 in flight at the end: %+v", ts.Name, errs, ts.Iterations[0].Operations)
		}
		for _, name := range []string{v1alpha1.YCSBRead, v1alpha1.YCSBUpdate} {
			o, ok := ops[name]
			rate, _ := strconv.ParseFloat(o.OpsPerSec, 64)
			p99, _ := strconv.ParseFloat(o.LatencyP99Ms, 64)
			if !ok || o.Count <= 0 || rate <= 0 || p99 <= 0 {
				t.Errorf("YCSB target %s, %s: %+v, want operations with a rate and a p99 latency", ts.Name, name, o)
				continue
			}
			t.Logf("YCSB target %s %s: %s ops/s, p99 %s ms", ts.Name, name, o.OpsPerSec, o.LatencyP99Ms)
		}
	}
	if err := k8s.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
}

// checkSteadyState holds a target's write-only rounds to the rule they ran under: rounds with real TPS, and
// either the rule held over the last window (which then ends at the last round) or every round was used.
func checkSteadyState(t *testing.T, ts v1alpha1.TargetStatus, spec v1alpha1.SteadyStateSpec) {
	t.Helper()
	st := ts.SteadyState
	if st == nil || !st.Required || len(st.Rounds) < int(spec.Window) || len(st.Rounds) > int(spec.MaxRounds) {
		t.Errorf("target %s: steady state %+v, want %d to %d rounds", ts.Name, st, spec.Window, spec.MaxRounds)
		return
	}
	var tps []string
	for _, r := range st.Rounds {
		tps = append(tps, r.TPS)
		if f, err := strconv.ParseFloat(r.TPS, 64); err != nil || f <= 0 {
			t.Errorf("target %s round %d: TPS %q", ts.Name, r.Round, r.TPS)
		}
	}
	switch {
	case st.Reached && int(st.WindowStart)+int(spec.Window)-1 != len(st.Rounds):
		t.Errorf("target %s: steady from round %d over a window of %d, but %d rounds ran", ts.Name, st.WindowStart, spec.Window, len(st.Rounds))
	case !st.Reached && len(st.Rounds) != int(spec.MaxRounds):
		t.Errorf("target %s: not steady after %d of %d rounds, and the phase ended", ts.Name, len(st.Rounds), spec.MaxRounds)
	case st.Reason == "":
		t.Errorf("target %s: no verdict of the rule", ts.Name)
	}
	t.Logf("target %s: write-only rounds TPS %v, reached %v (%s)", ts.Name, tps, st.Reached, st.Reason)
}

// runBenchmark runs a Benchmark of the conventional flow's two databases, innodb-baseline the baseline, until it
// completes.
func runBenchmark(t *testing.T, ns, name string, spec v1alpha1.BenchmarkSpec) *v1alpha1.Benchmark {
	t.Helper()
	spec.Targets = []v1alpha1.BenchmarkTarget{{Name: "myrocks-xfs"}, {Name: "innodb-baseline"}}
	spec.Baseline = "innodb-baseline"
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	rec := benchtiming.RecordAvailability(ctx, k8s, ns, []string{"myrocks-xfs", "innodb-baseline"}, 250*time.Millisecond)
	applied := time.Now()
	if err := k8s.Create(ctx, b); err != nil {
		rec.Stop()
		t.Fatal(err)
	}
	waitCompleted(t, b)
	if err := logTiming(t, b, applied, rec.Stop()); err != nil {
		t.Error(err)
	}
	return b
}

// waitCompleted waits for a Benchmark to complete; its failure ends the test with the status.
func waitCompleted(t *testing.T, b *v1alpha1.Benchmark) {
	t.Helper()
	waitCompletedWithin(t, b, 12*time.Minute)
}

func waitCompletedWithin(t *testing.T, b *v1alpha1.Benchmark, timeout time.Duration) {
	t.Helper()
	waitFor(t, "Benchmark "+b.Name+" Completed", timeout, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		switch b.Status.Phase {
		case v1alpha1.BenchmarkCompleted:
			return nil
		case v1alpha1.BenchmarkFailed:
			t.Fatalf("Benchmark %s failed: %+v", b.Name, b.Status)
		}
		return fmt.Errorf("phase %s (%s)", b.Status.Phase, b.Status.Progress)
	})
}

// leftovers lists what the operator created and should have removed.
func leftovers(ns string) error {
	var left []string
	stss := &appsv1.StatefulSetList{}
	jobs := &batchv1.JobList{}
	svcs := &corev1.ServiceList{}
	cms := &corev1.ConfigMapList{}
	dbs := &v1alpha1.ZNSDatabaseList{}
	managed := client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue}
	for _, l := range []client.ObjectList{stss, jobs, svcs, cms, dbs} {
		opts := []client.ListOption{client.InNamespace(ns)}
		if l != dbs && l != jobs {
			opts = append(opts, managed)
		}
		if err := k8s.List(ctx, l, opts...); err != nil {
			return err
		}
		items, _ := meta.ExtractList(l)
		for _, it := range items {
			o := it.(client.Object)
			if strings.HasPrefix(o.GetName(), "sql-") {
				continue // the test's own Jobs
			}
			left = append(left, fmt.Sprintf("%T %s", o, o.GetName()))
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("still there: %s", strings.Join(left, ", "))
	}
	return nil
}

func printComparison(t *testing.T, b *v1alpha1.Benchmark) {
	t.Helper()
	w := len("target")
	for _, ts := range b.Status.Targets {
		w = max(w, len(ts.Name))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-*s %10s %10s %10s %12s %10s\n", w, "target", "tps", "p95 ms", "avg ms", "tps reldev%", "tps vs "+b.Status.Baseline)
	for _, ts := range b.Status.Targets {
		if ts.Mean == nil || ts.VsBaseline == nil {
			continue
		}
		fmt.Fprintf(&sb, "%-*s %10s %10s %10s %12s %10s\n", w, ts.Name, ts.Mean.TPS, ts.Mean.LatencyPctMs, ts.Mean.LatencyAvgMs, ts.Mean.TPSRelDevPct, ts.VsBaseline.TPS)
	}
	t.Log("\n" + sb.String())
}

// TestConventionalDeviceRefused runs the zoned paths as far as a machine without zoned support can: a real
// block device that is not zoned (CI attaches a loop device and mounts it into the node) is judged on the node
// and refused, given as zonedDevice (the preflight reads sysfs only) and as a user's zonedClaim (the preflight
// maps the claim read-only, which the kubelet pins with a loop device of its own), without the operator
// creating anything that could write to it, and without a byte of it changing.
func TestConventionalDeviceRefused(t *testing.T) {
	beside(t)
	spec := os.Getenv("ZNS_E2E_CONVENTIONAL_DEVICE") // node:device
	if spec == "" {
		t.Skip("needs a conventional block device mounted into a node: set ZNS_E2E_CONVENTIONAL_DEVICE=node:loop0 (.ci/run attaches a loop device)")
	}
	node, dev, ok := strings.Cut(spec, ":")
	if !ok {
		t.Fatalf("ZNS_E2E_CONVENTIONAL_DEVICE=%q: want node:device", spec)
	}
	before, local := deviceDigest(t, "/dev/"+dev)
	ns := newNamespace(t, "e2e-refuse")
	// The preflight needs only znsdb, which the MariaDB image carries too: no mysqld ever starts on a refused
	// device, so the Percona image is not needed here.
	image := "zns-mysql/mariadb-myrocks:" + env("ZNS_E2E_TAG", "latest")

	t.Run("zonedDevice", func(t *testing.T) {
		db := &v1alpha1.ZNSDatabase{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-device"},
			Spec: v1alpha1.ZNSDatabaseSpec{
				Storage: v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: node, DeviceName: dev}},
				Image:   image,
			},
		}
		refused(t, db, client.ObjectKey{Name: v1alpha1.DevicePVName(node, dev)}, &corev1.PersistentVolume{})
	})

	t.Run("zonedClaim", func(t *testing.T) {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-conventional-"},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")},
				VolumeMode:                    ptr.To(corev1.PersistentVolumeBlock),
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/dev/" + dev}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
				}}}},
				StorageClassName: "",
			},
		}
		if err := k8s.Create(ctx, pv); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, pv) })
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "conventional"},
			Spec: corev1.PersistentVolumeClaimSpec{
				VolumeMode:       ptr.To(corev1.PersistentVolumeBlock),
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To(""),
				VolumeName:       pv.Name,
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")}},
			},
		}
		if err := k8s.Create(ctx, pvc); err != nil {
			t.Fatal(err)
		}
		db := &v1alpha1.ZNSDatabase{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-claim"},
			Spec: v1alpha1.ZNSDatabaseSpec{
				Storage: v1alpha1.StorageSpec{ZonedClaim: &v1alpha1.ZonedClaimSource{ClaimName: pvc.Name, DeviceName: dev}},
				Image:   image,
			},
		}
		refused(t, db, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
		// The user's claim is the user's: deleting the database leaves it.
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); err != nil || !pvc.DeletionTimestamp.IsZero() {
			t.Errorf("the user's claim after the database's deletion: %v (deleting: %v)", err, pvc.DeletionTimestamp)
		}
	})

	if after, _ := deviceDigest(t, "/dev/"+dev); local && after != before {
		t.Errorf("the refused device changed: sha256 %s before, %s after", before, after)
	} else if !local {
		t.Logf("/dev/%s is not readable from this process (cluster elsewhere): its content was not compared", dev)
	}
}

// refused creates db, waits until the preflight ran on the node and refused the device as not zoned, checks
// that absentObj (something that could write to the device) never appears, then deletes db.
func refused(t *testing.T, db *v1alpha1.ZNSDatabase, absentKey client.ObjectKey, absentObj client.Object) {
	t.Helper()
	if err := k8s.Create(ctx, db); err != nil {
		t.Fatal(err)
	}
	var cond *metav1.Condition
	waitFor(t, db.Name+": DeviceReady False (DeviceRefused)", 5*time.Minute, func() error {
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
			return err
		}
		cond = meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionDeviceReady)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "DeviceRefused" {
			return fmt.Errorf("conditions %+v", cur.Status.Conditions)
		}
		if d := cur.Status.Device; d == nil || d.Model != "none" || len(d.Problems) == 0 {
			return fmt.Errorf("status.device %+v", cur.Status.Device)
		}
		return nil
	})
	if !strings.Contains(cond.Message, "not zoned") {
		t.Errorf("DeviceReady message %q does not say the device is not zoned", cond.Message)
	}
	events, err := clientset.CoreV1().Events(db.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "reason=DeviceRefused,involvedObject.name=" + db.Name})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no DeviceRefused Event for %s (%v)", db.Name, err)
	}
	for i := 0; i < 5; i++ {
		if err := k8s.Get(ctx, absentKey, absentObj); !apierrors.IsNotFound(err) {
			t.Fatalf("%T %s exists for a refused device (%v)", absentObj, absentKey.Name, err)
		}
		time.Sleep(2 * time.Second)
	}
	if err := k8s.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
	waitFor(t, db.Name+" gone", 2*time.Minute, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), &v1alpha1.ZNSDatabase{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return leftovers(db.Namespace)
	})
}

// deviceDigest hashes the first 64 MiB of a block device when this process can read it (the cluster runs
// on this host, as kind does); ok is false otherwise.
func deviceDigest(t *testing.T, path string) (digest string, ok bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, 64<<20); err != nil && err != io.EOF {
		t.Fatalf("reading %s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// TestZonedFlow needs null_blk zoned devices on a node and the Percona image with ZenFS.
func TestZonedFlow(t *testing.T) {
	beside(t)
	spec := os.Getenv("ZNS_E2E_ZONED") // node:device[,node:device]
	if spec == "" {
		t.Skip("needs zoned devices and the Percona ZenFS image: set ZNS_E2E_ZONED=node:nullb0,node:nullb1 (a kernel with zoned block device support)")
	}
	ns := newNamespace(t, "e2e-zoned")
	entries := strings.Split(spec, ",")
	if len(entries) > 2 {
		t.Fatalf("ZNS_E2E_ZONED has %d devices: the lab's scenario has two zoned tenants (config/samples)", len(entries))
	}
	// the lab's tenants (config/samples), on the devices given
	tenants := scenario(t, samples.Lab, samples.Placement{Namespace: ns}, "tenant1", "tenant2")
	var dbs []*v1alpha1.ZNSDatabase
	for i, nd := range entries {
		node, dev, ok := strings.Cut(nd, ":")
		if !ok {
			t.Fatalf("ZNS_E2E_ZONED entry %q: want node:device", nd)
		}
		db := tenants.Databases[i]
		db.Spec.Storage.ZonedDevice.NodeName, db.Spec.Storage.ZonedDevice.DeviceName = node, dev
		if err := k8s.Create(ctx, db); err != nil {
			t.Fatal(err)
		}
		dbs = append(dbs, db)
	}
	for _, db := range dbs {
		waitAvailable(t, db)
		cur := &v1alpha1.ZNSDatabase{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(db), cur); err != nil {
			t.Fatal(err)
		}
		if d := cur.Status.Device; d == nil || d.Model != "host-managed" || d.Zones < 32 || d.Scheduler != "mq-deadline" {
			t.Errorf("%s: status.device %+v", db.Name, d)
		}
		if fs := cur.Status.Filesystem; fs == nil || fs.Type != "zenfs" || (fs.Action != "format" && fs.Action != "keep") {
			t.Errorf("%s: status.filesystem %+v", db.Name, fs)
		}
	}
	for _, db := range dbs {
		if err := k8s.Delete(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "device PersistentVolumes released", 3*time.Minute, func() error {
		for _, db := range dbs {
			src := db.Spec.Storage.ZonedDevice
			err := k8s.Get(ctx, client.ObjectKey{Name: v1alpha1.DevicePVName(src.NodeName, src.DeviceName)}, &corev1.PersistentVolume{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("PV of %s still there (%v)", db.Name, err)
			}
		}
		return nil
	})
	// Re-creating the first database finds its ZenFS and keeps it: deletion did not wipe the device.
	again := dbs[0].DeepCopy()
	again.ResourceVersion, again.UID = "", ""
	if err := k8s.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, again)
	cur := &v1alpha1.ZNSDatabase{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(again), cur); err != nil {
		t.Fatal(err)
	}
	if fs := cur.Status.Filesystem; fs == nil || fs.Type != "zenfs" || fs.Action != "keep" {
		t.Errorf("after re-creation status.filesystem = %+v, want the existing ZenFS kept", fs)
	}
}

// dump prints what a person debugging a failure looks at first: the operator's log, the events and the
// objects of the test's namespace.
func dump(t *testing.T, ns string) {
	pods, err := clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, p := range pods.Items {
			raw, _ := clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](200)}).DoRaw(ctx)
			t.Logf("--- operator log %s (last 200 lines)\n%s", p.Name, raw)
		}
	}
	events, err := clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err == nil {
		t.Logf("--- events in %s, oldest first\n%s", ns, eventTimeline(events.Items))
	}
	for _, l := range []client.ObjectList{&v1alpha1.ZNSDatabaseList{}, &v1alpha1.BenchmarkList{}, &corev1.PodList{}, &batchv1.JobList{}} {
		if err := k8s.List(ctx, l, client.InNamespace(ns)); err == nil {
			raw, _ := yaml.Marshal(l)
			t.Logf("--- %T in %s\n%s", l, ns, raw)
		}
	}
}

// eventTimeline prints events oldest first with the time each was last seen and how often: a slow phase is then
// read off the gaps between lines.
func eventTimeline(events []corev1.Event) string {
	seen := func(e corev1.Event) time.Time {
		switch {
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		case e.Series != nil:
			return e.Series.LastObservedTime.Time
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		}
		return e.CreationTimestamp.Time
	}
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return seen(a).Compare(seen(b)) })
	var sb strings.Builder
	for _, e := range events {
		count := ""
		if e.Count > 1 {
			count = fmt.Sprintf(" (x%d)", e.Count)
		}
		fmt.Fprintf(&sb, "%s %s %s/%s %s%s: %s\n", seen(e).UTC().Format("15:04:05"), e.Type, e.InvolvedObject.Kind,
			e.InvolvedObject.Name, e.Reason, count, e.Message)
	}
	return sb.String()
}
