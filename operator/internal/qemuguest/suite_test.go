//go:build !zns_guest

package qemuguest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/test/qemu"
)

// updateEnv, set to 1, copies what the guest run captured into testdata/
// here, operator/internal/fio/testdata and operator/internal/nvmelog/testdata.
const updateEnv = "ZNS_QEMU_UPDATE_TESTDATA"

// guestToRecorded pairs each guest device with the hand-written tree in
// operator/internal/zbd/testdata that stands for the same case.
var guestToRecorded = map[string]string{
	"nullb0":  "nullb0",  // null_blk zoned, 4 GiB in 64 MiB zones: fit
	"nullb1":  "nullb1",  // null_blk conventional
	"nullb2":  "nullb2",  // 16 zones
	"nullb3":  "nullb3",  // max open 3
	"nvme0n1": "nvme0n2", // emulated NVMe ZNS, scheduler none
}

// sameShape lists the guest devices made exactly like their recorded twin,
// whose whole Inspect result must therefore agree.
var sameShape = []string{"nullb0", "nullb2", "nullb3"}

func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH to build the guest's binaries: %v", err)
	}
	return p
}

// TestGuestSuite boots the guest once with an emulated NVMe ZNS namespace,
// runs this package's zns_guest tests inside it (with the zbd package's test
// binary and znsdb beside them), and reports each in-guest test as a subtest.
// ZNS_QEMU_GUEST_RUN passes a -test.run pattern to the guest binary.
func TestGuestSuite(t *testing.T) {
	qemu.Require(t)
	root, err := qemu.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	goBin := goTool(t)
	share := t.TempDir()

	start := time.Now()
	build := func(args ...string) { buildStatic(t, goBin, root, args...) }
	build("test", "-c", "-tags", "zns_guest", "-o", share+"/", "./operator/internal/qemuguest", "./operator/internal/zbd")
	build("build", "-o", share+"/znsdb", "./operator/cmd/znsdb")
	build("build", "-o", share+"/znsbench", "./operator/cmd/znsbench")
	t.Logf("built the guest's binaries in %.1fs", time.Since(start).Seconds())

	captureDir := filepath.Join(share, "capture")
	guestArgs := "-test.v=test2json -test.timeout=5m"
	if run := os.Getenv("ZNS_QEMU_GUEST_RUN"); run != "" {
		guestArgs += " -test.run '" + strings.ReplaceAll(run, "'", "") + "'"
	}
	// nvme1n1 with the OCP log, nvme2n1 under FDP (nvmelog_test.go); an older QEMU boots without them
	nvmeSpecs := []string{"default", "fdp=on"}
	nvmeLogsErr := qemu.NVMeLogsSupported()
	if nvmeLogsErr != nil {
		nvmeSpecs = nil
		guestArgs += " -test.skip '^(TestNVMeLog|TestDriveSidecar(OnNVMe|FDP|Unprivileged))'"
	}
	// This boot also checks qemu.Run: the exit of 3 after the tests proves
	// run.sh hands back the command's own status (the tests' status travels
	// in the output), the echo to stderr that both streams come back in
	// order, the relative ./qemuguest.test that the command starts in the
	// share, and the binaries, the --env values and the captures that the
	// share and the environment work both ways.
	// and run.sh's --disk: the guest writes a marker to each of two disks;
	// the plain one keeps it, the snapshot one is left as it was.
	disks := t.TempDir()
	kept, dropped := filepath.Join(disks, "kept.img"), filepath.Join(disks, "dropped.img")
	for _, f := range []string{kept, dropped} {
		if err := os.WriteFile(f, make([]byte, 1<<20), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const marker = "zns-disk-marker"
	guestEnv := []string{envCapture + "=" + captureDir, envZnsdb + "=" + share + "/znsdb",
		envZbdTest + "=" + share + "/zbd.test", envZnsbench + "=" + share + "/znsbench"}
	// a zloop.ko for a guest kernel built without zloop (hack/qemu/build-zloop-module.sh), for the zloop cases
	guestEnv = append(guestEnv, zloopGuestEnv(t, share)...)
	out, code := qemu.Run(t, qemu.Options{
		Share: share,
		// a second ZNS namespace on the first one's controller (nvme0n2, 16 MiB zones): two devices of one drive
		ZNS:   []string{"default", sharedNamespaceSpec},
		NVMe:  nvmeSpecs,
		Disks: []string{kept, dropped + ",snapshot"},
		// made by run.sh before the tests; TestRunShNullblkOption checks it
		NullBlk: []string{"--first 7 --size 512 --zone-size 16 --max-active 6"},
		Env:     guestEnv,
		Timeout: 10 * time.Minute,
	}, "sh", "-c", "for d in /dev/vda /dev/vdb; do printf "+marker+" | dd of=$d conv=fsync 2>/dev/null || echo cannot write $d; done; "+
		"./qemuguest.test "+guestArgs+"; echo guest-suite-exit=$?; echo to-stderr >&2; exit 3")
	for f, want := range map[string]bool{kept: true, dropped: false} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.HasPrefix(b, []byte(marker)); got != want {
			t.Errorf("--disk %s: the guest's write reached the file: %v, want %v", filepath.Base(f), got, want)
		}
	}
	if code != 3 {
		t.Errorf("run.sh exited %d, want 3 (the command's own status)", code)
	}
	m := regexp.MustCompile(`\nguest-suite-exit=(\d+)\nto-stderr\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the guest test binary did not finish, or its output did not come back whole:\n%s", out)
	}

	failed := mirror(t, goBin, out)
	if nvmeLogsErr != nil {
		t.Run("TestNVMeLog", func(t *testing.T) {
			if os.Getenv(qemu.RequireEnv) == "1" {
				t.Fatalf("the NVMe log and drive sidecar tests need a newer QEMU (%s=1): %v", qemu.RequireEnv, nvmeLogsErr)
			}
			t.Skip("the NVMe log and drive sidecar tests: " + nvmeLogsErr.Error())
		})
	}
	if m[1] != "0" && !failed {
		t.Errorf("the guest test binary exited %s without a failed test:\n%s", m[1], out)
	}

	if os.Getenv("ZNS_QEMU_GUEST_RUN") != "" {
		return // a partial run captures a partial set
	}
	t.Run("captured", func(t *testing.T) {
		checkTrees(t, filepath.Join(captureDir, "sys/block"))
		checkFioCaptures(t, filepath.Join(captureDir, "fio"))
		checkRunnerCaptures(t, filepath.Join(captureDir, "znsbench-fio"))
		if nvmeLogsErr == nil {
			checkNVMeLogCaptures(t, filepath.Join(captureDir, "nvmelog"))
		}
		if os.Getenv(updateEnv) == "1" && !t.Failed() {
			updateTestdata(t, root, captureDir, nvmeLogsErr == nil)
		}
	})
}

// TestRecordedGuestSysfs judges the trees a guest run saved in testdata/:
// the same verdicts as the hand-written trees of operator/internal/zbd,
// without booting anything.
func TestRecordedGuestSysfs(t *testing.T) {
	checkTrees(t, "testdata/sys/block")
}

// event is one line of test2json's output.
type event struct {
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

type result struct {
	action string
	output []string
	subs   []string
}

// mirror converts the guest binary's -test.v=test2json output with `go
// tool test2json` and replays every guest test as a subtest of t. It
// reports whether any failed.
func mirror(t *testing.T, goBin, out string) (failed bool) {
	t.Helper()
	c := exec.Command(goBin, "tool", "test2json")
	c.Stdin = strings.NewReader(out)
	js, err := c.Output()
	if err != nil {
		t.Fatalf("go tool test2json: %v", err)
	}
	results := map[string]*result{}
	var top []string
	sc := bufio.NewScanner(bytes.NewReader(js))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("test2json line %q: %v", sc.Text(), err)
		}
		if e.Test == "" {
			continue
		}
		r := results[e.Test]
		if r == nil {
			r = &result{}
			results[e.Test] = r
			if i := strings.LastIndexByte(e.Test, '/'); i >= 0 {
				if p := results[e.Test[:i]]; p != nil {
					p.subs = append(p.subs, e.Test)
				}
			} else {
				top = append(top, e.Test)
			}
		}
		switch e.Action {
		case "output":
			r.output = append(r.output, e.Output)
		case "pass", "fail", "skip":
			r.action = e.Action
			failed = failed || e.Action == "fail"
		}
	}
	if len(top) == 0 {
		t.Fatalf("the guest ran no test:\n%s", out)
	}
	var replay func(t *testing.T, name string)
	replay = func(t *testing.T, name string) {
		r := results[name]
		for _, s := range r.subs {
			t.Run(s[strings.LastIndexByte(s, '/')+1:], func(t *testing.T) { replay(t, s) })
		}
		text := strings.TrimRight(strings.Join(r.output, ""), "\n")
		switch r.action {
		case "pass":
			t.Log("in the guest:\n" + text)
		case "skip":
			// every in-guest test can run there: a skip means the guest
			// lacks what it promises (e.g. ZNS_QEMU_GUEST was not set),
			// unless it says the guest's kernel lacks a feature (zloop without ZLOOP_MODULE)
			if strings.Contains(text, kernelSkip) {
				t.Skip("skipped in the guest:\n" + text)
			}
			t.Error("skipped in the guest:\n" + text)
		case "fail":
			t.Error("failed in the guest:\n" + text)
		default:
			t.Error("did not finish in the guest:\n" + text)
		}
	}
	for _, name := range top {
		t.Run(name, func(t *testing.T) { replay(t, name) })
	}
	return failed
}

// readmeVerdicts reads the table of operator/internal/zbd/testdata/README.md:
// device -> comma-separated problem codes ("" for fit).
func readmeVerdicts(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../zbd/testdata/README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|.*\\| ([A-Za-z]+) \\|$")
	v := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		if m[2] == "fit" {
			m[2] = ""
		}
		v[m[1]] = m[2]
	}
	if len(v) < len(guestToRecorded) {
		t.Fatalf("found %d rows in the zbd testdata README's table: %v", len(v), v)
	}
	return v
}

