package main

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The scrapes under testdata are real `znsdb metrics` answers: see testdata/README.md.
func readMetrics(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withoutFamilies drops the named families (HELP, TYPE and samples) from a scrape.
func withoutFamilies(text, prefix string) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, prefix):
		case len(f) >= 3 && f[0] == "#" && strings.HasPrefix(f[2], prefix):
		default:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

const mib = 1 << 20

func TestUsableFromMetrics(t *testing.T) {
	statfs, zenfs := readMetrics(t, "metrics-statfs.txt"), readMetrics(t, "metrics-zenfs.txt")
	cases := []struct {
		name, text, source string
		want               int64
		errHas             string
	}{
		// df -B1 printed 270553174016 1B-blocks for the same directory (testdata/README.md).
		{"volume", statfs, UsableStatfs, 270553174016, ""},
		// zenfs df said "Free: 3659 MB", "Used: 124 MB", "Reclaimable: 35 MB" (wa/nullb0-df).
		{"zenfs", zenfs, UsableZenFS, (3659 + 124 + 35) * mib, ""},
		{"zenfs figures on a sidecar without --zenfs", statfs, UsableZenFS, 0, "not started with --zenfs"},
		{"before the first zenfs df", withoutFamilies(zenfs, "znsdb_zenfs_"), UsableZenFS, 0, "zenfs df has not succeeded yet: 0 failed"},
		{"no datadir figure", withoutFamilies(statfs, "znsdb_datadir_"), UsableStatfs, 0, "serves no znsdb_datadir_size_bytes"},
		{"another exporter", "# TYPE mysql_up gauge\nmysql_up 1\n", UsableZenFS, 0, "serves no znsdb_* series"},
		{"not the text format", "<html>not found</html>\n", UsableStatfs, 0, "do not parse"},
		{"a negative size", "# TYPE znsdb_datadir_size_bytes gauge\nznsdb_datadir_size_bytes -4096\n", UsableStatfs, 0, "not a byte count"},
		{"two samples", "# TYPE znsdb_datadir_size_bytes gauge\nznsdb_datadir_size_bytes{a=\"1\"} 1\nznsdb_datadir_size_bytes{a=\"2\"} 2\n", UsableStatfs, 0, "2 samples"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := usableFromMetrics(strings.NewReader(c.text), c.source)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("got %d, %v; want an error with %q", got, err, c.errHas)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

// measureUsable puts what the sidecar serves into the summary, and leaves it out with the reason in the log
// when it cannot read it; the verify's outcome is not its business.
func TestMeasureUsable(t *testing.T) {
	zenfs := readMetrics(t, "metrics-zenfs.txt")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(zenfs))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	run := func(url, source string) (*runner, string) {
		var errb bytes.Buffer
		r := &runner{cfg: config{phase: "verify", metricsURL: url, usableSource: source}, stderr: &errb,
			now: time.Now, redact: newRedactor("")}
		r.measureUsable(context.Background())
		return r, errb.String()
	}
	r, log := run(srv.URL+"/metrics", UsableZenFS)
	if r.sum.UsableBytes != (3659+124+35)*mib || r.sum.UsableSource != UsableZenFS {
		t.Errorf("summary %d %q, log %q", r.sum.UsableBytes, r.sum.UsableSource, log)
	}
	for _, c := range []struct{ url, source, logHas string }{
		{srv.URL + "/nothing", UsableZenFS, "404 Not Found"},
		{srv.URL + "/metrics", "df", `--usable-source "df"`},
		{"unix:///run/x.sock", UsableStatfs, "not an http(s) URL"},
		{"http://127.0.0.1:1/metrics", UsableStatfs, "scraping the database's metrics sidecar"},
	} {
		r, log := run(c.url, c.source)
		if r.sum.UsableBytes != 0 || r.sum.UsableSource != "" || !strings.Contains(log, "usable capacity not measured: ") || !strings.Contains(log, c.logHas) {
			t.Errorf("%s %s: summary %d %q, log %q; want nothing and a log with %q", c.url, c.source, r.sum.UsableBytes, r.sum.UsableSource, log, c.logHas)
		}
	}
	// No URL: nothing tried, nothing logged.
	if r, log := run("", UsableStatfs); r.sum.UsableBytes != 0 || log != "" {
		t.Errorf("without --metrics-url: %d, %q", r.sum.UsableBytes, log)
	}
}
