package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// Stages 0 to 5: what the run will do, the setup, and the builds.

// prepare is stage 0: the cache, an empty stage log, whether Docker works, and what the e2e tier runs on.
func (r *runner) prepare() error {
	if _, err := os.ReadFile(filepath.Join(r.Root, "versions.mk")); err != nil {
		return fmt.Errorf("cannot read %s (run hack/test.sh, which starts this in the repository)", filepath.Join(r.Root, "versions.mk"))
	}
	if err := os.MkdirAll(filepath.Join(r.cfg.CacheRoot, "tools"), 0o755); err != nil {
		return err
	}
	if err := r.stages.Reset(); err != nil {
		return err
	}
	// Pure Go everywhere: the project needs no cgo, and the Kubernetes binaries (hack/kubernetes.sh) and the
	// images' Go binaries are built without it, so go vet and go test compile the libraries they share with
	// those builds under the same build-cache keys, once. A CGO_ENABLED given is kept.
	if r.Env.Get("CGO_ENABLED") == "" {
		r.Env.Set("CGO_ENABLED", "0")
	}
	r.dockerOK = r.DockerUsable()
	var err error
	r.mode, r.why, err = e2eModeFor(r.cfg, r.dockerOK)
	return err
}

func (r *runner) debianPackages() error {
	if r.Run(r.Cmd(nil, "hack/install-deps.sh")) != 0 {
		return fail(1, "the packages above are needed by the test tiers: install them (as root: hack/install-deps.sh) and run make test again")
	}
	return nil
}

func (r *runner) goModules() error {
	if r.Heartbeat("go mod download", "", "", func() int { return r.Run(r.Cmd(nil, "go", "mod", "download")) }) != 0 {
		return fail(2, "go could not download the modules: check that the Go module proxy is reachable (go env GOPROXY)")
	}
	return nil
}

func (r *runner) checks() error {
	c := r.Cmd(nil, "make", "-s", "--no-print-directory", "check-generate", "fmt-check", "vet", "lint")
	if r.Heartbeat("drift, gofmt, go vet, shellcheck, staticcheck", "go vet compiles the whole project the first time",
		"", func() int { return r.Run(c) }) != 0 {
		return fail(3, "fix what is shown above: 'make generate' rewrites the generated files, 'gofmt -w operator test hack' formats, 'make lint-shell' reruns shellcheck on the shell scripts, 'make lint' reruns it and staticcheck")
	}
	return nil
}

// builds is stage 4: the builds run side by side, each into its own log: the Go builds (Kubernetes, the
// node's parts, helm) use the CPUs while debootstrap, apt in docker and the kernel download wait on the
// network and the disk.
func (r *runner) builds() error {
	if err := os.MkdirAll(r.logs, 0o755); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(r.logs, "recap.txt")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := r.background("qemu-guest", r.Cmd(nil, "hack/qemu/build-guest.sh")); err != nil {
		return err
	}
	if r.dockerOK {
		if err := r.background("images", r.Cmd(nil, "hack/images/build.sh", "bench", "mariadb", "operator")); err != nil {
			return err
		}
	}
	if r.mode == e2eOwn {
		// the node image builds the Kubernetes binaries envtest uses too (hack/kubernetes.sh node)
		if err := r.background("node-image", r.Cmd(nil, "hack/kind/build-node-image.sh")); err != nil {
			return err
		}
	}
	var rc int
	if r.helm, rc = r.Output(r.Cmd(nil, "hack/helm.sh")); rc != 0 {
		return fail(4, "building helm failed (above); a rerun resumes from the Go build cache")
	}
	if r.assets, rc = r.Output(r.Cmd(nil, "hack/kubernetes.sh", kubeSet(r.mode))); rc != 0 {
		return fail(4, "building the Kubernetes binaries failed (above); a rerun resumes from the Go build cache")
	}
	return nil
}

// background is bash's `bg NAME CMD...`: c in the background, its output in $logs/NAME.log.
func (r *runner) background(name string, c *exec.Cmd) error {
	j, err := r.Start(name, c, filepath.Join(r.logs, name+".log"), "")
	if err != nil {
		return err
	}
	r.bg[name] = j
	r.Logf("%s: building in the background (log: %s)", name, j.Log)
	return nil
}

// waitFor is bash's `bg_wait STAGE NAME WHAT-TO-DO`: wait for the job with progress lines; when it failed,
// show its log's end and stop.
func (r *runner) waitFor(stage int, name, todo string) error {
	j := r.bg[name]
	if rc := r.Heartbeat(name, "", j.Log, j.Wait); rc != 0 {
		io.WriteString(r.Out.Stderr(), stagerun.TailLines(j.Log, 40))
		return fail(stage, fmt.Sprintf("%s failed (exit %d; above, the end of %s). %s", name, rc, j.Log, todo))
	}
	r.Logf("%s: done", name)
	return nil
}