func problemCodes(ps []zbd.Problem) string {
	var cs []string
	for _, p := range ps {
		cs = append(cs, p.Code)
	}
	return strings.Join(cs, ",")
}

// checkTrees judges each guest tree under dir and compares it with its
// hand-written twin in operator/internal/zbd/testdata.
func checkTrees(t *testing.T, dir string) {
	t.Helper()
	const recordedDir = "../zbd/testdata/sys/block"
	want := readmeVerdicts(t)
	for guest, recorded := range guestToRecorded {
		t.Run(guest, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, guest)); err != nil {
				t.Fatalf("no tree for %s: %v (re-record with %s=1)", guest, err, updateEnv)
			}
			expect, ok := want[recorded]
			if !ok {
				t.Fatalf("the zbd testdata README has no row for %s", recorded)
			}
			d, ps, err := zbd.Preflight(dir, guest)
			if err != nil {
				t.Fatal(err)
			}
			if got := problemCodes(ps); got != expect {
				t.Errorf("real %s: problems %q; the README expects %q for %s", guest, got, expect, recorded)
			}
			rd, rps, err := zbd.Preflight(recordedDir, recorded)
			if err != nil {
				t.Fatal(err)
			}
			if problemCodes(rps) != problemCodes(ps) {
				t.Errorf("real %s judged %q, hand-written %s %q", guest, problemCodes(ps), recorded, problemCodes(rps))
			}
			if d.Model != rd.Model {
				t.Errorf("zone model: real %q, hand-written %q", d.Model, rd.Model)
			}
			if slices.Contains(sameShape, guest) {
				// Available schedulers are a set: kernels list them in different orders.
				a, b := *d, *rd
				a.AvailableSchedulers, b.AvailableSchedulers = sorted(a.AvailableSchedulers), sorted(b.AvailableSchedulers)
				if fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
					t.Errorf("made alike, inspected differently:\nreal         %+v\nhand-written %+v", a, b)
				}
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// jsonCaptures reads the want JSON captures a run saved in dir, by file name.
func jsonCaptures(t *testing.T, dir, what string, want int) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != want {
		t.Fatalf("%s captures %v, want %d", what, files, want)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

func checkFioCaptures(t *testing.T, dir string) {
	t.Helper()
	for f, b := range jsonCaptures(t, dir, "fio", 4) {
		r, err := fio.Parse(b)
		if err != nil || r.Err() != nil || len(r.Jobs) != 1 {
			t.Errorf("%s: %v, %v", f, err, r)
		}
	}
}

// checkRunnerCaptures: TestZnsbenchFioProfiles saved the fio runner's report of each device (null_blk zoned and
// NVMe ZNS), every profile run.
func checkRunnerCaptures(t *testing.T, dir string) {
	t.Helper()
	for f, b := range jsonCaptures(t, dir, "znsbench fio", 2) {
		var rep fio.RunnerReport
		if err := json.Unmarshal(b, &rep); err != nil || rep.Failed != "" || rep.Refused != "" || len(rep.Results) < len(fio.Profiles) {
			t.Errorf("%s: %v, %+v", f, err, rep)
		}
	}
}

// checkNVMeLogCaptures: each case of TestNVMeLogWrites saved its log pages and block-layer counters before
// and after its write, the files operator/internal/nvmelog's tests read.
func checkNVMeLogCaptures(t *testing.T, dir string) {
	t.Helper()
	for _, c := range []string{"zns", "conv-ocp", "fdp"} {
		for _, f := range []string{"info.txt", "before/smart.bin", "before/id-ctrl.bin", "before/stat", "after/smart.bin", "after/stat"} {
			b, err := os.ReadFile(filepath.Join(dir, c, f))
			if err != nil || len(b) == 0 {
				t.Errorf("nvmelog capture %s/%s: %v (%d bytes)", c, f, err, len(b))
			}
		}
	}
}

// updateTestdata replaces the recorded trees here, the fio captures in
// operator/internal/fio/testdata and the NVMe log pages in
// operator/internal/nvmelog/testdata with this run's.
func updateTestdata(t *testing.T, root, captureDir string, nvmeLogs bool) {
	t.Helper()
	sysDst := filepath.Join(root, "operator/internal/qemuguest/testdata/sys")
	if err := os.RemoveAll(sysDst); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join(captureDir, "sys"), sysDst)
	copyTree(t, filepath.Join(captureDir, "fio"), filepath.Join(root, "operator/internal/fio/testdata"))
	copyTree(t, filepath.Join(captureDir, "znsbench-fio"), filepath.Join(root, "operator/internal/fio/testdata/runner"))
	if nvmeLogs {
		copyTree(t, filepath.Join(captureDir, "nvmelog"), filepath.Join(root, "operator/internal/nvmelog/testdata"))
	}
	copyTree(t, filepath.Join(captureDir, "blocktrace"), filepath.Join(root, "operator/internal/blocktrace/testdata"))
	if nvmeLogs {
		copyTree(t, filepath.Join(captureDir, "drive"), filepath.Join(root, "operator/internal/drivereport/testdata"))
	}
	for _, f := range []string{"guest-info.txt"} {
		copyTree(t, filepath.Join(captureDir, f), filepath.Join(root, "operator/internal/qemuguest/testdata", f))
	}
	t.Logf("%s=1: testdata updated from %s", updateEnv, captureDir)
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
