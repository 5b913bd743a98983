// Command qemurun boots the QEMU test guest, runs one command in it and exits with its status: what
// hack/qemu/run.sh was, in Go. run.sh builds it and hands over its command line (run.sh --help has every option).
// It checks the options, builds QEMU's command line and the guest's script, starts QEMU as a child it tracks
// by its process (a timeout, TERM and INT stop it), and reports what the guest left in its control directory.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func logf(w io.Writer, format string, a ...any) { fmt.Fprintf(w, "qemu-run: "+format+"\n", a...) }

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parseArgs(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stderr, usage)
		return exitNoRun
	}
	if err == nil {
		err = c.checkFiles()
	}
	if err != nil {
		logf(stderr, "ERROR: %v", err)
		return exitNoRun
	}
	r := &runner{c: c, stdout: stdout, stderr: stderr, verbose: os.Getenv("ZNS_QEMU_VERBOSE") == "1"}
	code, err := r.run()
	if err != nil {
		logf(stderr, "ERROR: %v", err)
	}
	return code
}

type runner struct {
	c              Config
	stdout, stderr io.Writer
	verbose        bool
	tmp, ctl       string
}

func (r *runner) run() (int, error) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return exitNoRun, errors.New("qemu-system-x86_64 not found (Debian package: qemu-system-x86)")
	}
	dataDirs, err := qemuDataDirs(os.Getenv("ZNS_QEMU_DATADIR"))
	if err != nil {
		return exitNoRun, err
	}
	if err := checkQEMUFeatures(r.c.Namespaces); err != nil {
		return exitNoRun, err
	}
	guestDir, err := r.guestDir()
	if err != nil {
		return exitNoRun, err
	}
	kernel := filepath.Join(guestDir, "vmlinuz")
	// the ELF payload boots through PVH without the guest decompressing it (~10 s faster)
	if readable(filepath.Join(guestDir, "vmlinux")) {
		kernel = filepath.Join(guestDir, "vmlinux")
	}
	if !readable(filepath.Join(guestDir, "vmlinuz")) || !readable(filepath.Join(guestDir, "initramfs.cpio")) || !isDir(filepath.Join(guestDir, "sysroot")) {
		return exitNoRun, fmt.Errorf("%s holds no vmlinuz, initramfs.cpio and sysroot/", guestDir)
	}
	tmpParent := os.Getenv("TMPDIR")
	if tmpParent == "" {
		tmpParent = "/tmp"
	}
	if r.tmp, err = os.MkdirTemp(tmpParent, "zns-qemu."); err != nil {
		return exitNoRun, err
	}
	defer os.RemoveAll(r.tmp)
	r.ctl = filepath.Join(r.tmp, "ctl")
	if err := r.prepareControl(); err != nil {
		return exitNoRun, err
	}
	images, err := r.makeImages()
	if err != nil {
		return exitNoRun, err
	}
	cpu := os.Getenv("ZNS_QEMU_CPU")
	if cpu == "" {
		cpu = "Westmere-v2"
	}
	tb := 0
	if v := os.Getenv("ZNS_QEMU_TB_SIZE"); v != "" {
		if tb, err = strconv.Atoi(v); err != nil || tb < 64 {
			return exitNoRun, fmt.Errorf("ZNS_QEMU_TB_SIZE=%s: give the translated code cache in MiB, at least 64", v)
		}
	}
	argv, lay := qemuArgs(r.c, Boot{Kernel: kernel, Initramfs: filepath.Join(guestDir, "initramfs.cpio"),
		Sysroot: filepath.Join(guestDir, "sysroot"), Ctl: r.ctl, DataDirs: dataDirs, CPU: cpu, TBSizeMiB: tb, Images: images})
	wd, _ := os.Getwd()
	script := guestScript(r.c, lay, workdir(r.c.Share, wd), r.verbose)
	if err := os.WriteFile(filepath.Join(r.ctl, "guest.sh"), []byte(script), 0o644); err != nil {
		return exitNoRun, err
	}
	return r.boot(argv)
}

