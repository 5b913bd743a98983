package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// TestPrometheusScrapes runs a real Prometheus (Debian's package) on the host against the operator's secure metrics
// endpoint and a database pod's two sidecars, through port-forwards on loopback, while a Benchmark runs; then asks it
// what it saw. Then `kubectl zns debug` bundles the same database.
func TestPrometheusScrapes(t *testing.T) {
	beside(t)
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("needs Prometheus on the host (Debian's package prometheus; hack/install-deps.sh installs it)")
	}
	ns := newNamespace(t, "obs")
	db := labVolumeDB(t, ns, "myrocks-xfs", "obs")
	if err := k8s.Create(ctx, db); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, db)

	operatorPod := findPod(t, operatorNamespace, client.MatchingLabels{"app.kubernetes.io/name": "zns-mysql", "app.kubernetes.io/component": "operator"})
	opPort := forward(t, operatorNamespace, operatorPod, 8443)
	exporterPort := forward(t, ns, db.PodName(), v1alpha1.MySQLExporterPort)
	zonedPort := forward(t, ns, db.PodName(), v1alpha1.ZonedMetricsPort)

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(metricsReaderToken(t, ns)), 0o600); err != nil {
		t.Fatal(err)
	}
	labels := fmt.Sprintf("{namespace: %q, pod: %q}", ns, db.PodName())
	cfg := fmt.Sprintf(`global: {scrape_interval: 2s, scrape_timeout: 2s}
scrape_configs:
- job_name: operator
  scheme: https
  authorization: {credentials_file: %q}
  tls_config: {insecure_skip_verify: true}
  static_configs: [{targets: ["127.0.0.1:%d"]}]
- job_name: mysqld
  static_configs: [{targets: ["127.0.0.1:%d"], labels: %s}]
- job_name: zns
  static_configs: [{targets: ["127.0.0.1:%d"], labels: %s}]
`, tokenFile, opPort, exporterPort, labels, zonedPort, labels)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	promPort := freePort(t)
	prom := exec.Command(promBin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort))
	promLog, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	prom.Stdout, prom.Stderr = promLog, promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(promLog.Name())
			t.Logf("prometheus log:\n%s", tail(string(out), 40))
		}
	})
	q := promAPI(fmt.Sprintf("http://127.0.0.1:%d", promPort))
	waitFor(t, "every scrape target up", 2*time.Minute, func() error {
		v, err := q.scalar(`count(up == 1)`)
		if err != nil || v != 3 {
			return fmt.Errorf("targets up: %v (%v); %s", v, err, q.targets())
		}
		return nil
	})

	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "obs"}, Spec: v1alpha1.BenchmarkSpec{
		Targets:  []v1alpha1.BenchmarkTarget{{Name: db.Name}},
		Workload: "oltp_update_index", Tables: 1, TableSize: 2000, Threads: 2,
		DurationSeconds: 20, ReportIntervalSeconds: 1, Iterations: 1, StartDelaySeconds: 10,
	}}
	if err := k8s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitCompleted(t, b)
	mean, err := strconv.ParseFloat(b.Status.Targets[0].Mean.TPS, 64)
	if err != nil {
		t.Fatalf("mean TPS %q: %v", b.Status.Targets[0].Mean.TPS, err)
	}
	// The operator's gauges follow status, so one more scrape after Completed holds the final figures.
	time.Sleep(5 * time.Second)

	sel := fmt.Sprintf(`namespace=%q, benchmark="obs"`, ns)
	checks := []struct {
		what, query string
		ok          func(float64) bool
	}{
		{"TPS seen while the run was under way", fmt.Sprintf(`max_over_time(zns_mysql_benchmark_live_tps{%s}[15m])`, sel), func(v float64) bool { return v > 0 }},
		{"the Benchmark seen Running", fmt.Sprintf(`max_over_time(zns_mysql_benchmark_phase{%s, phase="Running"}[15m])`, sel), func(v float64) bool { return v == 1 }},
		{"the final TPS, as status has it", fmt.Sprintf(`zns_mysql_benchmark_result_tps{%s, target="obs"}`, sel), func(v float64) bool { return v == mean }},
		{"time in Running", fmt.Sprintf(`zns_mysql_benchmark_phase_duration_seconds{%s, phase="Running"}`, sel), func(v float64) bool { return v >= 20 }},
		{"the database Available", fmt.Sprintf(`zns_mysql_database_available{namespace=%q, database="obs"}`, ns), func(v float64) bool { return v == 1 }},
		{"mysqld up through the exporter", `mysql_up{job="mysqld"}`, func(v float64) bool { return v == 1 }},
		{"mysqld served the benchmark's queries", `max_over_time(mysql_global_status_questions{job="mysqld"}[15m])`, func(v float64) bool { return v > 1000 }},
		{"the datadir's free space, at most its size", `znsdb_datadir_free_bytes{job="zns"} <= znsdb_datadir_size_bytes{job="zns"}`, func(v float64) bool { return v > 0 }},
	}
	for _, c := range checks {
		v, err := q.scalar(c.query)
		if err != nil || !c.ok(v) {
			t.Errorf("%s: %s = %v (%v)", c.what, c.query, v, err)
		} else {
			t.Logf("%s: %s = %v", c.what, c.query, v)
		}
	}
	// The same database, running on a real kubelet, is what a bug report bundles.
	checkDebugBundle(t, db)

	if err := k8s.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
}

