package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The node's etcd, API server, controller-manager and scheduler run on the host, natively, unless
// ZNS_NODE_CONTROL_PLANE=guest. Under TCG every instruction of theirs cost ten to thirty times its native CPU:
// in the warm CI run of 2026-11-29 they took 822 of the guest's 2,162 busy CPU-seconds, and a CPU profile of the
// guest's API server showed about 65 ms of CPU per request at 6 requests a second. The guest keeps the kubelet,
// containerd, kube-proxy, CoreDNS and the pods. The network stays QEMU's restricted user network: the guest
// reaches the API server through a guest forward (each connection runs `zonednode pipe` on the host), and the API
// server reaches the kubelet (logs, exec, port-forward) through its egress selector, an HTTP CONNECT proxy in
// `zonednode serve` that knows one address, the kubelet's, and hands it to a host forward.

const (
	// guestIP is the guest's address on QEMU's user network (hack/qemurun's guest setup).
	guestIP = "10.0.2.15"
	// apiGuestIP is where the guest finds the API server: a guest forward's address. The API server advertises
	// it, so that the kubernetes Service's endpoint is reachable from the pods too.
	apiGuestIP = "10.0.2.100"
	// kubeletPort is the kubelet's port in the guest.
	kubeletPort = 10250
)

// controlPlane is where the host's control plane listens and keeps its state.
type controlPlane struct {
	Assets string `json:"assets"` // the Kubernetes binaries (hack/kubernetes.sh node)
	Dir    string `json:"dir"`    // state, credentials and logs
	// APIPort is the API server's on 127.0.0.1, and the guest forward's on apiGuestIP.
	APIPort  int `json:"apiPort"`
	EtcdPort int `json:"etcdPort"`
	PeerPort int `json:"peerPort"`
	// KubeletFwd is the host forward's port to the kubelet, which the API server reaches through the proxy on the
	// unix socket proxySocket (the egress selector takes HTTP CONNECT over TCP only with TLS).
	KubeletFwd int `json:"kubeletFwd"`
	token      string
}

func (cp controlPlane) path(name string) string { return filepath.Join(cp.Dir, name) }

func (cp controlPlane) proxySocket() string { return cp.path("kubelet-proxy.sock") }

// kubeletTarget is the address the API server asks the proxy for: the kubelet's, from the node's InternalIP.
func kubeletTarget() string { return guestIP + ":" + strconv.Itoa(kubeletPort) }

// daemon is one process of the control plane.
type daemon struct {
	Name string
	Argv []string
}

// kcmControllers: every controller but those no flow here uses (quotas, autoscaling, CronJobs, disruption
// budgets, ReplicationControllers, certificate requests, volume expansion, ephemeral volumes) and those a single
// node without a cloud does not need: the pod CIDR is fixed (nodeipam), and the taint eviction, which would evict
// the pods when a starved kubelet renews its lease late. The node lifecycle stays: it takes off the not-ready
// taint the API server puts on every new node (TaintNodesByCondition), without which nothing schedules.
// guest-node/node.sh has the same list for ZNS_NODE_CONTROL_PLANE=guest.
func kcmControllers() string {
	off := []string{"nodeipam", "taint-eviction-controller", "resourcequota", "horizontalpodautoscaling", "cronjob",
		"disruption", "replicationcontroller", "endpointslicemirroring", "csrsigning", "csrapproving", "csrcleaner", "ttl",
		"persistentvolume-expander", "ephemeral-volume", "storage-version-gc", "legacy-service-account-token-cleaner"}
	return "*,-" + strings.Join(off, ",-")
}

