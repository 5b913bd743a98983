package main

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

func testControlPlane(t *testing.T) controlPlane {
	t.Helper()
	return controlPlane{Assets: "/k8s/bin", Dir: t.TempDir(), APIPort: 16443, EtcdPort: 30001, PeerPort: 30002, KubeletFwd: 30004}
}

// TestControlPlaneDaemons: the daemons' command lines hold what the guest's kubelet and pods, and the API
// server's way to the kubelet, depend on.
func TestControlPlaneDaemons(t *testing.T) {
	cp := testControlPlane(t)
	join := func(d daemon) string { return strings.Join(d.Argv, " ") }
	etcd := join(cp.etcd())
	for _, want := range []string{"/k8s/bin/etcd --data-dir " + cp.path("etcd"), "--listen-client-urls http://127.0.0.1:30001",
		"--initial-cluster default=http://127.0.0.1:30002", "--unsafe-no-fsync"} {
		if !strings.Contains(etcd, want) {
			t.Errorf("etcd %q lacks %q", etcd, want)
		}
	}
	api := join(cp.apiServer())
	for _, want := range []string{"--etcd-servers http://127.0.0.1:30001", "--secure-port 16443 --bind-address 127.0.0.1 --advertise-address 10.0.2.100",
		"--egress-selector-config-file " + cp.path("egress.yaml"), "--kubelet-preferred-address-types InternalIP",
		"--token-auth-file " + cp.path("tokens.csv"), "--enable-priority-and-fairness=false"} {
		if !strings.Contains(api, want) {
			t.Errorf("kube-apiserver %q lacks %q", api, want)
		}
	}
	ctrl := cp.controllers("/kc")
	if len(ctrl) != 2 || ctrl[0].Name != "kube-controller-manager" || ctrl[1].Name != "kube-scheduler" {
		t.Fatalf("controllers %+v", ctrl)
	}
	for _, d := range ctrl {
		if a := join(d); !strings.Contains(a, "--kubeconfig /kc") || !strings.HasSuffix(a, "--secure-port 0") || !strings.Contains(a, "--leader-elect=false") {
			t.Errorf("%s: %q", d.Name, a)
		}
	}
	if a := join(ctrl[0]); !strings.Contains(a, "--root-ca-file "+filepath.Join(cp.Dir, "certs", "apiserver.crt")) {
		t.Errorf("the controller-manager publishes no root CA: %q", a)
	}
	if got := cp.egressConfig(); !strings.Contains(got, "name: cluster") || !strings.Contains(got, "proxyProtocol: HTTPConnect") ||
		!strings.Contains(got, "udsName: "+cp.proxySocket()) {
		t.Errorf("egress configuration:\n%s", got)
	}
	if got := guestKubeconfig(16443, "tok"); !strings.Contains(got, `server: "https://10.0.2.100:16443"`) || !strings.Contains(got, `token: "tok"`) {
		t.Errorf("the guest's kubeconfig:\n%s", got)
	}
}

// TestControllersAsTheGuestHasThem: ZNS_NODE_CONTROL_PLANE=guest runs the same controllers (node.sh's list).
func TestControllersAsTheGuestHasThem(t *testing.T) {
	b, err := os.ReadFile("../qemu/guest-node/node.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)local off=\(([^)]*)\)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no kcm_controllers list in node.sh")
	}
	want := "*,-" + strings.Join(strings.Fields(string(m[1])), ",-")
	if got := kcmControllers(); got != want {
		t.Errorf("kcmControllers() %q, node.sh's %q", got, want)
	}
}

// TestCredentials: the kubelet, trusting ca.crt, takes the API server's client certificate, which the API
// server's RBAC sees as system:masters; the service account key and the token file are what it reads.
func TestCredentials(t *testing.T) {
	cp := testControlPlane(t)
	caPEM, err := cp.writeCredentials("tok")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(cp.path(name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) || string(read("ca.crt")) != string(caPEM) {
		t.Fatal("ca.crt is no certificate, or not the one returned")
	}
	block, _ := pem.Decode(read("kubelet-client.crt"))
	client, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the kubelet would refuse the API server's client certificate: %v", err)
	}
	if client.Subject.CommonName != "kube-apiserver-kubelet-client" || !slices.Equal(client.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("subject %v", client.Subject)
	}
	for _, name := range []string{"sa.key", "kubelet-client.key"} {
		block, _ := pem.Decode(read(name))
		if block == nil {
			t.Fatalf("%s holds no PEM", name)
		}
		if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if st, _ := os.Stat(cp.path(name)); st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, st.Mode())
		}
	}
	if got := string(read("tokens.csv")); got != "tok,zns-admin,zns-admin,system:masters\n" {
		t.Errorf("tokens.csv %q", got)
	}
	if string(read("egress.yaml")) != cp.egressConfig() {
		t.Error("egress.yaml is not the egress configuration")
	}
}