func readable(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// workdir is where the command starts in the guest: the current directory when it lies inside the share,
// else the share, else /root.
func workdir(share, cwd string) string {
	if share == "" {
		return "/root"
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	if cwd == share || strings.HasPrefix(cwd, share+"/") {
		return cwd
	}
	return share
}

// qemuDataDirs is QEMU's -L directories: ZNS_QEMU_DATADIR's, or a QEMU found outside /usr gets its own
// firmware (a newer Debian package unpacked with dpkg -x, its usr/bin first on PATH).
func qemuDataDirs(env string) ([]string, error) {
	var dirs []string
	if env != "" {
		dirs = strings.Split(env, ":")
	} else if bin, err := exec.LookPath("qemu-system-x86_64"); err == nil {
		if real, err := filepath.EvalSymlinks(bin); err == nil {
			prefix := filepath.Dir(filepath.Dir(real))
			if prefix != "/usr" && prefix != "/usr/local" && isDir(filepath.Join(prefix, "share/qemu")) {
				dirs = append(dirs, filepath.Join(prefix, "share/qemu"))
				if isDir(filepath.Join(prefix, "share/seabios")) {
					dirs = append(dirs, filepath.Join(prefix, "share/seabios"))
				}
			}
		}
	}
	for _, d := range dirs {
		if !isDir(d) {
			return nil, fmt.Errorf("ZNS_QEMU_DATADIR: %s is not a directory", d)
		}
	}
	return dirs, nil
}

// checkQEMUFeatures asks QEMU whether it emulates what the --nvme options ask for: the OCP log and FDP (10.0 has
// both, 7.2 neither).
func checkQEMUFeatures(namespaces []Namespace) error {
	var ocp, fdp bool
	for _, ns := range namespaces {
		ocp = ocp || !ns.Zoned && ns.OCP
		fdp = fdp || !ns.Zoned && ns.FDP
	}
	for _, f := range []struct {
		need              bool
		key, device, what string
	}{{ocp, "ocp", "nvme", "the OCP SMART extended log"}, {fdp, "fdp", "nvme-subsys", "Flexible Data Placement"}} {
		if !f.need {
			continue
		}
		help, _ := exec.Command("qemu-system-x86_64", "-device", f.device+",help").CombinedOutput()
		if hasProperty(string(help), f.key) {
			continue
		}
		version, _ := exec.Command("qemu-system-x86_64", "--version").Output()
		first, _, _ := strings.Cut(string(version), "\n")
		return fmt.Errorf("--nvme with %s=on: %s does not emulate %s (QEMU 10 does: hack/install-deps.sh installs versions.mk's QEMU_VERSION from bookworm-backports); or give %s=off",
			f.key, first, f.what, f.key)
	}
	return nil
}

// hasProperty is whether QEMU's `-device X,help` lists the property.
func hasProperty(help, key string) bool {
	for _, l := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), key+"=") {
			return true
		}
	}
	return false
}

func (r *runner) guestDir() (string, error) {
	if r.c.Kernel != "" {
		os.Setenv("ZNS_QEMU_KERNEL", r.c.Kernel)
	}
	if r.c.GuestDir != "" {
		return r.c.GuestDir, nil
	}
	build := os.Getenv("ZNS_QEMU_BUILD_GUEST")
	if build == "" {
		return "", errors.New("no --guest-dir and no ZNS_QEMU_BUILD_GUEST (hack/qemu/build-guest.sh, which run.sh sets)")
	}
	cmd := exec.Command(build)
	cmd.Stderr = r.stderr
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New("the guest could not be built (see above)")
	}
	return strings.TrimSpace(string(out)), nil
}

