package images

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestExporterAccountOnHost: the entrypoint keeps the zns_exporter account and its client options beside the
// datadir, and the real prometheus-mysqld-exporter (Debian's, as in the images) logs in with them over the socket.
func TestExporterAccountOnHost(t *testing.T) {
	h := requireHostMariaDB(t)
	const password = "root-password-1"
	v := newVolume(t, h)
	e := start(t, h, v, password)
	e.waitReady(t, h, v, password)

	cnf := filepath.Join(v.dir, ".zns-exporter.cnf")
	fi, err := os.Stat(cnf)
	if err != nil {
		t.Fatalf("no client option file for the exporter: %v\n%s", err, e.out.String())
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", cnf, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(cnf)
	if err != nil {
		t.Fatal(err)
	}
	pw := regexp.MustCompile(`(?m)^password=([A-Za-z0-9]+)$`).FindStringSubmatch(string(raw))
	if pw == nil || len(pw[1]) < 16 || !strings.Contains(string(raw), "user=zns_exporter\n") ||
		!strings.Contains(string(raw), "socket="+v.socket+"\n") {
		t.Fatalf("client options:\n%s", raw)
	}
	if strings.Contains(e.out.String(), pw[1]) {
		t.Error("the entrypoint printed the exporter's password")
	}

	grants, err := sql(h, v, password, "SHOW GRANTS FOR 'zns_exporter'@'localhost'")
	if err != nil {
		t.Fatalf("%v: %s", err, grants)
	}
	first := strings.SplitN(grants, "\n", 2)[0]
	for _, want := range []string{"PROCESS", "SELECT"} {
		if !strings.Contains(first, want) {
			t.Errorf("grants %q lack %s", first, want)
		}
	}
	// MariaDB 10.5+ calls REPLICATION CLIENT "BINLOG MONITOR".
	if !strings.Contains(first, "BINLOG MONITOR") && !strings.Contains(first, "REPLICATION CLIENT") {
		t.Errorf("grants %q lack REPLICATION CLIENT", first)
	}
	if strings.Contains(first, "ALL PRIVILEGES") || strings.Contains(first, "SUPER") || strings.Contains(grants, "WITH GRANT OPTION") {
		t.Errorf("the exporter account has more than it needs: %q", grants)
	}

	scrapeExporter(t, cnf)

	// A restart keeps the password (the file is the account's only record) and makes the account again.
	e.stop(t)
	if _, err := sql(h, v, password, "SELECT 1"); err == nil {
		t.Fatal("the server still answers after stop")
	}
	e = start(t, h, v, password)
	e.waitReady(t, h, v, password)
	again, err := os.ReadFile(cnf)
	if err != nil || string(again) != string(raw) {
		t.Errorf("the client options changed across a restart (%v)", err)
	}
	out, err := exec.Command(h.client, "--defaults-file="+cnf, "-N", "-B", "-e", "SELECT CURRENT_USER()").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "zns_exporter@localhost" {
		t.Errorf("login with the client options after a restart: %v: %s", err, out)
	}
}

// scrapeExporter runs prometheus-mysqld-exporter with the client options and checks that it reaches the server.
func scrapeExporter(t *testing.T, cnf string) {
	t.Helper()
	bin, err := exec.LookPath("prometheus-mysqld-exporter")
	if err != nil {
		t.Log("the exporter part needs prometheus-mysqld-exporter (Debian's package, hack/install-deps.sh): not run")
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--web.listen-address="+addr, "--config.my-cnf="+cnf)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter did not answer: %v\n%s", err, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !regexp.MustCompile(`(?m)^mysql_up 1$`).MatchString(body) {
		t.Errorf("mysql_up is not 1: the exporter could not log in\n%s", log.String())
	}
	if !regexp.MustCompile(`(?m)^mysql_global_status_questions [1-9]`).MatchString(body) {
		t.Error("no mysql_global_status_questions: the exporter read no status")
	}
	if dst := os.Getenv("ZNS_RECORD_EXPORTER"); dst != "" {
		if err := os.WriteFile(dst, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
