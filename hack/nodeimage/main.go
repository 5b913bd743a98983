// Command nodeimage is hack/kind/build-node-image.sh: it builds (once) the kind node image from Debian packages
// and Go modules, without any image registry, and prints its name. hack/kind/build-node-image.sh builds it once
// for each version of its sources and hands its command line over (--help says what the image holds, how it is
// cached and every knob).
//
// It decides in Go (decide.go: the parts' names, the recipe, the fast path, what kubeadm's image list must
// hold, the files of each image), runs the long builds side by side (the rootfs and the Kubernetes binaries in
// process groups of their own, tracked by their ids: process.go), writes the component images with
// hack/imagearchive, and leaves to shell what needs root on a tree it does not own (debootstrap, the rootfs's
// trimming and assembly under sudo, chroot).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

const prefix = "build-node-image"

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the command; it returns the exit status: 2 for a wrong command line or knob, 1 when the build failed.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			fmt.Fprint(stdout, usage)
			return 0
		case saveCommand:
			return runSave(args[1:], stderr)
		}
		fmt.Fprint(stderr, usage)
		return 2
	}
	cfg, err := parseConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "%s: ERROR: %v\n", prefix, err)
		return 2
	}
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "%s: ERROR: %v\n", prefix, err)
		return 1
	}
	pins, err := readPins(filepath.Join(root, "versions.mk"))
	if err != nil {
		fmt.Fprintf(stderr, "%s: ERROR: %v\n", prefix, err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "%s: ERROR: %v\n", prefix, err)
		return 1
	}
	closeInheritedFiles()
	b := newBuilder(cfg, pins, root, os.Environ(), stdout, stderr)
	b.self = []string{self}
	b.handleSignals()
	return b.main()
}

// builder is one run: its knobs and pins, the Runner of its commands (stagerun: the environment, foreground
// commands, progress lines, cleanups) and what it found and made on the way.
type builder struct {
	*stagerun.Runner
	cfg    Config
	pins   Pins
	result io.Writer // stdout: the image's name, and nothing else
	euid   int
	sudo   []string // the prefix of commands that need root, nil when the builder is root
	groups groups
	lock   *os.File
	self   []string // runs this program again: the background save

	kindDir, partsDir, nodeDir, saved string // the cache
	recipe                            string
	work                              string // this build's scratch directory

	kubeBins        string // hack/kubernetes.sh's directory
	coredns         string // CoreDNS's version, kubeadm's constant
	busyboxVersion  string // busybox-static's Debian version
	busyboxOfHost   bool   // installed on the host: copied, not downloaded
	imageList       string // kubeadm's image list (images.txt)
	kindFiles       string // kind's images/base/files
	imagearchive    string // hack/imagearchive, built into work
	container, base string // the build container and its image, while they exist

	scratch scratchDirs // the parts being built

	// the host's files and waits, which tests replace
	seccompHeader string
	hostBusybox   string
	pollEvery     time.Duration
}

// Where the host keeps what a build needs of it.
var (
	hostSeccompHeader = "/usr/include/seccomp.h"
	hostBusybox       = "/bin/busybox"
)

func newBuilder(cfg Config, pins Pins, root string, environ []string, stdout, stderr io.Writer) *builder {
	r := stagerun.New(prefix, root, environ, nil, stderr, stderr)
	r.ProgressEvery = cfg.ProgressEvery
	r.InterruptNote = "stopping the background builds, then removing the build container and the scratch directory"
	if cfg.Image == "" {
		cfg.Image = "zns-mysql/kind-node:v" + pins.K8s
	}
	return &builder{Runner: r, cfg: cfg, pins: pins, result: stdout, euid: os.Geteuid(),
		seccompHeader: hostSeccompHeader, hostBusybox: hostBusybox, pollEvery: 500 * time.Millisecond}
}

// main builds the image and undoes what the build set up, whatever happened.
func (b *builder) main() int {
	err := b.build()
	if err != nil && b.Procs.Stopped() {
		select {} // interrupted, which is why: the signal's handler cleans up and exits
	}
	b.Finish()
	// the lock is released once the scratch directories are gone: the next build removes no one's
	b.unlockCache()
	if err != nil {
		b.Logf("ERROR: %v", err)
		return 1
	}
	return 0
}

