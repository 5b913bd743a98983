//go:build zns_guest

package qemuguest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/blockstat"
	"github.com/zns-mysql/zns-mysql/operator/internal/nvmelog"
)

// The emulated NVMe namespaces, one controller each, in the order TestGuestSuite asks run.sh for them
// (--zns default, --nvme default, --nvme fdp=on): run.sh gives controller N the serial zns<N>, conv<N>
// or fdp<N>, and the kernel names its namespace nvme<N>n1.
var nvmeLogCases = []struct {
	name, dev, serial string
	ocp, fdp          bool
	seek              int64 // in 64 KiB blocks: zone 30 of the ZNS namespace, which no other test writes
}{
	{"zns", nvmeDev, "zns0", false, false, 30 * 64 * 16},
	{"conv-ocp", "nvme1n1", "conv1", true, false, 0},
	{"fdp", "nvme2n1", "fdp2", true, true, 0},
}

// nvmeLogWrite is the workload between two snapshots: 49 direct writes of 64 KiB (3,211,264 bytes, 6.27
// SMART data units, so that the drive's rounding shows).
const (
	nvmeLogBlock = 64 << 10
	nvmeLogCount = 49
)

// statDevice is the device whose /sys/block/<dev>/stat counts what reaches namespace dev. With NVMe
// multipath (Debian's kernels), dev is the namespace head and the I/O is accounted on its path device
// nvme<S>c<C>n<N>: Linux 6.1 counts nothing on the head at all.
func statDevice(t *testing.T, dev string) string {
	t.Helper()
	i := strings.LastIndexByte(dev, 'n')
	paths, err := filepath.Glob(filepath.Join(sysBlk, dev[:i]+"c*"+dev[i:]))
	if err != nil {
		t.Fatal(err)
	}
	switch len(paths) {
	case 0:
		return dev
	case 1:
		return filepath.Base(paths[0])
	}
	t.Fatalf("%s has %d paths %v: this test expects one", dev, len(paths), paths)
	return ""
}

func readNVMe(t *testing.T, dev string) *nvmelog.Snapshot {
	t.Helper()
	s, err := nvmelog.Read("/dev", dev)
	if err != nil {
		t.Fatalf("nvmelog.Read %s: %v", dev, err)
	}
	return s
}

