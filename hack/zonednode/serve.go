package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// serveSpec is what `zonednode serve` runs: the control plane on the host, and the guest's boot (hack/qemu/run.sh
// and its arguments). up writes it; serve runs as the leader of the node's process group, so that down stops the
// control plane with QEMU.
type serveSpec struct {
	ControlPlane controlPlane `json:"controlPlane"`
	Kubeconfig   string       `json:"kubeconfig"` // the host's, for the controller-manager and the scheduler
	Token        string       `json:"token"`
	Boot         []string     `json:"boot"` // run.sh and its arguments
	Env          []string     `json:"env"`
}

// server is one serve: its log (the guest's log, where up reads progress), its daemons, and its clock.
type server struct {
	spec serveSpec
	log  io.Writer
	mu   sync.Mutex
	// running are the daemons started, by name, for the CPU lines and the stop.
	running map[string]started
	// apiReady reports whether the API server answers /readyz and has written its certificate.
	apiReady func(ctx context.Context) bool
	every    time.Duration // between two CPU lines
}

// started is a daemon's process and what closes once it was reaped.
type started struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// logf writes serve's own lines: "zoned-node host: ...", which neither the guest's line pattern nor "ready" match.
func (s *server) logf(format string, a ...any) {
	fmt.Fprintf(s.log, "zoned-node host: "+format+"\n", a...)
}

// serveMain is `zonednode serve SPEC`: it returns the boot's exit status once the guest has stopped.
func serveMain(specPath string, stdout io.Writer) int {
	b, err := os.ReadFile(specPath)
	var spec serveSpec
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		fmt.Fprintf(stdout, "zoned-node host: ERROR: %s: %v\n", specPath, err)
		return 1
	}
	s := &server{spec: spec, log: stdout, running: map[string]started{}, every: 5 * time.Minute}
	s.apiReady = func(ctx context.Context) bool { return apiAnswers(ctx, spec.ControlPlane, spec.Token) }
	return s.run(context.Background())
}

// run boots the guest and, meanwhile, starts the control plane (the guest needs the API server only once its
// containerd is up, a minute or more into the boot); it ends with the guest, taking the daemons with it.
func (s *server) run(ctx context.Context) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cp := s.spec.ControlPlane
	_ = os.Remove(cp.proxySocket())
	proxy, err := net.Listen("unix", cp.proxySocket())
	if err != nil {
		s.logf("ERROR: the proxy to the kubelet cannot listen: %v", err)
		return 1
	}
	defer proxy.Close()
	go serveProxy(proxy, kubeletTarget(), fmt.Sprintf("127.0.0.1:%d", cp.KubeletFwd), s.logf)

	boot := exec.Command(s.spec.Boot[0], s.spec.Boot[1:]...)
	boot.Env, boot.Stdout, boot.Stderr = s.spec.Env, s.log, s.log
	if err := boot.Start(); err != nil {
		s.logf("ERROR: cannot start %s: %v", s.spec.Boot[0], err)
		return 1
	}
	booted := make(chan int, 1)
	go func() { booted <- stagerun.ExitStatus(boot.Wait()) }()

	go s.controlPlane(ctx)
	go s.cpuLines(ctx)
	rc := <-booted
	cancel()
	s.stop()
	s.logf("the guest stopped (status %d): the control plane is stopped too", rc)
	return rc
}