func (b *builder) build() error {
	t0 := b.Now()
	if _, err := b.LookPath("docker"); err != nil {
		return errors.New("docker is not on PATH")
	}
	if !b.DockerUsable() {
		return errors.New("cannot talk to the Docker Engine (docker info failed)")
	}
	if err := b.openCache(); err != nil {
		return err
	}
	var err error
	if b.recipe, err = b.computeRecipe(); err != nil {
		return err
	}
	if b.cfg.Rebuild == 0 {
		if b.fastPath() {
			return b.done(t0)
		}
	}
	// one builder at a time
	if err := b.lockCache(); err != nil {
		return err
	}
	if b.cfg.Rebuild == 0 {
		if b.fastPath() {
			return b.done(t0)
		}
	}
	p := b.pins
	b.Logf("building %s: Kubernetes v%s, kind %s, Debian %s, containerd %s, runc %s, CNI %s, local-path-provisioner %s (recipe %s)",
		b.cfg.Image, p.K8s, p.Kind, p.DebianSuite, p.Containerd, p.Runc, p.CNI, p.LPP, b.recipe)
	if err := b.prepare(); err != nil {
		return err
	}
	if err := b.buildParts(); err != nil {
		return err
	}
	if err := b.assemble(); err != nil {
		return err
	}
	if b.cfg.Save {
		b.saveInBackground()
	}
	size, _ := b.Output(b.Cmd(nil, "docker", "image", "inspect", "-f", "{{.Size}}", b.cfg.Image))
	var bytes float64
	fmt.Sscan(size, &bytes)
	b.Logf("built %s (%.0f MB)", b.cfg.Image, bytes/1e6)
	return b.done(t0)
}

// done ends a run that has the image: its name is the one line on stdout.
func (b *builder) done(t0 time.Time) error {
	b.Logf("total %ss", secs(b.Now().Sub(t0)))
	_, err := fmt.Fprintln(b.result, b.cfg.Image)
	return err
}

// secs is a duration in seconds with one decimal, as the timings print it.
func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

// prepare checks the tools of a build, takes the scratch directory and removes what killed runs left.
func (b *builder) prepare() error {
	if err := b.chooseSudo(); err != nil {
		return err
	}
	var missing []string
	for _, t := range []string{"go", "gcc", "debootstrap", "tar", "gzip", "sha256sum"} {
		if _, err := b.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing tools: %s (Debian: apt-get install golang debootstrap gcc libc6-dev)", strings.Join(missing, " "))
	}
	lib, _ := b.Output(b.Cmd(nil, "gcc", "-print-file-name=libseccomp.a"))
	if !isFile(lib) || !isFile(b.seccompHeader) {
		return errors.New("runc needs libseccomp's headers and static library: apt-get install libseccomp-dev")
	}
	// Go builds run outside any workspace, with the local toolchain only (no toolchain downloads)
	b.Env.Set("GOWORK", "off", "GOTOOLCHAIN", "local", "GOFLAGS", "-buildvcs=false")
	var err error
	if b.work, err = os.MkdirTemp(b.kindDir, ".work."); err != nil {
		return fmt.Errorf("cannot create a scratch directory in %s: %v", b.kindDir, err)
	}
	// the last added runs first: the background builds stop before what they use goes
	b.Cleanups.Add("scratch directory", func() { b.RunCleanup(b.asRoot("rm", "-rf", b.work)) })
	b.Cleanups.Add("parts' scratch directories", func() {
		if dirs := b.scratch.closeAndList(); len(dirs) > 0 {
			b.RunCleanup(b.asRoot("rm", append([]string{"-rf"}, dirs...)...))
		}
	})
	b.Cleanups.Add("base image", func() { b.removeBase() })
	b.Cleanups.Add("build container", func() { b.removeContainer() })
	b.Cleanups.Add("background builds", b.stopGroups)
	// scratch directories of killed runs are stale once the lock is held
	stale, _ := filepath.Glob(filepath.Join(b.partsDir, ".build-*"))
	works, _ := filepath.Glob(filepath.Join(b.kindDir, ".work.*"))
	for _, w := range works {
		if w != b.work {
			stale = append(stale, w)
		}
	}
	if len(stale) > 0 {
		c := b.asRoot("rm", append([]string{"-rf"}, stale...)...)
		c.Stderr = nil
		b.Run(c)
	}
	b.removeStaleSaves()
	return nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// step runs one step of the assembly with progress lines and its timing; a failure names it.
func (b *builder) step(name string, fn func() error) error {
	t0 := b.Now()
	var err error
	b.Heartbeat(name, "", "", func() int {
		err = fn()
		return 0
	})
	if err != nil {
		b.Logf("%v", err)
		return fmt.Errorf("step '%s' failed: the output above says why; fix that and run again (finished parts are cached)", name)
	}
	b.Logf("%s", stepTimeLine(name, secs(b.Now().Sub(t0))))
	return nil
}

// run runs c in the foreground; a failure is "what failed (exit N)".
func (b *builder) run(what string, c *exec.Cmd) error {
	if rc := b.Run(c); rc != 0 {
		return fmt.Errorf("%s failed (exit %d)", what, rc)
	}
	return nil
}