func sampleStat(t *testing.T, dev string) (blockstat.Stat, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sysBlk, dev, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := blockstat.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

func captureSnapshot(t *testing.T, dir string, s *nvmelog.Snapshot, stat []byte) {
	t.Helper()
	for p, b := range s.Raw {
		capture(t, filepath.Join(dir, string(p)+".bin"), b)
	}
	capture(t, filepath.Join(dir, "stat"), stat)
}

// TestNVMeLogWrites writes a known amount to each emulated namespace between two snapshots of its
// drive counters and checks them against the block layer's count.
func TestNVMeLogWrites(t *testing.T) {
	devices(t)
	kernel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range nvmeLogCases {
		t.Run(tc.name, func(t *testing.T) {
			statDev := statDevice(t, tc.dev)
			if statDev != tc.dev {
				head, _ := sampleStat(t, tc.dev)
				t.Logf("block-layer counts from %s (the head %s has written sectors %d)", statDev, tc.dev, head.WriteSectors)
			}
			before := readNVMe(t, tc.dev)
			statBefore, beforeStat := sampleStat(t, statDev)
			ddArgs := []string{"if=/dev/urandom", "of=/dev/" + tc.dev, fmt.Sprintf("bs=%d", nvmeLogBlock),
				fmt.Sprintf("count=%d", nvmeLogCount), fmt.Sprintf("seek=%d", tc.seek), "oflag=direct"}
			if out, err := exec.Command("dd", ddArgs...).CombinedOutput(); err != nil {
				t.Fatalf("dd %s: %v\n%s", strings.Join(ddArgs, " "), err, out)
			}
			statAfter, afterStat := sampleStat(t, statDev)
			after := readNVMe(t, tc.dev)

			dir := filepath.Join("nvmelog", tc.name)
			captureSnapshot(t, filepath.Join(dir, "before"), before, beforeStat)
			captureSnapshot(t, filepath.Join(dir, "after"), after, afterStat)
			capture(t, filepath.Join(dir, "info.txt"), fmt.Appendf(nil,
				"kernel: %sdevice: %s (block-layer counts from %s)\ncontroller: %s, firmware %s, serial %s\nworkload: dd %s\n",
				kernel, tc.dev, statDev, after.Controller.Model, after.Controller.Firmware, after.Controller.Serial, strings.Join(ddArgs, " ")))

			if after.Controller.Serial != tc.serial || after.Controller.Model != "QEMU NVMe Ctrl" {
				t.Fatalf("%s is controller %+v, want serial %s: run.sh numbered the namespaces differently", tc.dev, after.Controller, tc.serial)
			}
			blk, err := blockstat.Delta(statBefore, statAfter)
			if err != nil {
				t.Fatal(err)
			}
			host := blk.WrittenBytes()
			if host != nvmeLogBlock*nvmeLogCount || blk.WriteIOs != nvmeLogCount {
				t.Fatalf("the block layer saw %d bytes in %d writes, want dd's %d in %d", host, blk.WriteIOs, nvmeLogBlock*nvmeLogCount, nvmeLogCount)
			}
			d, err := nvmelog.Delta(before, after)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("block layer %d bytes; SMART %d data units = %d bytes (+-%d), %d write commands; OCP %+v; FDP %+v; WA %+v (%v)",
				host, d.DataUnitsWritten, d.HostBytes, d.HostBytesResolution, d.HostWriteCommands, d.OCP, d.FDP, d.WA, d.NoWA)

			// Data Units Written counts 512,000-byte units rounded up: the difference is within one unit.
			if diff := int64(d.HostBytes) - int64(host); d.HostBytesResolution != nvmelog.DataUnitBytes || diff <= -nvmelog.DataUnitBytes || diff >= nvmelog.DataUnitBytes {
				t.Errorf("SMART says %d host bytes (+-%d), the block layer %d", d.HostBytes, d.HostBytesResolution, host)
			}
			if d.HostWriteCommands != blk.WriteIOs {
				t.Errorf("SMART counts %d host write commands, the block layer %d writes", d.HostWriteCommands, blk.WriteIOs)
			}

			if !tc.ocp {
				if after.OCP != nil || !errors.Is(after.Reason(nvmelog.PageOCPSMART), nvmelog.ErrUnsupported) || d.OCP != nil {
					t.Errorf("ocp=off: OCP log %+v, reason %v; want absent as unsupported", after.OCP, after.Reason(nvmelog.PageOCPSMART))
				}
			} else {
				if d.OCP == nil {
					t.Fatalf("no OCP log: %v", after.Reason(nvmelog.PageOCPSMART))
				}
				// QEMU 10 counts Physical Media Units Written in bytes, as the OCP specification says
				// (no FTL: media bytes = host bytes), and derives SMART's data units from the same counter.
				if d.OCP.MediaBytesWritten != host {
					t.Errorf("OCP media bytes written %d, the block layer %d", d.OCP.MediaBytesWritten, host)
				}
				pmuw, _ := after.OCP.PhysicalMediaUnitsWritten.Uint64()
				duw, _ := after.SMART.DataUnitsWritten.Uint64()
				// QEMU: data units = its byte counter in 512-byte units / 1000, rounded up
				if want := (pmuw/512 + 999) / 1000; duw != want {
					t.Errorf("SMART data units written %d, want %d bytes in data units, rounded up: %d", duw, pmuw, want)
				}
			}

			if !tc.fdp {
				if after.FDP != nil || !errors.Is(after.Reason(nvmelog.PageFDPStats), nvmelog.ErrUnsupported) || after.Controller.FDPSupported() {
					t.Errorf("fdp=off: FDP %+v, reason %v", after.FDP, after.Reason(nvmelog.PageFDPStats))
				}
			} else {
				if d.FDP == nil {
					t.Fatalf("no FDP statistics: %v", after.Reason(nvmelog.PageFDPStats))
				}
				if !after.Controller.FDPSupported() || !after.FDPEnabled || after.EnduranceGroup != 1 {
					t.Errorf("FDP supported %v, enabled %v, endurance group %d; want true, true, 1 (QEMU's one group)",
						after.Controller.FDPSupported(), after.FDPEnabled, after.EnduranceGroup)
				}
				if d.FDP.HostBytes != host || d.FDP.MediaBytes != host {
					t.Errorf("FDP host bytes %d, media bytes %d; want the block layer's %d for both", d.FDP.HostBytes, d.FDP.MediaBytes, host)
				}
			}

			switch {
			case tc.fdp:
				if d.WA == nil || d.WA.Source != "fdp" || d.WA.Ratio != 1 || d.WA.HostBytesResolution != 1 {
					t.Errorf("write amplification %+v, want exactly 1 from FDP statistics", d.WA)
				}
			case tc.ocp:
				if d.WA == nil || d.WA.Source != "smart+ocp" || d.WA.MediaBytes != host || d.WA.HostBytes != d.HostBytes {
					t.Errorf("write amplification %+v, want OCP media bytes over SMART host bytes", d.WA)
				}
			default:
				if d.WA != nil || d.NoWA == nil {
					t.Errorf("write amplification %+v without media counters", d.WA)
				}
			}
		})
	}
}

// TestNVMeLogNotNVMe: devices without NVMe logs get a reason, never a zero.
func TestNVMeLogNotNVMe(t *testing.T) {
	devices(t)
	for _, dev := range []string{"nullb0", "vda"} {
		s, err := nvmelog.Read("/dev", dev)
		if !errors.Is(err, nvmelog.ErrNotNVMe) || s != nil ||
			!strings.Contains(err.Error(), "no drive counters: "+dev+" is not an NVMe device") {
			t.Errorf("%s: snapshot %+v, error %v; want ErrNotNVMe", dev, s, err)
		}
	}
	if _, err := nvmelog.Read("/dev", "nvme9n1"); !errors.Is(err, nvmelog.ErrNoDevice) {
		t.Errorf("nvme9n1: %v, want ErrNoDevice", err)
	}
}

// envUnprivChild makes the test binary, started again as another user, read one device and print the
// outcome as JSON instead of running tests (see init).
const envUnprivChild = "ZNS_NVMELOG_UNPRIV_DEVICE"

type unprivOutcome struct {
	Err, SMARTReason      string
	Permission, HaveSMART bool
	SMARTReasonPermission bool
}

func init() {
	dev := os.Getenv(envUnprivChild)
	if dev == "" {
		return
	}
	var o unprivOutcome
	s, err := nvmelog.Read("/dev", dev)
	if err != nil {
		o.Err, o.Permission = err.Error(), errors.Is(err, nvmelog.ErrPermission)
	} else {
		o.HaveSMART = s.SMART != nil
		if r := s.Reason(nvmelog.PageSMART); r != nil {
			o.SMARTReason, o.SMARTReasonPermission = r.Error(), errors.Is(r, nvmelog.ErrPermission)
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(o)
	os.Exit(0)
}

// TestNVMeLogUnprivileged reads the logs as uid 65534: refused, and the reason says why.
func TestNVMeLogUnprivileged(t *testing.T) {
	devices(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// the share and t.TempDir() are root's 0700 directories: the other user runs a copy from one of its own
	dir, err := os.MkdirTemp("", "nvmelog-unpriv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "qemuguest.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	const dev = "nvme1n1"
	unpriv := func() unprivOutcome {
		c := exec.Command(bin, "-test.run", "^$")
		c.Dir = dir
		c.Env = append(os.Environ(), envUnprivChild+"="+dev)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}}
		out, err := c.Output()
		if err != nil {
			t.Fatalf("as uid 65534: %v\n%s", err, out)
		}
		var o unprivOutcome
		if err := json.Unmarshal(out, &o); err != nil {
			t.Fatalf("as uid 65534: %v\n%s", err, out)
		}
		return o
	}

	// /dev/nvme1n1 is root's, mode 0600: the open itself is refused
	if o := unpriv(); !o.Permission || !strings.Contains(o.Err, "cannot open /dev/"+dev) || !strings.Contains(o.Err, "CAP_SYS_ADMIN") {
		t.Errorf("device mode 0600: %+v; want a permission error naming the open and CAP_SYS_ADMIN", o)
	}

	// readable by all, the kernel still refuses Get Log Page (and, before Linux 6.2, every admin command)
	st, err := os.Stat("/dev/" + dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod("/dev/"+dev, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod("/dev/"+dev, st.Mode().Perm()) })
	o := unpriv()
	t.Logf("device mode 0644: %+v", o)
	const why = "needs CAP_SYS_ADMIN: Linux admits admin commands without it only for some Identify pages (nvme_cmd_allowed)"
	switch {
	case o.Err != "":
		if !o.Permission || !strings.Contains(o.Err, why) {
			t.Errorf("Read failed with %q; want ErrPermission saying %q", o.Err, why)
		}
	case o.HaveSMART || !o.SMARTReasonPermission || !strings.Contains(o.SMARTReason, why):
		t.Errorf("Identify passed; SMART read %v, reason %q; want it absent with ErrPermission saying %q", o.HaveSMART, o.SMARTReason, why)
	}
	// and root reads it
	if s := readNVMe(t, dev); s.SMART == nil {
		t.Errorf("as root: no SMART log: %v", s.Reason(nvmelog.PageSMART))
	}
}
