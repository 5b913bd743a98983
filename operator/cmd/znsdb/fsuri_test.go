package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/test/mysqltest"
)

// fsURIProber runs `znsdb health --zenfs-device nullb0` against a greeting
// server, with a fake mysqld that answers rocksdb_fs_uri with got.
type fsURIProber struct {
	t     *testing.T
	addr  string
	dir   string
	ann   *fakeAnnotator
	now   time.Time
	got   func() (*string, error)
	asked int
}

func newFSURIProber(t *testing.T, got func() (*string, error)) *fsURIProber {
	return &fsURIProber{t: t, addr: tcpServer(t, writes(captured(t))), dir: t.TempDir(), ann: &fakeAnnotator{},
		now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), got: got}
}

func (p *fsURIProber) probe() (int, string) {
	p.t.Helper()
	var out, errOut bytes.Buffer
	ask := func(context.Context, string, string, account) (*string, error) { p.asked++; return p.got() }
	// The space refresh is another test's subject: df always fails fast here.
	runner := &fakeRunner{replies: map[string]reply{"df": {err: errors.New("exit status 1")}}}
	code := run(context.Background(), []string{"health", "--timeout", "500ms", "--addr", p.addr, "--zenfs-device", "nullb0",
		"--zenfs", "/opt/zenfs", "--zenfs-space-state", filepath.Join(p.dir, "zenfs-space.json")},
		deps{runner: runner, stdout: &out, stderr: &errOut, getenv: rootPassword, now: func() time.Time { return p.now },
			annotate: p.ann, askFSURI: ask})
	return code, errOut.String()
}

func (p *fsURIProber) published(t *testing.T) []dbinit.FSURICheck {
	t.Helper()
	var checks []dbinit.FSURICheck
	for _, v := range p.ann.fsURI {
		c, err := dbinit.ParseFSURICheck(v)
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, c)
	}
	return checks
}

func str(s string) *string { return &s }

