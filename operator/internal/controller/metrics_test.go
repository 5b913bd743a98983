package controller_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/zns-mysql/zns-mysql/operator/internal/opmetrics"
)

// freeLocalAddr is a loopback address with a port nobody listens on right now.
func freeLocalAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// metricsClient scrapes the suite manager's metrics endpoint as Prometheus does: HTTPS with the operator's
// self-signed certificate, and a ServiceAccount's bearer token.
type metricsClient struct {
	token string
	http  *http.Client
}

// newMetricsClient makes a ServiceAccount in ns and a token for it; reader binds it to a ClusterRole with the one rule
// kubebuilder projects give Prometheus (get on the non-resource URL /metrics), as the chart's metrics-reader does.
func newMetricsClient(t *testing.T, ns string, reader bool) *metricsClient {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prometheus"}}
	create(t, sa)
	if reader {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
		create(t, role)
		create(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}}})
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &metricsClient{token: tr.Status.Token, http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the operator's certificate is self-signed
	}}}
}

// get returns the status code and body of GET /metrics; an empty token sends none.
func (m *metricsClient) get(t *testing.T, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://"+metricsAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := m.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// scrape parses one authorized scrape.
func (m *metricsClient) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := m.get(t, m.token)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the metrics do not parse: %v", err)
	}
	return fams
}

// TestMetricsEndpointAuth: the metrics endpoint answers only callers the API server authenticates and authorizes.
func TestMetricsEndpointAuth(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	reader := newMetricsClient(t, ns, true)
	if code, _ := reader.get(t, ""); code != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", code)
	}
	// A token that is not a JWT: controller-runtime's filter answered 500 here (envtest, v1.36), not 401. What
	// matters is the refusal: no series.
	if code, body := reader.get(t, "not-a-token"); code == http.StatusOK || strings.Contains(body, "zns_mysql_") {
		t.Errorf("a bad token: status %d, want a refusal", code)
	}
	// Another namespace's ServiceAccount without the role: authenticated, not authorized.
	other := newMetricsClient(t, newNamespace(t), false)
	if code, _ := other.get(t, other.token); code != http.StatusForbidden {
		t.Errorf("a ServiceAccount without the metrics-reader role: status %d, want 403", code)
	}
	fams := reader.scrape(t)
	for _, name := range []string{"controller_runtime_reconcile_total", "zns_mysql_device_step_outcomes_total"} {
		if fams[name] == nil {
			t.Errorf("no %s in the scrape", name)
		}
	}
	// Known verdicts are listed at zero before they happen, so rate() sees them from the start.
	if _, ok := opmetrics.Lookup(fams, "zns_mysql_device_step_outcomes_total", map[string]string{"step": "format", "reason": "FormatRefused"}); !ok {
		t.Error("no format/FormatRefused outcome series")
	}
}

// checkLiveMetrics: while a run is under way the live interval of each running target is exported.
func checkLiveMetrics(t *testing.T, m *metricsClient, ns, bench, target string, tps float64) {
	t.Helper()
	eventually(t, "live TPS series of "+target, func() error {
		fams := m.scrape(t)
		got, ok := opmetrics.Lookup(fams, "zns_mysql_benchmark_live_tps", map[string]string{"namespace": ns, "benchmark": bench, "target": target})
		if !ok || fmt.Sprintf("%.2f", got) != fmt.Sprintf("%.2f", tps) {
			return fmt.Errorf("zns_mysql_benchmark_live_tps{target=%q} = %v (present %v), want %.2f", target, got, ok, tps)
		}
		if v, _ := opmetrics.Lookup(fams, "zns_mysql_benchmark_phase", map[string]string{"namespace": ns, "benchmark": bench, "phase": "Running"}); v != 1 {
			return fmt.Errorf("phase Running = %v, want 1", v)
		}
		return nil
	})
}

// checkResultMetrics: a finished Benchmark's means and ratios are exported as its status has them. The gauges
// follow the manager's cache, which may lag the test's own read of the Completed status: the scrape is tried
// again until they agree.
func checkResultMetrics(t *testing.T, m *metricsClient, ns, bench string, want map[string]float64, ratio map[string]float64) {
	t.Helper()
	eventually(t, "the result metrics of "+bench, func() error {
		fams := m.scrape(t)
		var wrong []string
		for target, tps := range want {
			got, ok := opmetrics.Lookup(fams, "zns_mysql_benchmark_result_tps", map[string]string{"namespace": ns, "benchmark": bench, "target": target})
			if !ok || got != tps {
				wrong = append(wrong, fmt.Sprintf("result tps of %s = %v (present %v), want %v", target, got, ok, tps))
			}
			if _, ok := opmetrics.Lookup(fams, "zns_mysql_benchmark_live_tps", map[string]string{"namespace": ns, "benchmark": bench, "target": target}); ok {
				wrong = append(wrong, fmt.Sprintf("live tps of %s still exported after the run", target))
			}
		}
		for target, r := range ratio {
			got, ok := opmetrics.Lookup(fams, "zns_mysql_benchmark_result_ratio_to_baseline", map[string]string{"benchmark": bench, "target": target, "figure": "tps"})
			if !ok || got != r {
				wrong = append(wrong, fmt.Sprintf("tps ratio of %s = %v (present %v), want %v", target, got, ok, r))
			}
		}
		if v, _ := opmetrics.Lookup(fams, "zns_mysql_benchmark_phase", map[string]string{"namespace": ns, "benchmark": bench, "phase": "Completed"}); v != 1 {
			wrong = append(wrong, fmt.Sprintf("phase Completed = %v, want 1", v))
		}
		if v, ok := opmetrics.Lookup(fams, "zns_mysql_benchmark_phase_duration_seconds", map[string]string{"namespace": ns, "benchmark": bench, "phase": "Running"}); !ok || v <= 0 {
			wrong = append(wrong, fmt.Sprintf("time in Running = %v (present %v), want > 0", v, ok))
		}
		if v, ok := opmetrics.Lookup(fams, "zns_mysql_device_step_outcomes_total", map[string]string{"step": "preflight", "reason": "DeviceAccepted"}); !ok || v < 1 {
			wrong = append(wrong, fmt.Sprintf("preflight DeviceAccepted outcomes = %v, want >= 1 (the zoned target passed its preflight)", v))
		}
		if len(wrong) > 0 {
			return errors.New(strings.Join(wrong, "; "))
		}
		return nil
	})
}