// waitBuilds is stage 5.
func (r *runner) waitBuilds() error {
	guest := r.bg["qemu-guest"]
	r.qemuRC = r.Heartbeat("qemu-guest", "", guest.Log, guest.Wait)
	show, msg, err := guestOutcome(r.qemuRC, guest.Log)
	io.WriteString(r.Out.Stderr(), show)
	if err != nil {
		return err
	}
	r.Logf("%s", msg)
	// zloop: no Debian kernel has it. When the guest runs the pinned current kernel, zloop.ko is built for it
	// (about a minute cold, then cached) while the other builds finish, so that the QEMU tier's zloop tests run;
	// when that fails they skip, saying which step failed (ZNS_ZLOOP_MODULE_ERROR). A ZLOOP_MODULE given is
	// used as it is.
	if r.qemuRC == 0 && r.cfg.ZloopModule == "" {
		c := r.Cmd(nil, "hack/qemu/build-guest.sh")
		c.Stderr = nil
		if dir, rc := r.Output(c); rc == 0 {
			j, err := r.Start("zloop-module", r.Cmd(nil, "hack/qemu/build-zloop-module.sh", "--for-guest", dir),
				filepath.Join(r.logs, "zloop-module.log"), filepath.Join(r.logs, "zloop-module.path"))
			if err != nil {
				return err
			}
			r.zloop = j
			r.Logf("zloop-module: building zloop.ko in the background if the guest's kernel needs it (log: %s)", j.Log)
		}
	}
	if r.dockerOK {
		if err := r.waitFor(5, "images", "hack/images/build.sh bench mariadb operator alone shows it again; the build logs are in "+r.cfg.CacheRoot+"/images"); err != nil {
			return err
		}
		r.useBenchYCSB()
	} else {
		r.Logf("no usable Docker Engine: the images are not built; their tests and the e2e suite will skip and say so")
	}
	if r.mode == e2eOwn {
		if err := r.waitFor(5, "node-image", "ZNS_E2E=0 make test runs everything but the e2e tier"); err != nil {
			return err
		}
	}
	if r.zloop != nil {
		r.waitZloop()
	}
	return nil
}

// useBenchYCSB: the bench image's go-ycsb, which hack/images/go-ycsb.sh keeps in the cache: the loopback
// tier's YCSB test runs it.
func (r *runner) useBenchYCSB() {
	versions, _ := os.ReadFile(filepath.Join(r.Root, "versions.mk"))
	version, err := readPin(string(versions), "YCSB_VERSION")
	if err != nil {
		r.Logf("ERROR: %v", err)
	}
	goarch, _ := r.Output(r.Cmd(nil, "go", "env", "GOARCH"))
	bin := ycsbBin(r.cfg.CacheRoot, version, goarch)
	if r.cfg.GoYCSB == "" && stagerun.Executable(bin) {
		r.Env.Set("GO_YCSB", bin)
		r.Logf("go-ycsb: %s (the bench image's): TestYCSBRealServer runs it", bin)
	}
}

// waitZloop waits for build-zloop-module.sh and exports what the QEMU tier's zloop tests need: the module,
// or why there is none.
func (r *runner) waitZloop() {
	j := r.zloop
	rc := r.Heartbeat("zloop-module", "", j.Log, j.Wait)
	path, _ := os.ReadFile(filepath.Join(r.logs, "zloop-module.path"))
	ko := stagerun.TrimNewlines(string(path))
	log, _ := os.ReadFile(j.Log)
	switch {
	case rc == 0 && ko != "":
		r.Env.Set("ZLOOP_MODULE", ko)
		r.Logf("zloop-module: %s: the QEMU tier's zloop tests load it (ZLOOP_MODULE)", ko)
	case rc == 0:
		r.Logf("zloop-module: %s", zloopSaid(string(log)))
	default:
		r.Env.Set("ZNS_ZLOOP_MODULE_ERROR", zloopError(rc, string(log), j.Log))
		io.WriteString(r.Out.Stderr(), stagerun.TailLines(j.Log, 20))
		r.Logf("zloop-module: building zloop.ko failed (above); the QEMU tier's zloop tests skip with that reason")
	}
}

// prepareTests builds hack/testsummary, lists the packages of stage 6, and names this run the zoned node's
// owner (the stage and the cleanup alike), so that another run's down leaves the node alone while this one
// uses it, and this one's leaves another's alone.
func (r *runner) prepareTests() error {
	if r.Run(r.Cmd(nil, "go", "build", "-o", r.summary, "./hack/testsummary")) != 0 {
		return fail(6, "building hack/testsummary failed (above)")
	}
	list, _ := r.Output(r.Cmd(nil, "go", "list", "./..."))
	r.packages = withoutPackage(list, e2ePackage)
	r.Env.Set("ZNS_NODE_OWNER", strconv.Itoa(os.Getpid()), "ZNS_NODE_OWNER_WHAT", "make test in "+r.Root)
	return nil
}