// echoServer answers each connection with what it reads, prefixed.
func echoServer(t *testing.T, prefix string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "%s%s\n", prefix, sc.Text())
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestProxyLeadsToTheKubeletAlone: CONNECT to the kubelet's address is joined to its forward; any other target
// or method is refused, since nothing else in the guest is reachable from the host.
func TestProxyLeadsToTheKubeletAlone(t *testing.T) {
	kubelet := echoServer(t, "kubelet:")
	sock := filepath.Join(t.TempDir(), "p.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var said []string
	go serveProxy(l, kubeletTarget(), kubelet, func(f string, a ...any) { mu.Lock(); said = append(said, fmt.Sprintf(f, a...)); mu.Unlock() })
	ask := func(request string) (string, net.Conn, *bufio.Reader) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, request)
		r := bufio.NewReader(c)
		status, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return status, c, r
	}
	status, c, r := ask("CONNECT 10.0.2.15:10250 HTTP/1.1\r\nHost: 10.0.2.15:10250\r\n\r\n")
	if status != "HTTP/1.1 200 Connection established\r\n" {
		t.Fatalf("CONNECT to the kubelet: %q", status)
	}
	r.ReadString('\n') // the blank line that ends the response
	io.WriteString(c, "GET /healthz\n")
	if got, err := r.ReadString('\n'); err != nil || got != "kubelet:GET /healthz\n" {
		t.Errorf("through the tunnel: %q, %v", got, err)
	}
	c.Close()
	for _, req := range []string{"CONNECT 10.244.0.5:9104 HTTP/1.1\r\nHost: 10.244.0.5:9104\r\n\r\n", "GET http://10.0.2.15:10250/ HTTP/1.1\r\nHost: 10.0.2.15:10250\r\n\r\n"} {
		if status, c, _ := ask(req); status != "HTTP/1.1 502 Bad Gateway\r\n" {
			t.Errorf("%q: %q, want 502", req, status)
		} else {
			c.Close()
		}
	}
	// The proxy logs a refusal after it has answered it, so the log is read once both refusals are in it.
	refusals := func() (n int, all []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range said {
			if strings.Contains(s, "only CONNECT 10.0.2.15:10250 (the kubelet) leads into the guest") {
				n++
			}
		}
		return n, slices.Clone(said)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n, all := refusals()
		if n == 2 && len(all) == 2 {
			break
		}
		if n > 2 || len(all) > 2 || time.Now().After(deadline) {
			t.Fatalf("the proxy said %q, want the two refusals", all)
		}
	}
}

// TestPipe is the guest forward's command: its stdin and stdout joined to the API server's port.
func TestPipe(t *testing.T) {
	api := echoServer(t, "api:")
	var out strings.Builder
	if err := pipe(api, strings.NewReader("GET /readyz\n"), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "api:GET /readyz\n" {
		t.Errorf("piped back %q", out.String())
	}
}

// TestServeStopsTheControlPlaneWithTheGuest: serve starts etcd and the API server beside the boot, the
// controller-manager and the scheduler once the API server answers, and stops them all when the guest stops,
// ending with the boot's status.
func TestServeStopsTheControlPlaneWithTheGuest(t *testing.T) {
	assets := t.TempDir()
	calls := filepath.Join(assets, "calls")
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		script := fmt.Sprintf("#!/bin/sh\necho \"%s $$\" >>%s\nexec sleep 300\n", name, calls)
		if err := os.WriteFile(filepath.Join(assets, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cp := testControlPlane(t)
	cp.Assets = assets
	log := &stageruntest.SyncBuffer{} // serve's goroutines and its boot write at once
	s := &server{spec: serveSpec{ControlPlane: cp, Kubeconfig: "/kc", Env: os.Environ(),
		Boot: []string{"/bin/sh", "-c", "echo 'zoned-node: start'; while [ ! -e " + cp.path("stop") + " ]; do sleep 0.05; done; exit 3"}},
		log: log, running: map[string]started{}, every: time.Hour}
	s.apiReady = func(context.Context) bool { _, err := os.Stat(cp.path("answering")); return err == nil }
	done := make(chan int)
	go func() { done <- s.run(context.Background()) }()
	started := func(want ...string) map[string]int {
		t.Helper()
		for range 200 {
			b, _ := os.ReadFile(calls)
			pids := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var name string
				var pid int
				if _, err := fmt.Sscan(l, &name, &pid); err == nil {
					pids[name] = pid
				}
			}
			if len(pids) == len(want) {
				for _, w := range want {
					if pids[w] == 0 {
						t.Fatalf("started %v, want %v", pids, want)
					}
				}
				return pids
			}
			time.Sleep(20 * time.Millisecond)
		}
		b, _ := os.ReadFile(calls)
		t.Fatalf("started:\n%s\nwant %v", b, want)
		return nil
	}
	started("etcd", "kube-apiserver")
	time.Sleep(200 * time.Millisecond)
	started("etcd", "kube-apiserver") // nothing more while the API server does not answer
	if err := os.WriteFile(cp.path("answering"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pids := started("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
	if err := os.WriteFile(cp.path("stop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case rc := <-done:
		if rc != 3 {
			t.Errorf("serve ended with %d, want the boot's 3", rc)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not end with the guest")
	}
	for name, pid := range pids {
		// reaped by serve: no such process, not even a zombie
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("%s (pid %d) still runs after the guest stopped", name, pid)
		}
	}
	for _, want := range []string{"zoned-node: start\n", "zoned-node host: API server ready on 127.0.0.1:16443 after ",
		"zoned-node host: the guest stopped (status 3): the control plane is stopped too\n"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("serve's log lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "WARNING") {
		t.Errorf("a daemon stopped by serve was reported as ended on its own:\n%s", log.String())
	}
}