// prepareControl makes the control directory the guest mounts (znsctl): the project's device scripts, put on
// the guest's PATH.
func (r *runner) prepareControl() error {
	if err := os.MkdirAll(filepath.Join(r.ctl, "bin"), 0o755); err != nil {
		return err
	}
	root := os.Getenv("ZNS_REPO_ROOT")
	for _, s := range []string{"nullblk-zoned.sh", "zloop-zoned.sh"} {
		data, err := os.ReadFile(filepath.Join(root, "hack", s))
		if err != nil {
			return fmt.Errorf("the guest's scripts: %v (ZNS_REPO_ROOT is the repository, which run.sh sets)", err)
		}
		if err := os.WriteFile(filepath.Join(r.ctl, "bin", s), data, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// makeImages makes each namespace's image, a fresh sparse file.
func (r *runner) makeImages() ([]string, error) {
	var images []string
	for i, ns := range r.c.Namespaces {
		opt := "--nvme"
		if ns.Zoned {
			opt = "--zns"
		}
		size, err := sizeBytes(ns.Size)
		if err != nil {
			return nil, fmt.Errorf("%s '%s': cannot create a %s image: %v", opt, ns.Spec, ns.Size, err)
		}
		img := filepath.Join(r.tmp, fmt.Sprintf("nvme%d.img", i))
		f, err := os.Create(img)
		if err == nil {
			err = f.Truncate(size)
			f.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("%s '%s': cannot create a %s image: %v", opt, ns.Spec, ns.Size, err)
		}
		images = append(images, img)
	}
	return images, nil
}

// killAfter is how long QEMU has after a TERM before it is killed.
const killAfter = 10 * time.Second

// boot runs QEMU to its end (or the timeout's, or a signal's) and reports what the guest left.
func (r *runner) boot(argv []string) (int, error) {
	console := filepath.Join(r.tmp, "console.log")
	cf, err := os.Create(console)
	if err != nil {
		return exitNoRun, err
	}
	defer cf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = cf, cf
	// QEMU does not outlive this process, even when it is killed
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if r.verbose {
		cmd.Stdout = io.MultiWriter(cf, r.stderr)
		cmd.Stderr = cmd.Stdout
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return exitNoRun, fmt.Errorf("starting QEMU: %v", err)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.c.TimeoutS)*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timedOut, signalled := false, 0
	select {
	case <-done:
	case <-ctx.Done():
		timedOut = true
		stop(cmd, done)
	case s := <-signals:
		signalled = 128 + int(s.(syscall.Signal))
		stop(cmd, done)
	}
	wall := time.Since(start).Seconds()
	cf.Close()
	if signalled != 0 {
		return signalled, nil
	}
	return r.report(console, timedOut, cmd.ProcessState, wall)
}

// stop ends QEMU: TERM, then KILL after killAfter; it returns once QEMU is gone.
func stop(cmd *exec.Cmd, done <-chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(killAfter):
		_ = cmd.Process.Kill()
		<-done
	}
}

func (r *runner) report(console string, timedOut bool, state *os.ProcessState, wall float64) (int, error) {
	if r.c.Console != "" {
		if data, err := os.ReadFile(console); err == nil {
			_ = os.WriteFile(r.c.Console, data, 0o644)
		}
	}
	// the --nullblk set-up is the run's business, not the command's: stderr
	if data, err := os.ReadFile(filepath.Join(r.ctl, "setup.log")); err == nil && len(data) > 0 {
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			fmt.Fprintf(r.stderr, "qemu-run: setup: %s\n", l)
		}
	}
	if data, err := os.ReadFile(filepath.Join(r.ctl, "output")); err == nil {
		_, _ = r.stdout.Write(data)
	}
	if timedOut {
		logf(r.stderr, "timed out after %ds (--timeout); the guest was stopped", r.c.TimeoutS)
		r.showConsole(console)
		return exitTimeout, nil
	}
	if data, err := os.ReadFile(filepath.Join(r.ctl, "setup-error")); err == nil {
		logf(r.stderr, "the guest did not run the command: %s", strings.TrimSpace(string(data)))
		r.showConsole(console)
		return exitNoRun, nil
	}
	status, err := os.ReadFile(filepath.Join(r.ctl, "status"))
	rc, convErr := strconv.Atoi(strings.TrimSpace(string(status)))
	if err != nil || convErr != nil {
		logf(r.stderr, "the guest exited (QEMU status %d) without running the command to its end", state.ExitCode())
		r.showConsole(console)
		return exitNoRun, nil
	}
	seconds := func(name string) float64 {
		data, _ := os.ReadFile(filepath.Join(r.ctl, name))
		v, _ := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
		return v
	}
	logf(r.stderr, "guest up at %.1fs, command %.1fs, exit %d; wall %.1fs", seconds("boot-seconds"),
		seconds("cmd-end")-seconds("cmd-start"), rc, wall)
	return rc, nil
}

// showConsole prints the last lines of the guest's console and dmesg, for a run that did not end well.
func (r *runner) showConsole(console string) {
	logf(r.stderr, "last lines of the guest console:")
	printTail(r.stderr, console, 40)
	if st, err := os.Stat(filepath.Join(r.ctl, "dmesg")); err == nil && st.Size() > 0 {
		logf(r.stderr, "last lines of the guest's dmesg:")
		printTail(r.stderr, filepath.Join(r.ctl, "dmesg"), 20)
	}
}

func printTail(w io.Writer, path string, n int) {
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  | %s\n", l)
	}
}
