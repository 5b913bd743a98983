package mysqltest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func minimalCnf(p Paths, extra string) string {
	return fmt.Sprintf("[mysqld]\ndatadir=%s\nsocket=%s\npid-file=%s\nport=%d\n%s", p.DataDir, p.Socket, p.PidFile, p.Port, extra)
}

func TestFreePort(t *testing.T) {
	p := FreePort(t)
	if p <= 0 || p > 65535 {
		t.Fatalf("port %d", p)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatalf("port %d is not free: %v", p, err)
	}
	l.Close()
}

func TestMysqldOptions(t *testing.T) {
	m := mysqldOptions(`# generated
[client]
socket=/wrong
[mysqld]
datadir = "/data dir"
loose-Pid-File=/p.pid
socket=/s.sock
port=3307
skip-log-bin
`)
	for k, want := range map[string]string{"datadir": "/data dir", "pid_file": "/p.pid", "socket": "/s.sock", "port": "3307", "skip_log_bin": ""} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, want)
		}
	}
}

func TestStartQueryRestartStop(t *testing.T) {
	Require(t)
	p := NewPaths(t)
	s := Start(t, minimalCnf(p, "max_connections=50\n"))
	if s.Port != p.Port || s.Socket != p.Socket || s.DataDir != p.DataDir {
		t.Errorf("server fields %+v do not match paths %+v", s, p)
	}
	db := s.Open("")
	var v int
	if err := db.QueryRow("SELECT @@max_connections").Scan(&v); err != nil || v != 50 {
		t.Fatalf("max_connections = %d, %v; want 50 from the config", v, err)
	}
	var bind string
	if err := db.QueryRow("SELECT @@bind_address").Scan(&bind); err != nil || bind != "127.0.0.1" {
		t.Errorf("bind_address = %q, %v; want 127.0.0.1", bind, err)
	}
	// TCP on loopback works too (sysbench uses it).
	c, err := net.Dial("tcp", s.TCPAddr())
	if err != nil {
		t.Errorf("dial %s: %v", s.TCPAddr(), err)
	} else {
		c.Close()
	}
	if _, err := db.Exec("CREATE DATABASE keep"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE keep.t (id INT PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO keep.t VALUES (1),(2),(3)"); err != nil {
		t.Fatal(err)
	}
	pid := s.cmd.Process.Pid
	db.Close() // its connections die with the server

	s.Restart(minimalCnf(p, "max_connections=60\n"))
	if processAlive(pid) {
		t.Errorf("old mariadbd %d still alive after Restart", pid)
	}
	db2 := s.Open("keep")
	if err := db2.QueryRow("SELECT @@max_connections").Scan(&v); err != nil || v != 60 {
		t.Errorf("after restart max_connections = %d, %v; want 60", v, err)
	}
	if err := db2.QueryRow("SELECT COUNT(*) FROM t").Scan(&v); err != nil || v != 3 {
		t.Errorf("after restart %d rows, %v; want the 3 written before", v, err)
	}
	pid = s.cmd.Process.Pid
	db2.Close()
	s.Stop()
	s.Stop() // idempotent
	if processAlive(pid) {
		t.Errorf("mariadbd %d alive after Stop", pid)
	}
	if _, err := os.Stat(p.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still present after a clean shutdown: %v", err)
	}
}

func processAlive(pid int) bool {
	// Stop has waited for the child, so a zombie cannot linger: a
	// successful signal 0 means a live process.
	return syscall.Kill(pid, 0) == nil
}

func TestStartFailureShowsServerLog(t *testing.T) {
	Require(t)
	p := NewPaths(t)
	s := &Server{t: t, runDir: t.TempDir()}
	s.LogPath = filepath.Join(s.runDir, "mariadbd.log")
	s.cnfPath = filepath.Join(s.runDir, "my.cnf")
	if err := s.configure(minimalCnf(p, "no_such_option_zns=1\n")); err != nil {
		t.Fatal(err)
	}
	if err := prepareDataDir(s.DataDir); err != nil {
		t.Fatal(err)
	}
	err := s.start()
	if err == nil {
		s.Stop()
		t.Fatal("server started with an unknown option")
	}
	if !strings.Contains(err.Error(), "unknown variable 'no_such_option_zns=1'") {
		t.Errorf("error lacks the server's own complaint:\n%v", err)
	}
	if s.cmd != nil {
		t.Errorf("failed server still tracked")
	}
}

func TestConfigureErrors(t *testing.T) {
	s := &Server{t: t, runDir: t.TempDir()}
	s.cnfPath = filepath.Join(s.runDir, "my.cnf")
	for _, cnf := range []string{
		"[mysqld]\nsocket=/s\nport=1\n",
		"[mysqld]\ndatadir=/d\nport=1\n",
		"[mysqld]\ndatadir=/d\nsocket=/s\n",
		"[client]\ndatadir=/d\nsocket=/s\nport=1\n",
		"[mysqld]\ndatadir=/d\nsocket=/s\nport=x\n",
		"[mysqld]\ndatadir=/d\nsocket=/" + strings.Repeat("s", 120) + "\nport=1\n",
	} {
		if err := s.configure(cnf); err == nil {
			t.Errorf("configure accepted:\n%s", cnf)
		}
	}
}

func TestPrepareDataDirRefusesForeignDir(t *testing.T) {
	Require(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "something"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepareDataDir(dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("prepareDataDir on a foreign non-empty dir: %v", err)
	}
}
