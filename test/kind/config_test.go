// Package kind checks the kind cluster configuration hack/kind/cluster.sh writes, without creating a cluster:
// what the node must have for the operator to work there (the zoned devices at the same paths, containerd
// handing device ownership to the pod's user) and what each node image needs (no default CNI for the offline
// image, kubelet's cgroup v1 opt-in for Kubernetes >= 1.35 on cgroup v1 hosts).
package kind

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type clusterConfig struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Name       string `json:"name"`
	Networking struct {
		DisableDefaultCNI bool   `json:"disableDefaultCNI"`
		PodSubnet         string `json:"podSubnet"`
		ServiceSubnet     string `json:"serviceSubnet"`
	} `json:"networking"`
	Nodes []struct {
		Role        string `json:"role"`
		Image       string `json:"image"`
		ExtraMounts []struct {
			HostPath      string `json:"hostPath"`
			ContainerPath string `json:"containerPath"`
		} `json:"extraMounts"`
	} `json:"nodes"`
	ContainerdConfigPatches []string `json:"containerdConfigPatches"`
	KubeadmConfigPatches    []string `json:"kubeadmConfigPatches"`
}

func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "hack", "kind", "cluster.sh")
}

// config runs `cluster.sh config` with the given environment on top of a private cache directory.
func config(t *testing.T, env ...string) (*clusterConfig, string, error) {
	t.Helper()
	cmd := exec.Command("bash", script(), "config")
	cmd.Env = append(os.Environ(), "ZNS_CACHE_DIR="+t.TempDir(), "ZNS_KIND_CLUSTER=cfgtest", "ZNS_KIND_WORKERS=")
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, stderr.String(), err
	}
	c := &clusterConfig{}
	if err := yaml.UnmarshalStrict(out, c); err != nil {
		t.Fatalf("cluster.sh config printed something that is not a kind config: %v\n%s", err, out)
	}
	return c, stderr.String(), nil
}

// pinnedK8s is versions.mk's K8S_VERSION, the one Kubernetes version of the project.
func pinnedK8s(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(script()), "..", "..", "versions.mk"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "K8S_VERSION" && f[1] == ":=" {
			return f[2]
		}
	}
	t.Fatal("versions.mk has no K8S_VERSION := line")
	return ""
}

func cgroupV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err != nil
}

func TestOfflineNodeWithDevices(t *testing.T) {
	// Character devices stand in for the zoned block devices: the script accepts both, and every machine has these.
	c, stderr, err := config(t, "ZNS_KIND_DEVICES=/dev/null /dev/zero", "ZNS_KIND_NODE=offline")
	if err != nil {
		t.Fatalf("cluster.sh config: %v\n%s", err, stderr)
	}
	if c.Kind != "Cluster" || c.APIVersion != "kind.x-k8s.io/v1alpha4" || c.Name != "cfgtest" {
		t.Errorf("header: kind %q apiVersion %q name %q", c.Kind, c.APIVersion, c.Name)
	}
	if len(c.Nodes) != 1 || c.Nodes[0].Role != "control-plane" {
		t.Fatalf("want one control-plane node, got %+v", c.Nodes)
	}
	n := c.Nodes[0]
	if !strings.HasPrefix(n.Image, "zns-mysql/kind-node:v1.") {
		t.Errorf("node image %q, want the offline zns-mysql/kind-node", n.Image)
	}
	if !c.Networking.DisableDefaultCNI {
		t.Error("the offline image has no kindnetd: disableDefaultCNI must be true")
	}
	var mounts []string
	for _, m := range n.ExtraMounts {
		if m.HostPath != m.ContainerPath {
			t.Errorf("device %s mounted at %s: the operator expects the host's path", m.HostPath, m.ContainerPath)
		}
		mounts = append(mounts, m.HostPath)
	}
	if strings.Join(mounts, " ") != "/dev/null /dev/zero" {
		t.Errorf("extraMounts %v, want /dev/null and /dev/zero", mounts)
	}
	patches := strings.Join(c.ContainerdConfigPatches, "\n")
	if !strings.Contains(patches, `[plugins."io.containerd.grpc.v1.cri"]`) ||
		!strings.Contains(patches, "device_ownership_from_security_context = true") {
		t.Errorf("containerd must give a device's ownership to the pod's user (non-root mysqld); patches:\n%s", patches)
	}
	// The node is the pinned Kubernetes (>= 1.35), whose kubelet refuses cgroup v1 unless told otherwise.
	opted := strings.Contains(strings.Join(c.KubeadmConfigPatches, "\n"), "failCgroupV1: false")
	if cgroupV1() != opted {
		t.Errorf("cgroup v1 host: %v; failCgroupV1: false written: %v", cgroupV1(), opted)
	}
	if want := "zns-mysql/kind-node:v" + pinnedK8s(t); n.Image != want {
		t.Errorf("node image %q, want %q: one Kubernetes version for the node and envtest", n.Image, want)
	}
}