// etcd is the first daemon; the API server needs it.
func (cp controlPlane) etcd() daemon {
	client := fmt.Sprintf("http://127.0.0.1:%d", cp.EtcdPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", cp.PeerPort)
	return daemon{"etcd", []string{filepath.Join(cp.Assets, "etcd"), "--data-dir", cp.path("etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "default=" + peer,
		"--unsafe-no-fsync"}}
}

// apiServer is the node's API server: test-grade (one bearer token, system:masters, for every component), bound
// to the host's loopback, no API priority and fairness (one client set, nothing to be fair between).
func (cp controlPlane) apiServer() daemon {
	return daemon{"kube-apiserver", []string{filepath.Join(cp.Assets, "kube-apiserver"),
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", cp.EtcdPort), "--cert-dir", cp.path("certs"),
		"--service-account-key-file", cp.path("sa.key"), "--service-account-signing-key-file", cp.path("sa.key"),
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--authorization-mode", "Node,RBAC", "--token-auth-file", cp.path("tokens.csv"),
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--kubelet-client-certificate", cp.path("kubelet-client.crt"), "--kubelet-client-key", cp.path("kubelet-client.key"),
		"--kubelet-preferred-address-types", "InternalIP", "--egress-selector-config-file", cp.path("egress.yaml"),
		"--enable-priority-and-fairness=false",
		"--secure-port", strconv.Itoa(cp.APIPort), "--bind-address", "127.0.0.1", "--advertise-address", apiGuestIP}}
}

// controllers are the daemons that start once the API server answers: the controller-manager reads the API
// server's certificate (the pods' root CA) from its cert dir. Neither serves a port of its own (secure port 0):
// the host may run other clusters' components.
func (cp controlPlane) controllers(kubeconfig string) []daemon {
	return []daemon{
		{"kube-controller-manager", []string{filepath.Join(cp.Assets, "kube-controller-manager"), "--kubeconfig", kubeconfig,
			"--service-account-private-key-file", cp.path("sa.key"), "--leader-elect=false",
			"--use-service-account-credentials=false", "--root-ca-file", cp.rootCA(),
			"--controllers", kcmControllers(), "--secure-port", "0"}},
		{"kube-scheduler", []string{filepath.Join(cp.Assets, "kube-scheduler"), "--kubeconfig", kubeconfig,
			"--leader-elect=false", "--secure-port", "0"}},
	}
}

// rootCA is the API server's self-signed certificate, which it writes into its cert dir.
func (cp controlPlane) rootCA() string { return filepath.Join(cp.Dir, "certs", "apiserver.crt") }

// egressConfig sends the API server's traffic to the cluster (the kubelet) through the proxy.
func (cp controlPlane) egressConfig() string {
	return fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, cp.proxySocket())
}

// guestKubeconfig is the kubelet's, kube-proxy's and CoreDNS's way to the API server on the host.
func guestKubeconfig(port int, token string) string {
	return strings.Replace(kubeconfigYAML(port, token), "https://127.0.0.1:", "https://"+apiGuestIP+":", 1)
}

// writeCredentials makes the control plane's state dir: the token file, the service accounts' signing key, a
// CA of this node's life and the API server's client certificate for the kubelet, signed by it (the guest's
// kubelet trusts the CA: caPEM), and the egress configuration.
func (cp controlPlane) writeCredentials(token string) (caPEM []byte, err error) {
	if err := os.RemoveAll(cp.Dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cp.Dir, "certs"), 0o700); err != nil {
		return nil, err
	}
	write := func(name string, b []byte) error { return os.WriteFile(cp.path(name), b, 0o600) }
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zns-guest-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	clientKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	client := &x509.Certificate{SerialNumber: big.NewInt(2),
		Subject:   pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	clientDER, err := x509.CreateCertificate(rand.Reader, client, caCert, &clientKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	key := func(k *rsa.PrivateKey) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	}
	cert := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }
	caPEM = cert(caDER)
	return caPEM, errors.Join(
		write("tokens.csv", []byte(token+",zns-admin,zns-admin,system:masters\n")),
		write("sa.key", key(sa)),
		write("ca.crt", caPEM),
		write("kubelet-client.key", key(clientKey)),
		write("kubelet-client.crt", cert(clientDER)),
		write("egress.yaml", []byte(cp.egressConfig())))
}

// hostControlPlane readies a boot whose control plane runs on the host: its ports, its credentials, and what the
// guest reads of them from the share (the marker control-plane, the kubelet's kubeconfig and the CA it trusts).
func (n *node) hostControlPlane(b *bootSpec, token string) error {
	self, err := n.self()
	if err != nil {
		return fmt.Errorf("cannot find this program's binary for the guest forward: %v", err)
	}
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = anyFreePort(); err != nil {
			return err
		}
	}
	n.cp = controlPlane{Assets: b.Assets, Dir: n.path("control-plane"), APIPort: b.Port,
		EtcdPort: ports[0], PeerPort: ports[1], KubeletFwd: ports[2], token: token}
	caPEM, err := n.cp.writeCredentials(token)
	if err != nil {
		return fmt.Errorf("cannot write the control plane's credentials into %s: %v", n.cp.Dir, err)
	}
	if err := errors.Join(
		os.WriteFile(filepath.Join(n.share, "ca.crt"), caPEM, 0o644),
		os.WriteFile(filepath.Join(n.share, "kc.yaml"), []byte(guestKubeconfig(b.Port, token)), 0o600),
		os.WriteFile(filepath.Join(n.share, "control-plane"), []byte("host\n"), 0o644)); err != nil {
		return err
	}
	b.HostControlPlane, b.KubeletFwd, b.Self = true, n.cp.KubeletFwd, self
	n.Logf("the control plane runs on the host (API server 127.0.0.1:%d, the guest's 10.0.2.100; logs in %s)", b.Port, n.cp.Dir)
	return nil
}

// anyFreePort is a port of the host's loopback that the kernel has just handed out, free as far as it knows.
func anyFreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
