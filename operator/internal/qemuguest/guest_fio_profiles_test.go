//go:build zns_guest

package qemuguest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/operator/internal/fio"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// TestZnsbenchFioProfiles runs every profile of a fio Benchmark (spec.tool fio) as its Job runs them, through
// `znsbench fio`, on a zoned null_blk device of its own and on the emulated NVMe ZNS namespace (whose zones it
// resets afterwards, leaving it as a fresh boot does), and checks each profile's
// figures. A zone of each is written first, so the runner must refuse without a write token.
// Neither device has an FTL: the figures are the emulation's, kept as captures for the parser, not as a
// measurement of a drive.
func TestZnsbenchFioProfiles(t *testing.T) {
	// Only its own null_blk device: the shared fixture must not exist yet when TestNullblkScript (later in the
	// run) ends with `destroy --all`, or the tests after it find no devices.
	inGuest(t)
	const name = "nullb14"
	mustScript(t, "create", "--first", "14", "--size", "1024", "--zone-size", "64")
	t.Cleanup(func() { script("destroy", name) })
	if _, err := os.Stat("/dev/" + nvmeDev); err != nil {
		t.Fatalf("no emulated NVMe ZNS namespace (run.sh --zns): %v", err)
	}
	bin := os.Getenv(envZnsbench)
	if bin == "" {
		t.Fatalf("%s is not set: TestGuestSuite passes the znsbench binary", envZnsbench)
	}
	// 2 x 2 x 1 points: every axis varies, and under emulation each fio run costs seconds
	grid := fio.Grid{RW: fio.RandRead, BlockSizes: []int64{4096, 128 << 10}, NumJobs: []int{1, 2}, IODepths: []int{8}}
	var all []string
	for _, p := range fio.Profiles {
		all = append(all, string(p))
	}
	for _, tc := range []struct {
		dev  string
		span int64 // bytes the profiles use: every writer of the open-zone profile gets a zone of its own
	}{
		{name, 16 * 64 * mib},
		{nvmeDev, 0},
	} {
		t.Run(tc.dev, func(t *testing.T) {
			d, err := zbd.Inspect(sysBlk, tc.dev)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"fio", "--device", tc.dev, "--profiles", strings.Join(all, ","), "--runtime", "2s",
				"--span", strconv.FormatInt(tc.span, 10), "--grid-rw", string(grid.RW), "--grid-bs", "4096,131072",
				"--grid-jobs", "1,2", "--grid-qd", "8"}
			fill(t, tc.dev)
			refused, code, _ := znsbenchFio(t, bin, args)
			if code != 1 || !strings.Contains(refused.Refused, "writeToken") {
				t.Fatalf("on a device holding data without a token: exit %d, refused %q; want 1 and the token named", code, refused.Refused)
			}
			start := time.Now()
			rep, code, stderr := znsbenchFio(t, bin, append(args, "--write-token", "guest-"+tc.dev))
			t.Logf("znsbench fio on %s: %.1fs\n%s", tc.dev, time.Since(start).Seconds(), stderr)
			if code != 0 || rep.Refused != "" || rep.Failed != "" || !rep.Zoned {
				t.Fatalf("exit %d, report %+v", code, rep)
			}
			raw, _ := json.MarshalIndent(rep, "", "  ")
			capture(t, "znsbench-fio/"+tc.dev+".json", raw)
			checkProfiles(t, rep, d, grid)
			if w := rep.BlockLayerWrittenBytes; w == nil || *w <= 0 {
				t.Errorf("block layer written bytes %v, want the writes of the profiles", w)
			}
			if rep.CountersUnavailable == "" {
				t.Errorf("counters were not asked for, yet no reason is given for their absence")
			}
		})
	}
}

// fill leaves the device with its first zone written and the others empty, whatever ran before: a device that
// holds data. What the profiles write is reset afterwards, so that later tests find the zones empty.
func fill(t *testing.T, dev string) {
	t.Helper()
	resetAll(t, dev)
	t.Cleanup(func() { resetAll(t, dev) })
	d, err := zbd.Inspect(sysBlk, dev)
	if err != nil {
		t.Fatal(err)
	}
	argv, err := fio.ZonedSeqWrite("/dev/"+dev, 0, d.ZoneSizeBytes).Command()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

func resetAll(t *testing.T, dev string) {
	t.Helper()
	f, err := zbd.OpenExclusive("/dev/"+dev, true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zones, err := zbd.ReportZones("/dev/"+dev, 0)
	if err == nil {
		_, err = zbd.ResetZones(f, zones)
	}
	if err != nil {
		t.Fatalf("resetting the zones of %s: %v", dev, err)
	}
}

func znsbenchFio(t *testing.T, bin string, args []string) (fio.RunnerReport, int, string) {
	t.Helper()
	var o, e bytes.Buffer
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = &o, &e
	code := 0
	if err := c.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	var rep fio.RunnerReport
	if err := json.Unmarshal(o.Bytes(), &rep); err != nil {
		t.Fatalf("znsbench fio printed no report (%v): stdout %q, stderr %s", err, o.String(), e.String())
	}
	return rep, code, e.String()
}

// checkProfiles: every profile ran, in Plan's order, with figures in the directions it does I/O in; the grid
// has a result per point; the open-zone writers are as many as the device keeps open (8 where it states none).
func checkProfiles(t *testing.T, rep fio.RunnerReport, d zbd.Device, g fio.Grid) {
	t.Helper()
	seen := map[fio.Profile]int{}
	for _, r := range rep.Results {
		seen[r.Profile]++
		dirs := map[string]*fio.Direction{}
		switch r.Profile {
		case fio.ProfileSeqWriteOpenZones:
			dirs["write"] = r.Write
		case fio.ProfileRandReadUnderWrites:
			dirs["read"], dirs["write"] = r.Read, r.Write
		default:
			dirs["read"] = r.Read
		}
		for name, x := range dirs {
			if x == nil || x.Bytes <= 0 || x.BWBytes <= 0 || x.IOPS <= 0 || x.P50Ns <= 0 || x.P99Ns < x.P50Ns {
				t.Errorf("%s %s, %s: implausible figures %+v", r.Profile, r.Point, name, x)
			}
		}
	}
	for _, p := range fio.Profiles {
		want := 1
		if p == fio.ProfileGrid {
			want = g.Points()
		}
		if seen[p] != want {
			t.Errorf("profile %s: %d results, want %d", p, seen[p], want)
		}
	}
	if len(rep.Results) > 0 && rep.Results[0].Profile != fio.ProfileSeqWriteOpenZones {
		t.Errorf("the first run is %s: the write must come first, the reads need its zones", rep.Results[0].Profile)
	}
	t.Logf("%s: max open zones %d, %d results", d.Name, d.MaxOpenZones, len(rep.Results))
}