// controlPlane starts etcd and the API server, then, once it answers, the controller-manager and the scheduler.
func (s *server) controlPlane(ctx context.Context) {
	cp := s.spec.ControlPlane
	t0 := time.Now()
	for _, d := range []daemon{cp.etcd(), cp.apiServer()} {
		if !s.start(d) {
			return
		}
	}
	for !s.apiReady(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	s.logf("API server ready on 127.0.0.1:%d after %.1fs", cp.APIPort, time.Since(t0).Seconds())
	for _, d := range cp.controllers(s.spec.Kubeconfig) {
		s.start(d)
	}
}

// start starts a daemon, its output in its own log, and says so when it ends before the guest.
func (s *server) start(d daemon) bool {
	log, err := os.Create(s.spec.ControlPlane.path(d.Name + ".log"))
	if err != nil {
		s.logf("ERROR: %v", err)
		return false
	}
	c := exec.Command(d.Argv[0], d.Argv[1:]...)
	c.Env, c.Stdout, c.Stderr = s.spec.Env, log, log
	if err := c.Start(); err != nil {
		log.Close()
		s.logf("ERROR: cannot start %s: %v", d.Name, err)
		return false
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.running[d.Name] = started{c, done}
	s.mu.Unlock()
	go func() {
		err := c.Wait()
		close(done)
		log.Close()
		s.mu.Lock()
		stopping := s.running == nil
		s.mu.Unlock()
		if !stopping {
			s.logf("WARNING: %s ended (%v); the end of its log, %s:\n%s", d.Name, err, log.Name(), stagerun.TailLines(log.Name(), 10))
		}
	}()
	return true
}

// stop ends the daemons: TERM, then KILL to those not reaped within 10 s.
func (s *server) stop() {
	s.mu.Lock()
	daemons := s.running
	s.running = nil
	s.mu.Unlock()
	for _, d := range daemons {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	late := false
	for _, d := range daemons {
		if !late {
			select {
			case <-d.done:
				continue
			case <-deadline.C:
				late = true
			}
		}
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// cpuLines says every few minutes where the control plane's CPU went, in CPU-seconds since its start: the
// guest's own line (node.sh's "cpu since boot") no longer has it.
func (s *server) cpuLines(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.every):
		}
		if line := s.cpuLine(); line != "" {
			s.logf("control plane cpu since boot (CPU-s):%s", line)
		}
	}
}

func (s *server) cpuLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, name := range []string{"kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler"} {
		if d, ok := s.running[name]; ok {
			if secs, ok := cpuSeconds(d.cmd.Process.Pid); ok {
				fmt.Fprintf(&b, " %s %.0f", strings.TrimPrefix(name, "kube-"), secs)
			}
		}
	}
	return b.String()
}

// cpuSeconds is a process's user and system CPU time, from /proc/PID/stat (fields 14 and 15; the clock ticks
// are 100 a second on Linux).
func cpuSeconds(pid int) (float64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return (u + st) / 100, true
}

// apiAnswers: the API server wrote its certificate and answers /readyz with the node's token.
func apiAnswers(ctx context.Context, cp controlPlane, token string) bool {
	if _, err := os.Stat(cp.rootCA()); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/readyz", cp.APIPort), nil)
	if err != nil {
		return false
	}
	req.Header.Set("Authorization", "Bearer "+token)
	// the API server's certificate is self-signed and of this boot; the check is whether it answers
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// serveProxy is the API server's egress to the cluster: HTTP CONNECT to target (the kubelet) is joined to via
// (its host forward); anything else is refused, since nothing else in the guest is reachable from the host.
func serveProxy(l net.Listener, target, via string, logf func(string, ...any)) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			if err := connect(conn, target, via); err != nil {
				logf("proxy to the kubelet: %v", err)
			}
		}()
	}
}

func connect(conn net.Conn, target, via string) error {
	defer conn.Close()
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return err
	}
	if req.Method != http.MethodConnect || req.Host != target {
		fmt.Fprintf(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return fmt.Errorf("refused %s %s: only CONNECT %s (the kubelet) leads into the guest", req.Method, req.Host, target)
	}
	up, err := net.DialTimeout("tcp", via, 10*time.Second)
	if err != nil {
		fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
		return fmt.Errorf("the kubelet's forward %s: %v", via, err)
	}
	defer up.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return err
	}
	return join(struct {
		io.Reader
		io.Writer
	}{br, conn}, up)
}

// join copies both ways: a's end is passed on to b as a half close, and b's end ends the join (an HTTP
// client's request may end before its answer begins).
func join(a io.ReadWriter, b net.Conn) error {
	go func() {
		_, _ = io.Copy(b, a)
		if hc, ok := b.(interface{ CloseWrite() error }); ok {
			_ = hc.CloseWrite()
		}
	}()
	_, err := io.Copy(a, b)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// pipeMain is `zonednode pipe ADDR`: the command of the guest forward to the API server, one per connection,
// whose stdin and stdout are the guest's connection.
func pipeMain(addr string) int {
	if err := pipe(addr, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "zoned-node pipe: %v\n", err)
		return 1
	}
	return 0
}

// pipe joins in and out to a connection to addr until either side ends.
func pipe(addr string, in io.Reader, out io.Writer) error {
	up, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer up.Close()
	return join(struct {
		io.Reader
		io.Writer
	}{in, out}, up)
}

// selfPath is this program's binary, which QEMU's guest forward and up's serve run.
func selfPath() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}