func TestUpstreamNode(t *testing.T) {
	c, stderr, err := config(t, "ZNS_KIND_NODE=upstream", "ZNS_KIND_DEVICES=")
	if err != nil {
		t.Fatalf("cluster.sh config: %v\n%s", err, stderr)
	}
	n := c.Nodes[0]
	if want := "kindest/node:v" + pinnedK8s(t); n.Image != want {
		t.Errorf("node image %q, want kind's own of the pinned version, %q", n.Image, want)
	}
	if c.Networking.DisableDefaultCNI {
		t.Error("kind's own image brings kindnetd: the default CNI must stay on")
	}
	if len(n.ExtraMounts) != 0 {
		t.Errorf("no devices asked for, got mounts %+v", n.ExtraMounts)
	}
	opted := strings.Contains(strings.Join(c.KubeadmConfigPatches, "\n"), "failCgroupV1: false")
	if cgroupV1() != opted {
		t.Errorf("cgroup v1 host: %v; failCgroupV1: false written: %v", cgroupV1(), opted)
	}
}

func TestBadDevices(t *testing.T) {
	for _, tc := range []struct{ devices, want string }{
		{"/dev/zns-no-such-device", "does not exist or is not a device (create it before the cluster)"},
		{"nullb0", "is not a /dev path"},
		{"/dev/shm", "does not exist or is not a device"}, // a directory
	} {
		_, stderr, err := config(t, "ZNS_KIND_DEVICES="+tc.devices)
		if err == nil {
			t.Errorf("ZNS_KIND_DEVICES=%q accepted", tc.devices)
			continue
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("ZNS_KIND_DEVICES=%q: stderr %q, want %q", tc.devices, stderr, tc.want)
		}
	}
}

func TestBadNodeSource(t *testing.T) {
	_, stderr, err := config(t, "ZNS_KIND_NODE=registry")
	if err == nil || !strings.Contains(stderr, "ZNS_KIND_NODE must be auto, offline or upstream") {
		t.Errorf("ZNS_KIND_NODE=registry: err %v, stderr %q", err, stderr)
	}
}

// Workers: every node gets the devices, and the control plane keeps no taint (what fits one node still fits).
func TestWorkers(t *testing.T) {
	c, stderr, err := config(t, "ZNS_KIND_WORKERS=2", "ZNS_KIND_NODE=offline", "ZNS_KIND_DEVICES=/dev/null")
	if err != nil {
		t.Fatalf("cluster.sh config: %v\n%s", err, stderr)
	}
	var roles []string
	for _, n := range c.Nodes {
		roles = append(roles, n.Role)
		if len(n.ExtraMounts) != 1 || n.ExtraMounts[0].HostPath != "/dev/null" {
			t.Errorf("%s node: mounts %+v, want /dev/null", n.Role, n.ExtraMounts)
		}
	}
	if strings.Join(roles, " ") != "control-plane worker worker" {
		t.Errorf("nodes %v, want a control plane and two workers", roles)
	}
	if !strings.Contains(strings.Join(c.KubeadmConfigPatches, "\n"), "kind: InitConfiguration\nnodeRegistration:\n  taints: []") {
		t.Errorf("the control plane would be tainted: patches %q", c.KubeadmConfigPatches)
	}
	if _, stderr, err := config(t, "ZNS_KIND_WORKERS=9"); err == nil || !strings.Contains(stderr, "ZNS_KIND_WORKERS must be a number of worker nodes from 0 to 8") {
		t.Errorf("ZNS_KIND_WORKERS=9: err %v, stderr %q", err, stderr)
	}
}
