package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// main is the demo, its steps in order; the first that fails stops it, saying which and what to do.
func (d *demo) main() error {
	for _, step := range []func() error{
		d.checkMachine, d.zonedDevices, d.clusterWithBuilds, d.imagesAndChart, d.kindPart, d.zonedNodePart,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	d.printTimingsAndHint()
	return nil
}

// --- 1. what this machine can do ------------------------------------------------------------------------------

func (d *demo) checkMachine() error {
	d.say("checking this machine")
	if !d.DockerUsable() {
		return fmt.Errorf("needs a Docker Engine: 'docker info' failed. Install Docker Engine (Debian: apt-get install docker.io) and start it")
	}
	if _, err := d.LookPath("go"); err != nil {
		return fmt.Errorf("needs Go 1.26 on PATH (https://go.dev/dl/), then run make demo again")
	}
	if d.Run(d.Cmd(nil, "hack/install-deps.sh", "demo")) != 0 {
		return fmt.Errorf("the Debian packages the builds need are missing (above says which and how to install them)")
	}
	d.zonedWhy = d.zonedHere()
	d.images = []string{"bench", "mariadb", "operator"}
	if d.zonedWhy == "" {
		d.say("zoned block devices are supported: building the Percona + ZenFS image (needs repo.percona.com)")
		err := d.timed("Percona + ZenFS image", func() error { return d.ok(d.Cmd(nil, "hack/images/build.sh", "percona")) })
		if err == nil {
			d.images = append(d.images, "percona")
		} else {
			d.zonedWhy = perconaWhy
		}
	}
	_, noQEMU := d.LookPath("qemu-system-x86_64")
	d.nodeWhy = nodeWhy(d.cfg.Zoned, d.zonedWhy, noQEMU == nil)
	banner, notes, err := announceParts(d.cfg.Zoned, d.zonedWhy, d.nodeWhy)
	if err != nil {
		return err
	}
	if banner != "" {
		d.say("%s", banner)
	}
	for _, n := range notes {
		d.Logf("%s", n)
	}
	return nil
}

// zonedHere asks hack/nullblk-zoned.sh check whether this kernel makes zoned devices, unless DEMO_ZONED=0.
func (d *demo) zonedHere() string {
	if d.cfg.Zoned == zonedOff {
		return zonedHereWhy(zonedOff, 0, "")
	}
	var out bytes.Buffer
	c := d.Cmd(nil, "hack/nullblk-zoned.sh", "check")
	c.Stdout, c.Stderr = &out, &out
	return zonedHereWhy(d.cfg.Zoned, d.Run(c), out.String())
}

// --- the zoned devices (before the cluster: a kind node keeps a static copy of /dev) ---------------------------

func (d *demo) zonedDevices() error {
	if d.zonedWhy != "" {
		return nil
	}
	d.say("null_blk zoned devices")
	file := devicesFile(d.cfg.CacheRoot)
	if b, err := os.ReadFile(file); err == nil {
		d.devices = reusableDevices(string(b), d.isBlock)
		if len(d.devices) > 0 {
			d.Logf("reusing the demo's devices %s (ZenFS on them is kept)", strings.Join(d.devices, " "))
		}
	}
	if len(d.devices) == 0 {
		// its status is not the point: the devices it printed are
		out, _ := d.Output(d.Cmd(nil, "hack/nullblk-zoned.sh", "create", "--count", "2", "--size", strconv.Itoa(d.cfg.DeviceMiB),
			"--zone-size", "64", "--memory-backed"))
		devices, err := createdDevices(out)
		if err != nil {
			return err
		}
		d.devices = devices
		if err := writeFile(file, strings.Join(devices, " ")+"\n"); err != nil {
			return fmt.Errorf("remembering the devices for the next run and make demo-clean: %v", err)
		}
	}
	names := make([]string, len(d.devices))
	for i, dev := range d.devices {
		names[i] = filepath.Base(dev)
	}
	d.Run(d.toStderr(d.Cmd(nil, "hack/nullblk-zoned.sh", append([]string{"status"}, names...)...)))
	return nil
}

// writeFile writes content into path, making its directory.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// --- 2. the cluster, with the images building beside it --------------------------------------------------------

// clusterWithBuilds starts the images and helm in the background (debootstrap and apt in docker wait on the disk
// and the network, helm's Go build fills the CPU) and brings up the kind cluster meanwhile.
func (d *demo) clusterWithBuilds() error {
	if err := os.MkdirAll(d.cfg.CacheRoot, 0o755); err != nil {
		return fmt.Errorf("the cache directory for the builds' logs: %v (ZNS_CACHE_DIR chooses another)", err)
	}
	imagesLog := filepath.Join(d.cfg.CacheRoot, "demo-images.log")
	d.say("images (%s): building in the background (log: %s)", strings.Join(d.images, " "), imagesLog)
	var err error
	if d.imagesJob, err = d.Start("images", d.Cmd(nil, "hack/images/build.sh", d.images...), imagesLog, ""); err != nil {
		return fmt.Errorf("starting the images' build: %v", err)
	}
	helmLog := filepath.Join(d.cfg.CacheRoot, "demo-helm.log")
	if d.helmJob, err = d.Start("helm", d.Cmd(nil, "hack/helm.sh"), helmLog, helmLog+".out"); err != nil {
		return fmt.Errorf("starting helm's build: %v", err)
	}
	d.say("kind cluster %s", d.cfg.KindCluster)
	d.Env.Set("ZNS_KIND_DEVICES", strings.Join(d.devices, " "))
	t0 := d.Now()
	var rc int
	if d.kubeconfig, rc = d.Output(d.Cmd(nil, "hack/kind/cluster.sh", "up")); rc != 0 {
		return fmt.Errorf("the cluster did not come up (see above)")
	}
	d.record("kind cluster", t0)
	for _, dev := range d.devices {
		if d.Run(d.Cmd(nil, "docker", "exec", d.cfg.kindNode(), "test", "-b", dev)) != 0 {
			return fmt.Errorf("the existing cluster's node has no %s (it was created before the device): run 'make demo-clean' and again", dev)
		}
	}
	return nil
}

// --- 3. images and chart ----------------------------------------------------------------------------------------

func (d *demo) imagesAndChart() error {
	d.say("images (%s), loaded into the node", strings.Join(d.images, " "))
	t0 := d.Now()
	if d.Heartbeat("images", "built in the background", d.imagesJob.Log, d.imagesJob.Wait) != 0 {
		io.WriteString(d.Out.Stderr(), stagerun.TailLines(d.imagesJob.Log, 40))
		return fmt.Errorf("building the images failed (above; the whole log: %s)", d.imagesJob.Log)
	}
	var rc int
	if d.tag, rc = d.Output(d.Cmd(nil, "hack/kind/load-images.sh", d.images...)); rc != 0 {
		return fmt.Errorf("loading the images into the node failed (above)")
	}
	d.record("images built and loaded", t0)
	d.say("the operator's chart")
	t0 = d.Now()
	if d.Heartbeat("helm", "built in the background", d.helmJob.Log, d.helmJob.Wait) != 0 {
		b, _ := os.ReadFile(d.helmJob.Log)
		d.Out.Stderr().Write(b)
		return fmt.Errorf("building helm failed (above; hack/helm.sh alone shows it again)")
	}
	helm, err := os.ReadFile(d.helmJob.Log + ".out")
	if err != nil {
		return fmt.Errorf("hack/helm.sh printed no path (%v); hack/helm.sh alone shows it again", err)
	}
	d.helm = stagerun.TrimNewlines(string(helm))
	d.record("helm (built once, cached)", t0)
	return d.timed("helm upgrade --install", func() error { return d.installChart(d.kubeconfig, d.tag, "5m", "", "hack/kind/cluster.sh") })
}

// installChart installs or upgrades the operator's chart on the cluster of kubeconfig, waiting until it is
// ready; kubectl is the cluster's script, for what to look at when it is not.
func (d *demo) installChart(kubeconfig, tag, timeout, probePeriod, kubectl string) error {
	c := d.toStderr(d.Cmd(nil, d.helm, helmArgs(kubeconfig, tag, timeout, probePeriod)...))
	if d.Heartbeat("helm upgrade --install", "waits until the operator is ready, at most "+timeout, "", func() int { return d.Run(c) }) != 0 {
		return fmt.Errorf("installing the operator's chart failed (above); %s kubectl -n zns-mysql-system get pods,events shows why", kubectl)
	}
	return nil
}

// --- the end ------------------------------------------------------------------------------------------------------

func (d *demo) printTimingsAndHint() {
	d.say("timings")
	for _, t := range append(d.timings, timingLine("total", d.elapsed())) {
		d.print("  %s\n", t)
	}
	d.print("%s", stayUpHint(d.kubeconfig, d.kindNS, d.kindBench, d.devices))
}

// clean deletes the kind cluster and the demo's own null_blk devices (those its devices file names that still
// exist), never another device.
func (d *demo) clean() error {
	if d.Run(d.Cmd(nil, "hack/kind/cluster.sh", "down")) != 0 {
		return fmt.Errorf("deleting the kind cluster failed (above); hack/kind/cluster.sh down tries again")
	}
	file := devicesFile(d.cfg.CacheRoot)
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the demo's devices: %v", err)
	}
	if names := cleanDevices(string(b), d.isBlock); len(names) > 0 {
		if d.Run(d.Cmd(nil, "hack/nullblk-zoned.sh", append([]string{"destroy"}, names...)...)) != 0 {
			return fmt.Errorf("destroying the demo's null_blk devices failed (above); hack/nullblk-zoned.sh destroy %s tries again", strings.Join(names, " "))
		}
	}
	if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("the devices are destroyed, but their list is left: %v", err)
	}
	return nil
}