// The readiness probe of a ZenFS database fails while the running mysqld's
// rocksdb_fs_uri is not the device's, and says why on the pod; a server on
// ZenFS stays ready, and a check that could not ask fails nothing.
func TestHealthFailsWhenMySQLNotOnZenFS(t *testing.T) {
	for _, tc := range []struct {
		name    string
		got     func() (*string, error)
		code    int
		verdict dbinit.FSURIVerdict
	}{
		{"on ZenFS", func() (*string, error) { return str("zenfs://dev:nullb0"), nil }, exitOK, dbinit.FSURIOnZenFS},
		{"no such variable", func() (*string, error) { return nil, nil }, exitRefused, dbinit.FSURINotOnZenFS},
		{"another device", func() (*string, error) { return str("zenfs://dev:nullb1"), nil }, exitRefused, dbinit.FSURINotOnZenFS},
		{"cannot log in", func() (*string, error) { return nil, errors.New("Error 1045: Access denied") }, exitOK, dbinit.FSURIUnverified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newFSURIProber(t, tc.got)
			code, stderr := p.probe()
			checks := p.published(t)
			if code != tc.code || len(checks) != 1 || checks[0].Verdict != tc.verdict || checks[0].Want != "zenfs://dev:nullb0" {
				t.Fatalf("exit %d, published %+v, stderr %q", code, checks, stderr)
			}
			if tc.verdict == dbinit.FSURINotOnZenFS && !strings.Contains(stderr, "unhealthy: ") {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
}

// A server found on ZenFS is not asked again within the interval (its
// rocksdb_fs_uri is read-only); one that is not is asked at every probe, but
// the same verdict is published once per interval, not every few seconds.
func TestHealthFSURICheckedAtABoundedRate(t *testing.T) {
	p := newFSURIProber(t, func() (*string, error) { return str("zenfs://dev:nullb0"), nil })
	for range 3 {
		p.probe()
		p.now = p.now.Add(5 * time.Second)
	}
	if p.asked != 1 || len(p.ann.fsURI) != 1 {
		t.Errorf("on ZenFS: asked %d times, published %d times in 15 s; want 1 and 1", p.asked, len(p.ann.fsURI))
	}
	p.now = p.now.Add(time.Minute)
	p.probe()
	if p.asked != 2 || len(p.ann.fsURI) != 2 {
		t.Errorf("after the interval: asked %d, published %d; want 2 and 2", p.asked, len(p.ann.fsURI))
	}

	p = newFSURIProber(t, func() (*string, error) { return nil, nil })
	for range 3 {
		if code, _ := p.probe(); code != exitRefused {
			t.Errorf("exit %d", code)
		}
		p.now = p.now.Add(5 * time.Second)
	}
	if p.asked != 3 || len(p.ann.fsURI) != 1 {
		t.Errorf("not on ZenFS: asked %d times, published %d times in 15 s; want 3 and 1", p.asked, len(p.ann.fsURI))
	}
}

// The probe logs in as the exporter account the entrypoint keeps beside the
// datadir, else as root with the container's password.
func TestReadAccount(t *testing.T) {
	if defaultCredentials != resources.ExporterCredentials {
		t.Errorf("default credentials %s, the entrypoint's exporter file is %s", defaultCredentials, resources.ExporterCredentials)
	}
	cnf := filepath.Join(t.TempDir(), ".zns-exporter.cnf")
	// As images/mysql-entrypoint.sh writes it.
	if err := os.WriteFile(cnf, []byte("[client]\nuser=zns_exporter\npassword=Abc123def456ghi789\nsocket=/var/run/mysqld/mysqld.sock\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := readAccount(cnf, rootPassword)
	if err != nil || a.user != "zns_exporter" || a.password != "Abc123def456ghi789" {
		t.Errorf("readAccount = %+v, %v", a, err)
	}
	a, err = readAccount(filepath.Join(t.TempDir(), "absent"), rootPassword)
	if err != nil || a.user != "root" || a.password != "pw" {
		t.Errorf("fallback = %+v, %v", a, err)
	}
	if _, err := readAccount(filepath.Join(t.TempDir(), "absent"), func(string) string { return "" }); err == nil {
		t.Error("no account at all was accepted")
	}
}

// The real MariaDB (the project's stand-in, whose MyRocks has no ZenFS)
// given the line a Percona ZenFS config carries, loose-rocksdb-fs-uri:
// it starts, ignores the option, and the probe judges it not on ZenFS with
// the reason, from what the running server answered.
func TestMariaDBWithoutZenFSIsNotOnZenFS(t *testing.T) {
	mysqltest.Require(t)
	paths := mysqltest.NewPaths(t)
	cnf, err := mycnf.Generate(mycnf.Input{Flavor: mycnf.FlavorMariaDB, Engine: mycnf.EngineRocksDB,
		Profile: mycnf.ProfileWorkload, MemoryLimitBytes: 1 * mycnf.GiB, DataDir: paths.DataDir, Socket: paths.Socket,
		PidFile: paths.PidFile, Port: int32(paths.Port)})
	if err != nil {
		t.Fatal(err)
	}
	s := mysqltest.Start(t, cnf+"loose-rocksdb-fs-uri="+dbinit.ZenFSURI("nullb0")+"\n")
	var engine string
	if err := s.Open("").QueryRow("SELECT ENGINE FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB' AND SUPPORT IN ('YES', 'DEFAULT')").Scan(&engine); err != nil {
		t.Fatalf("MyRocks is not loaded, so this would not be the case under test: %v", err)
	}

	dir := t.TempDir()
	root := filepath.Join(dir, "root.cnf")
	if err := os.WriteFile(root, []byte("[client]\nuser=root\npassword=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ann := &fakeAnnotator{}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"health", "--socket", s.Socket, "--zenfs-device", "nullb0",
		"--mysql-credentials", root, "--zenfs-space-state", filepath.Join(dir, "zenfs-space.json")},
		deps{runner: &fakeRunner{}, stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, annotate: ann})
	if code != exitRefused || !strings.Contains(errOut.String(), "no rocksdb_fs_uri system variable") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	if len(ann.fsURI) != 1 {
		t.Fatalf("published %v", ann.fsURI)
	}
	c, err := dbinit.ParseFSURICheck(ann.fsURI[0])
	if err != nil || c.Verdict != dbinit.FSURINotOnZenFS || c.Got != nil || !strings.Contains(c.Message, "datadir volume") {
		t.Errorf("published %+v, %v", c, err)
	}

	// An account the server refuses is no verdict on where MyRocks writes.
	if err := os.WriteFile(root, []byte("[client]\nuser=nobody_here\npassword=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "zenfs-fs-uri.json"))
	errOut.Reset()
	code = run(context.Background(), []string{"health", "--socket", s.Socket, "--zenfs-device", "nullb0",
		"--mysql-credentials", root, "--zenfs-space-state", filepath.Join(dir, "zenfs-space.json")},
		deps{runner: &fakeRunner{}, stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, annotate: ann})
	if code != exitOK || !strings.Contains(errOut.String(), "not verified") || !strings.Contains(errOut.String(), "1045") {
		t.Errorf("refused login: exit %d, stderr %q", code, errOut.String())
	}
}
