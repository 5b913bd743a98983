// Package mysqltest starts private, real MariaDB servers (with MyRocks) for
// tests: a fresh datadir per server, loopback only, stopped on cleanup.
// MariaDB from Debian is the stand-in for the product's Percona Server; see
// Require for the packages it needs.
package mysqltest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

const (
	// StartTimeout bounds the wait for a server to accept connections.
	// MyRocks and InnoDB start in 1-2 s here; slow CI disks get headroom.
	StartTimeout = 60 * time.Second
	// StopTimeout bounds a graceful shutdown before SIGKILL.
	StopTimeout = 30 * time.Second
	// maxSocketPath: sun_path is 108 bytes on Linux including the NUL.
	maxSocketPath = 107
)

// Server is one running mariadbd.
type Server struct {
	Port    int
	Socket  string
	DataDir string
	PidFile string
	// LogPath holds the server's stdout and stderr (it logs to stderr).
	LogPath string

	t       testing.TB
	runDir  string // config and log files
	cnfPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd has been waited for
	waitErr error
	log     *os.File
}

// Paths are fresh locations for one server, to put into its config.
type Paths struct {
	Dir     string // parent of the others; removed on cleanup
	DataDir string // does not exist yet: Start installs into it
	Socket  string
	PidFile string
	Port    int
}

// NewPaths makes a short-named directory under $MYSQLTEST_TMPDIR (default
// os.TempDir()) and a free port. Short, because t.TempDir() names grow with
// the test name and overflow the unix socket path limit. The directory must
// be on a disk: MyRocks' direct IO and InnoDB's O_DIRECT fail on tmpfs.
func NewPaths(t testing.TB) Paths {
	t.Helper()
	parent := os.Getenv("MYSQLTEST_TMPDIR")
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "mysqltest-")
	if err != nil {
		t.Fatalf("mysqltest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if isTmpfs(dir) {
		t.Skipf("needs a disk-backed temp dir for O_DIRECT: %s is tmpfs (set MYSQLTEST_TMPDIR)", parent)
	}
	p := Paths{
		Dir:     dir,
		DataDir: filepath.Join(dir, "data"),
		Socket:  filepath.Join(dir, "mysqld.sock"),
		PidFile: filepath.Join(dir, "mysqld.pid"),
		Port:    FreePort(t),
	}
	if len(p.Socket) > maxSocketPath {
		t.Fatalf("mysqltest: socket path %q is longer than %d bytes; set MYSQLTEST_TMPDIR to a shorter directory", p.Socket, maxSocketPath)
	}
	return p
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mysqltest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type binaries struct {
	mariadbd, installDB, pluginDir string
	missing                        string
}

var (
	binsOnce sync.Once
	bins     binaries
)

// lookPath also tries /usr/sbin, which is not on a non-root user's PATH.
func lookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func findBinaries() binaries {
	binsOnce.Do(func() {
		bins.mariadbd = lookPath("mariadbd")
		bins.installDB = lookPath("mariadb-install-db")
		switch {
		case bins.mariadbd == "":
			bins.missing = "mariadbd"
			return
		case bins.installDB == "":
			bins.missing = "mariadb-install-db"
			return
		}
		// The compiled-in plugin directory, as the server itself reports it.
		args := []string{"--no-defaults", "--verbose", "--help"}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		out, _ := exec.Command(bins.mariadbd, args...).Output()
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "plugin-dir" {
				bins.pluginDir = f[1]
			}
		}
		if bins.pluginDir == "" {
			bins.missing = "mariadbd's plugin-dir"
			return
		}
		if _, err := os.Stat(filepath.Join(bins.pluginDir, "ha_rocksdb.so")); err != nil {
			bins.missing = filepath.Join(bins.pluginDir, "ha_rocksdb.so")
		}
	})
	return bins
}

// Require skips the test unless a MariaDB server with MyRocks is installed.
func Require(t testing.TB) {
	t.Helper()
	if b := findBinaries(); b.missing != "" {
		t.Skipf("needs %s (apt-get install mariadb-server mariadb-plugin-rocksdb)", b.missing)
	}
}