func findPod(t *testing.T, ns string, sel client.MatchingLabels) string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := k8s.List(ctx, pods, client.InNamespace(ns), sel); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p.Name
		}
	}
	t.Fatalf("no running pod in %s with %v", ns, sel)
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// forward forwards a loopback port to a pod's port until the test ends. A Benchmark restarts its databases (the
// bulkload and workload profiles), and a port-forward ends with its pod: the forward is made again, to the pod of
// the same name, whenever it ends.
func forward(t *testing.T, ns, pod string, remote int) int {
	t.Helper()
	cfg, err := clusterConfig()
	if err != nil {
		t.Fatal(err)
	}
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	local := freePort(t)
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	// The forward is made again when it ends, and when the pod was replaced (a Benchmark's profile switch
	// restarts the database): a forward to the pod that was can stay open with every new stream timing out
	// (a cold CI run, the kind nodes loaded).
	podUID := func() types.UID {
		p := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, p); err != nil {
			return ""
		}
		return p.UID
	}
	go func() {
		defer close(stopped)
		for {
			stop := make(chan struct{})
			uid := podUID()
			dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
			fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("%d:%d", local, remote)}, stop, nil, io.Discard, io.Discard)
			if err == nil {
				ended := make(chan struct{})
				go func() { _ = fw.ForwardPorts(); close(ended) }()
			watch:
				for {
					select {
					case <-done:
						close(stop)
						<-ended
						return
					case <-ended:
						break watch
					case <-time.After(2 * time.Second):
						if now := podUID(); now != "" && now != uid {
							close(stop)
							<-ended
							break watch
						}
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return local
}

// metricsReaderToken is a token of a ServiceAccount bound to the chart's metrics-reader ClusterRole, as a
// Prometheus in the cluster would have.
func metricsReaderToken(t *testing.T, ns string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prometheus"}}
	if err := k8s.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-prometheus"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "zns-mysql-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}}}
	if err := k8s.Create(ctx, crb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, crb) })
	tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// promAPI asks a Prometheus server through its HTTP API.
type promAPI string

// scalar runs an instant query that must give exactly one sample.
func (p promAPI) scalar(query string) (float64, error) {
	resp, err := http.Get(string(p) + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("query %s: %s", query, r.Error)
	}
	if len(r.Data.Result) != 1 {
		return 0, fmt.Errorf("query %s: %d samples, want 1", query, len(r.Data.Result))
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// targets summarises the scrape targets' health, for a failure message.
func (p promAPI) targets() string {
	resp, err := http.Get(string(p) + "/api/v1/targets")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			ActiveTargets []struct {
				ScrapePool string `json:"scrapePool"`
				Health     string `json:"health"`
				LastError  string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err.Error()
	}
	var parts []string
	for _, a := range r.Data.ActiveTargets {
		parts = append(parts, fmt.Sprintf("%s %s %s", a.ScrapePool, a.Health, a.LastError))
	}
	return strings.Join(parts, "; ")
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
