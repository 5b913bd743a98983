package scale

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct{ method, url, verb, resource string }{
		{"GET", "/api/v1/namespaces/a/pods/p/log?container=runner", "get", "pods/log"},
		{"GET", "/api/v1/namespaces/a/pods?labelSelector=x", "list", "pods"},
		{"GET", "/api/v1/pods?watch=true&resourceVersion=5", "watch", "pods"},
		{"GET", "/apis/zns-mysql.dev/v1alpha1/znsdatabases?allowWatchBookmarks=true&watch=true", "watch", "znsdatabases"},
		{"PUT", "/apis/zns-mysql.dev/v1alpha1/namespaces/a/znsdatabases/db/status", "update", "znsdatabases/status"},
		{"PATCH", "/apis/apps/v1/namespaces/a/statefulsets/db?fieldManager=x&force=true", "patch", "statefulsets"},
		{"POST", "/api/v1/namespaces/a/events", "create", "events"},
		{"POST", "/api/v1/namespaces", "create", "namespaces"},
		{"DELETE", "/apis/batch/v1/namespaces/a/jobs/j", "delete", "jobs"},
		{"DELETE", "/apis/batch/v1/namespaces/a/jobs", "deletecollection", "jobs"},
		{"GET", "/api/v1/namespaces/a", "get", "namespaces"},
		{"GET", "/apis/zns-mysql.dev/v1alpha1", "get", "(discovery)"},
		{"GET", "/version", "get", "/version"},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		if v, r := Classify(req); v != tc.verb || r != tc.resource {
			t.Errorf("%s %s: %s %s, want %s %s", tc.method, tc.url, v, r, tc.verb, tc.resource)
		}
	}
}

func TestNamespace(t *testing.T) {
	for url, want := range map[string]string{
		"/api/v1/namespaces/a/pods/p/log": "a", "/apis/batch/v1/namespaces/b/jobs": "b",
		"/api/v1/namespaces/c": "", "/api/v1/namespaces": "", "/api/v1/pods": "", "/version": "",
	} {
		if got := Namespace(httptest.NewRequest("GET", url, nil)); got != want {
			t.Errorf("%s: namespace %q, want %q", url, got, want)
		}
	}
}

func TestRequestCounter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	c := NewRequestCounter()
	hc := &http.Client{Transport: c.Wrap(http.DefaultTransport)}
	for _, r := range []struct{ method, path string }{
		{"PATCH", "/api/v1/namespaces/a/configmaps/x"}, {"PATCH", "/api/v1/namespaces/a/configmaps/y"},
		{"GET", "/api/v1/namespaces/a/configmaps/x"}, {"POST", "/api/v1/namespaces/a/events"},
	} {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if in := c.SnapshotIn("a"); in["patch configmaps"] != 2 || len(c.SnapshotIn("b")) != 0 {
		t.Errorf("namespace a: %v", in)
	}
	snap := c.Snapshot()
	if snap["patch configmaps"] != 2 || snap["get configmaps"] != 1 || snap["create events"] != 1 || Writes(snap) != 3 {
		t.Errorf("counts %v, writes %d", snap, Writes(snap))
	}
	if f := Format(snap); !strings.HasPrefix(f, "       2  patch configmaps\n       1  create events\n") {
		t.Errorf("format:\n%s", f)
	}
	c.Reset()
	if len(c.Snapshot()) != 0 {
		t.Error("reset kept counts")
	}
}

func TestHistogramQuantile(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rt", Buckets: []float64{0.1, 0.2, 0.4}}, []string{"controller"})
	reg.MustRegister(h)
	before, err := GatherHistogram(reg, "rt", map[string]string{"controller": "a"})
	if err != nil || before.Metrics != 0 {
		t.Fatalf("empty: %+v %v", before, err)
	}
	if !math.IsNaN(before.Quantile(0.5)) {
		t.Error("quantile of nothing is not NaN")
	}
	for _, v := range []float64{0.05, 0.05, 0.15, 0.3} {
		h.WithLabelValues("a").Observe(v)
	}
	h.WithLabelValues("b").Observe(9)
	got, err := GatherHistogram(reg, "rt", map[string]string{"controller": "a"})
	if err != nil {
		t.Fatal(err)
	}
	// 4 samples: rank 2 falls at the top of the first bucket (0..0.1, 2 samples); rank 3.96 in the third
	// (0.2..0.4, 1 sample, 3 below): 0.2 + 0.2*0.96.
	if got.Count != 4 || got.Quantile(0.5) != 0.1 || math.Abs(got.Quantile(0.99)-0.392) > 1e-12 {
		t.Errorf("count %d p50 %v p99 %v", got.Count, got.Quantile(0.5), got.Quantile(0.99))
	}
	for range 4 {
		h.WithLabelValues("a").Observe(0.35)
	}
	later, _ := GatherHistogram(reg, "rt", map[string]string{"controller": "a"})
	d := later.Sub(got)
	if d.Count != 4 || math.Abs(d.Quantile(0.5)-0.3) > 1e-12 {
		t.Errorf("window: count %d p50 %v", d.Count, d.Quantile(0.5))
	}
	all, _ := GatherHistogram(reg, "rt", nil)
	if all.Count != 9 || all.Metrics != 2 || all.Quantile(1) != 0.4 {
		t.Errorf("both series: %+v, p100 %v (beyond the last bound: the bound)", all, all.Quantile(1))
	}
}

func TestReadProcStatus(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(p, []byte("Name:\tmanager\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rss, hwm, err := ReadProcStatus(p); err != nil || rss != 1024*1024 || hwm != 2048*1024 {
		t.Errorf("rss %d hwm %d err %v", rss, hwm, err)
	}
	if err := os.WriteFile(p, []byte("VmRSS:\t 12 MB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadProcStatus(p); err == nil {
		t.Error("a unit other than kB was accepted")
	}
	m, err := ReadMemory()
	if err != nil || m.RSS <= 0 || m.PeakRSS < m.RSS || m.HeapInuse == 0 {
		t.Errorf("this process: %+v %v", m, err)
	}
}