// Start installs system tables into the config's datadir unless it already
// holds them, starts mariadbd with cnf (a [mysqld] option file that sets
// datadir, socket and port, e.g. from mycnf.Generate with NewPaths), and
// waits until it accepts connections. The server listens on 127.0.0.1 only
// and is stopped on t's cleanup; root has no password.
func Start(t testing.TB, cnf string) *Server {
	t.Helper()
	Require(t)
	s := &Server{t: t, runDir: t.TempDir()}
	s.LogPath = filepath.Join(s.runDir, "mariadbd.log")
	s.cnfPath = filepath.Join(s.runDir, "my.cnf")
	if err := s.configure(cnf); err != nil {
		t.Fatalf("mysqltest: %v", err)
	}
	if err := prepareDataDir(s.DataDir); err != nil {
		t.Fatalf("mysqltest: %v", err)
	}
	t.Cleanup(s.Stop)
	if err := s.start(); err != nil {
		t.Fatalf("mysqltest: %v", err)
	}
	return s
}

// Restart stops the server and starts it again on the same datadir with a
// new config: the seed's switch from the bulk-load to the workload profile.
func (s *Server) Restart(cnf string) {
	s.t.Helper()
	s.Stop()
	dataDir := s.DataDir
	if err := s.configure(cnf); err != nil {
		s.t.Fatalf("mysqltest: %v", err)
	}
	if s.DataDir != dataDir {
		s.t.Fatalf("mysqltest: Restart with datadir %q, server was on %q", s.DataDir, dataDir)
	}
	if err := s.start(); err != nil {
		s.t.Fatalf("mysqltest: %v", err)
	}
}

// configure reads the paths out of cnf and writes it for mariadbd.
func (s *Server) configure(cnf string) error {
	opts := mysqldOptions(cnf)
	s.DataDir, s.Socket, s.PidFile = opts["datadir"], opts["socket"], opts["pid_file"]
	if s.DataDir == "" || s.Socket == "" || opts["port"] == "" {
		return fmt.Errorf("config must set datadir, socket and port in [mysqld]; got datadir=%q socket=%q port=%q",
			s.DataDir, s.Socket, opts["port"])
	}
	port, err := strconv.Atoi(opts["port"])
	if err != nil {
		return fmt.Errorf("config port %q: %v", opts["port"], err)
	}
	s.Port = port
	if len(s.Socket) > maxSocketPath {
		return fmt.Errorf("socket path %q is longer than %d bytes", s.Socket, maxSocketPath)
	}
	// mariadbd ignores world-writable option files, so 0644 exactly.
	if err := os.WriteFile(s.cnfPath, []byte(cnf), 0o644); err != nil {
		return err
	}
	return os.Chmod(s.cnfPath, 0o644) // umask-proof
}

// mysqldOptions returns the [mysqld] options of an option file by normalised
// name, with one pair of outer quotes removed: enough to find paths.
func mysqldOptions(cnf string) map[string]string {
	m := map[string]string{}
	section := ""
	for _, line := range strings.Split(cnf, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			section = strings.TrimSpace(strings.Trim(line, "[]"))
			continue
		}
		if section != "mysqld" && section != "server" && section != "mariadbd" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k = strings.TrimPrefix(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "-", "_"), "loose_")
		v = strings.TrimSpace(v)
		if len(v) > 1 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		m[k] = v
	}
	return m
}

// prepareDataDir fills an absent or empty datadir from the system-table
// template; a datadir that already has system tables is reused as is.
func prepareDataDir(dataDir string) error {
	entries, err := os.ReadDir(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dataDir, "mysql")); err == nil {
			return nil
		}
		return fmt.Errorf("datadir %s is not empty and has no system tables", dataDir)
	}
	tmpl, err := template()
	if err != nil {
		return err
	}
	return copyTree(tmpl, dataDir)
}

var (
	templateOnce sync.Once
	templateDir  string
	templateErr  error
)

// privateTmpdir is a tmpdir of the server's own, beside its datadir. A mariadbd that starts deletes every #sql
// file in its tmpdir (leftover temporary tables), so servers and mariadb-install-db runs of concurrent tests that
// share /tmp delete each other's live temporary tables: a mariadb-install-db beside a starting server failed with
// "Unknown table 'mysql.tmp_user_sys'" (CI of 2026-11-29).
func privateTmpdir(dataDir string) (string, error) {
	dir := filepath.Clean(dataDir) + ".tmp"
	return dir, os.MkdirAll(dir, 0o700)
}

// template returns a datadir holding freshly installed system tables.
// mariadb-install-db takes ~3 s, copying its 20 MB result a few ms, so it
// runs once per mariadbd build: the result is kept in the user cache
// directory under a name derived from the binary, and created by rename so
// that concurrent test processes never see a half-built one.
func template() (string, error) {
	templateOnce.Do(func() { templateDir, templateErr = buildTemplate() })
	return templateDir, templateErr
}

func buildTemplate() (string, error) {
	b := findBinaries()
	args := []string{"--no-defaults", "--auth-root-authentication-method=normal", "--skip-test-db",
		"--skip-name-resolve", "--innodb-log-file-size=4M"} // the server resizes the log on start
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	st, err := os.Stat(b.mariadbd)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s|%d|%d|%s|%d", b.mariadbd, st.Size(), st.ModTime().UnixNano(), strings.Join(args, " "), os.Geteuid())
	key := hex.EncodeToString(h.Sum(nil))[:16]

	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	parent := filepath.Join(cache, "zns-mysql", "mysqltest")
	final := filepath.Join(parent, "datadir-"+key)
	if _, err := os.Stat(filepath.Join(final, "mysql")); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "data")
	// A private tmpdir (not in the cache key: it changes every time): see privateTmpdir.
	cmd := exec.Command(b.installDB, append(args, "--datadir="+data, "--tmpdir="+tmp)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v\n%s", b.installDB, err, tail(out, 40))
	}
	if err := os.Rename(data, final); err != nil {
		// Another process won the race: use its template.
		if _, statErr := os.Stat(filepath.Join(final, "mysql")); statErr == nil {
			return final, nil
		}
		return "", err
	}
	return final, nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm())
		}
		if !info.Mode().IsRegular() {
			return nil // sockets or pid files cannot be in a fresh template; skip
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

func (s *Server) start() error {
	b := findBinaries()
	// --defaults-file must come first. Command-line options override the
	// file: loopback only whatever the config says.
	tmpdir, err := privateTmpdir(s.DataDir)
	if err != nil {
		return err
	}
	args := []string{"--defaults-file=" + s.cnfPath, "--bind-address=127.0.0.1", "--tmpdir=" + tmpdir}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root") // mariadbd refuses to run as root otherwise
	}
	log, err := os.OpenFile(s.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(b.mariadbd, args...)
	cmd.Stdout, cmd.Stderr = log, log
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %v", b.mariadbd, err)
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.done, s.log, s.waitErr = cmd, done, log, nil
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(done)
	}()

	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(StartTimeout)
	var pingErr error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			s.mu.Lock()
			werr := s.waitErr
			s.mu.Unlock()
			s.stopped()
			return fmt.Errorf("mariadbd exited during start (%v); log %s:\n%s", werr, s.LogPath, s.LogTail(40))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		pingErr = db.PingContext(ctx)
		cancel()
		if pingErr == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("mariadbd not accepting connections after %v (last error: %v); log %s:\n%s",
		StartTimeout, pingErr, s.LogPath, s.LogTail(40))
}

// stopped forgets the process after it has been waited for.
func (s *Server) stopped() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		s.log.Close()
	}
	s.cmd, s.done, s.log = nil, nil, nil
}

// Stop shuts the server down (SIGTERM, then SIGKILL after StopTimeout) and
// waits for it. It is idempotent and registered with t.Cleanup. A server
// that had already died, or exits with an error, fails the test: that is a
// crash the test did not see.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		s.mu.Lock()
		err := s.waitErr
		s.mu.Unlock()
		s.stopped()
		s.t.Errorf("mysqltest: mariadbd died before Stop (%v); log %s:\n%s", err, s.LogPath, s.LogTail(40))
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	killed := false
	select {
	case <-done:
	case <-time.After(StopTimeout):
		_ = cmd.Process.Kill()
		killed = true
		<-done
	}
	s.mu.Lock()
	err := s.waitErr
	s.mu.Unlock()
	s.stopped()
	switch {
	case killed:
		s.t.Errorf("mysqltest: mariadbd ignored SIGTERM for %v and was killed; log %s:\n%s", StopTimeout, s.LogPath, s.LogTail(40))
	case err != nil:
		s.t.Errorf("mysqltest: mariadbd shutdown: %v; log %s:\n%s", err, s.LogPath, s.LogTail(40))
	}
}

// DSN is a go-sql-driver/mysql DSN for root over the unix socket.
func (s *Server) DSN(db string) string {
	c := mysql.NewConfig()
	c.User = "root"
	c.Net = "unix"
	c.Addr = s.Socket
	c.DBName = db
	c.Timeout = 5 * time.Second
	return c.FormatDSN()
}

// TCPAddr is the loopback address for clients that need TCP (sysbench).
func (s *Server) TCPAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// Open returns a pool to db, closed on cleanup before the server stops.
func (s *Server) Open(db string) *sql.DB {
	s.t.Helper()
	pool, err := sql.Open("mysql", s.DSN(db))
	if err != nil {
		s.t.Fatalf("mysqltest: %v", err)
	}
	s.t.Cleanup(func() { _ = pool.Close() })
	return pool
}

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tail(b, n)
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
