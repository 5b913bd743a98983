package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got; -update rewrites it):\n%s", name, d)
	}
}

// section is the table under the line that starts with title: its header and the rows of b's targets.
func section(t *testing.T, b *v1alpha1.Benchmark, text, title string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "\n"+title)
	if !ok {
		t.Fatalf("no %q in:\n%s", title, text)
	}
	lines := strings.Split(rest, "\n")[1:]
	if !strings.HasPrefix(lines[0], "TARGET ") {
		t.Fatalf("no header under %q: %q", title, lines[0])
	}
	out := lines[:1]
	for _, l := range lines[1:] {
		name, _, _ := strings.Cut(l, " ")
		found := false
		for _, ts := range b.Status.Targets {
			found = found || ts.Name == name
		}
		if !found {
			break
		}
		out = append(out, l)
	}
	return out
}

// cells splits a tabwriter table into header label -> row name -> cell, by the header's column starts.
func cells(t *testing.T, table []string) map[string]map[string]string {
	t.Helper()
	if len(table) < 2 {
		t.Fatalf("table %q", table)
	}
	head := table[0]
	starts := []int{0}
	for i := 1; i < len(head); i++ {
		if head[i] != ' ' && head[i-1] == ' ' && i >= 2 && head[i-2] == ' ' {
			starts = append(starts, i)
		}
	}
	col := func(line string, k int) string {
		end := len(line)
		if k+1 < len(starts) && starts[k+1] < end {
			end = starts[k+1]
		}
		if starts[k] >= len(line) {
			return ""
		}
		return strings.TrimSpace(line[starts[k]:end])
	}
	out := map[string]map[string]string{}
	for k := range starts {
		label := col(head, k)
		out[label] = map[string]string{}
		for _, row := range table[1:] {
			out[label][col(row, 0)] = col(row, k)
		}
	}
	return out
}

func driveReport(t *testing.T, b *v1alpha1.Benchmark) string {
	t.Helper()
	var out bytes.Buffer
	if err := Table(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var footnoteMark = regexp.MustCompile(`\[(\d+)\]$`)

// TestDriveTables: the write-amplification and capacity tables show what status says, measured figures only in
// the DRIVE columns and modelled ones only in the MODELLED ones, and every missing figure as "-" with a footnote
// that exists (never a 0).
func TestDriveTables(t *testing.T) {
	b := load(t, "drive")
	text := driveReport(t, b)
	t.Logf("\n%s", text)
	var only bytes.Buffer
	if err := driveTables(&only, b); err != nil {
		t.Fatal(err)
	}
	golden(t, "drive-tables.txt", only.String())

	wa := cells(t, section(t, b, text, "drive write amplification"))
	capacity := cells(t, section(t, b, text, "usable capacity"))
	notes := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if m := regexp.MustCompile(`^\[(\d+)\] (.+)$`).FindStringSubmatch(l); m != nil {
			notes[m[1]] = m[2]
		}
	}
	for label, col := range merge2(wa, capacity) {
		for target, cell := range col {
			if cell == "0" || strings.HasPrefix(cell, "0[") {
				t.Errorf("%s %s: a zero", target, label)
			}
			if m := footnoteMark.FindStringSubmatch(cell); m != nil && notes[m[1]] == "" {
				t.Errorf("%s %s = %q: footnote %s is not printed", target, label, cell, m[1])
			}
			if strings.HasPrefix(cell, "-") && footnoteMark.FindString(cell) == "" {
				t.Errorf("%s %s: missing without a reason", target, label)
			}
		}
	}
	for _, ts := range b.Status.Targets {
		d := ts.DriveMean
		if c := d.Counters; c != nil {
			if got := wa["DRIVE HOST B/TX"][ts.Name]; got != c.HostBytesPerTransaction {
				t.Errorf("%s: drive host B/TX %q, status %q", ts.Name, got, c.HostBytesPerTransaction)
			}
			if c.WriteAmplification != "" && wa["DRIVE WA"][ts.Name] != c.WriteAmplification+" ("+c.MediaSource+")" {
				t.Errorf("%s: drive WA %q, status %s from %s", ts.Name, wa["DRIVE WA"][ts.Name], c.WriteAmplification, c.MediaSource)
			}
		} else if !strings.Contains(noteOf(t, notes, wa["DRIVE WA"][ts.Name]), firstWords(d.CountersUnavailable)) {
			t.Errorf("%s: no counters, but the footnote is not their reason", ts.Name)
		}
		if got := wa["BLOCK B/TX"][ts.Name]; got != ts.Mean.BytesPerTransaction {
			t.Errorf("%s: block B/TX %q, status %q", ts.Name, got, ts.Mean.BytesPerTransaction)
		}
		for _, op := range ModelOPs(b) {
			got := wa[fmt.Sprintf("MODELLED WA OP %d%%", op)][ts.Name]
			var m *v1alpha1.ModelledDrive
			for i := range d.Modelled {
				if d.Modelled[i].OverProvisioningPercent == op {
					m = &d.Modelled[i]
				}
			}
			switch {
			case m != nil:
				if strings.TrimSuffix(got, footnoteMark.FindString(got)) != m.WriteAmplification {
					t.Errorf("%s OP %d: %q, status %q", ts.Name, op, got, m.WriteAmplification)
				}
				if !m.SteadyState && !strings.Contains(noteOf(t, notes, got), "round limit") {
					t.Errorf("%s OP %d: not at steady state, unmarked: %q", ts.Name, op, got)
				}
				// The model's figure is nowhere among the measured ones.
				for _, label := range []string{"DRIVE HOST B/TX", "DRIVE MEDIA B/TX", "DRIVE WA"} {
					if v := wa[label][ts.Name]; strings.HasPrefix(v, m.WriteAmplification) || strings.HasPrefix(v, m.MediaBytesPerTransaction) {
						t.Errorf("%s: modelled figure under %s: %q", ts.Name, label, v)
					}
				}
			case ts.Storage == "zoned":
				if !strings.HasPrefix(got, "1 (ZNS)[") || !strings.Contains(noteOf(t, notes, got), "garbage collection") {
					t.Errorf("%s OP %d: %q, want 1 (ZNS) with its footnote", ts.Name, op, got)
				}
			default:
				t.Errorf("%s OP %d: the capture has no model figure", ts.Name, op)
			}
		}
		c := ts.Capacity
		if got, want := capacity["USABLE"][ts.Name], gibOf(c.UsableBytes); got != want {
			t.Errorf("%s: usable %q, status %s bytes (%s GiB)", ts.Name, got, c.UsableBytes, want)
		}
		for _, m := range c.Modelled {
			if got := capacity[fmt.Sprintf("USABLE/RAW OP %d%%", m.OverProvisioningPercent)][ts.Name]; got != m.UsableShare {
				t.Errorf("%s OP %d: usable/raw %q, status %q", ts.Name, m.OverProvisioningPercent, got, m.UsableShare)
			}
		}
	}
	if !strings.Contains(text, "Emulated drives (QEMU, null_blk) have no FTL") {
		t.Error("no word on emulation")
	}
}

// A Benchmark without drive figures or capacity prints neither table.
func TestNoDriveTables(t *testing.T) {
	for _, name := range []string{"pair", "failed", "sweep"} {
		if text := driveReport(t, load(t, name)); strings.Contains(text, "drive write amplification") || strings.Contains(text, "usable capacity") {
			t.Errorf("%s: drive tables without drive figures:\n%s", name, text)
		}
	}
}

// Capacity alone (spec.metrics on, spec.drive off) prints the capacity table, and the missing device size says
// where it comes from.
func TestCapacityWithoutDrive(t *testing.T) {
	b := load(t, "drive")
	b.Spec.Drive = nil
	for i := range b.Status.Targets {
		ts := &b.Status.Targets[i]
		ts.DriveMean, ts.PrepareDrive = nil, nil
		if ts.Storage == "volume" {
			ts.Capacity = &v1alpha1.TargetCapacity{UsableBytes: ts.Capacity.UsableBytes, UsableSource: ts.Capacity.UsableSource}
		}
	}
	text := driveReport(t, b)
	if strings.Contains(text, "drive write amplification") || strings.Contains(text, "OP 7%") {
		t.Errorf("drive columns without spec.drive:\n%s", text)
	}
	capacity := cells(t, section(t, b, text, "usable capacity"))
	if got := capacity["DEVICE"]["innodb"]; !strings.HasPrefix(got, "-[") || !strings.Contains(text, "spec.drive") {
		t.Errorf("volume without a device size: %q\n%s", got, text)
	}
}

// Counters not asked for (spec.drive with a model only) are missing with that reason, not silently.
func TestCountersNotAskedFor(t *testing.T) {
	b := load(t, "drive")
	b.Spec.Drive.Counters = false
	for i := range b.Status.Targets {
		if d := b.Status.Targets[i].DriveMean; d != nil {
			d.Counters, d.CountersUnavailable = nil, ""
		}
	}
	text := driveReport(t, b)
	wa := cells(t, section(t, b, text, "drive write amplification"))
	for _, ts := range b.Status.Targets {
		if got := wa["DRIVE WA"][ts.Name]; !strings.HasPrefix(got, "-[") || !strings.Contains(text, "] "+noCountersNote) {
			t.Errorf("%s: drive WA %q\n%s", ts.Name, got, text)
		}
	}
}

func TestShorten(t *testing.T) {
	long := "no drive counters: the volume's device nvme2n1 is reachable only through its file system; zoned targets are read through their Block claim"
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{long, 120, "no drive counters: the volume's device nvme2n1 is reachable only through its file system..."},
		{long, 60, "no drive counters: the volume's device nvme2n1 is..."},
	} {
		if got := shorten(c.in, c.n); got != c.want || len([]rune(got)) > c.n {
			t.Errorf("shorten(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestExportDrive(t *testing.T) {
	b := load(t, "drive")
	d, err := Collect(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := JSON(&out, d); err != nil {
		t.Fatal(err)
	}
	var e Export
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if e.DriveSources["measured"] == "" || !strings.Contains(e.DriveSources["modelled"], "not a measurement") {
		t.Errorf("sources %v", e.DriveSources)
	}
	for i, ts := range b.Status.Targets {
		et := e.Targets[i]
		dm, want := et.DriveMean, ts.DriveMean
		if dm == nil {
			t.Fatalf("%s: no drive mean exported", ts.Name)
		}
		if want.Counters == nil {
			if dm.Measured != nil || dm.MeasuredUnavailable != want.CountersUnavailable {
				t.Errorf("%s: measured %+v, reason %q", ts.Name, dm.Measured, dm.MeasuredUnavailable)
			}
		} else {
			if got := dm.Measured.HostWrittenBytes; got == nil || strconv.FormatInt(*got, 10) != want.Counters.HostWrittenBytes {
				t.Errorf("%s: host bytes %v", ts.Name, got)
			}
			if (dm.Measured.WriteAmplification == nil) != (want.Counters.WriteAmplification == "") {
				t.Errorf("%s: WA %v, status %q", ts.Name, dm.Measured.WriteAmplification, want.Counters.WriteAmplification)
			}
		}
		if len(dm.Modelled) != len(want.Modelled) {
			t.Errorf("%s: %d modelled, status %d", ts.Name, len(dm.Modelled), len(want.Modelled))
		}
		for j, m := range dm.Modelled {
			if w, _ := num(want.Modelled[j].WriteAmplification); m.WriteAmplification == nil || *m.WriteAmplification != w || m.Label != want.Modelled[j].Label {
				t.Errorf("%s OP %d: %+v", ts.Name, m.OverProvisioningPercent, m)
			}
		}
		if c := et.Capacity; c == nil || c.UsableBytes == nil || strconv.FormatInt(*c.UsableBytes, 10) != ts.Capacity.UsableBytes || len(c.Modelled) != len(ts.Capacity.Modelled) {
			t.Errorf("%s: capacity %+v, status %+v", ts.Name, c, ts.Capacity)
		}
	}
	for _, r := range e.Runs {
		if r.Drive == nil || r.Drive.BlockLayerWrittenBytes == nil {
			t.Errorf("run %s/%d: drive %+v", r.Target, r.Iteration, r.Drive)
		}
	}
	// Without drive figures, no sources and no drive keys.
	out.Reset()
	if err := JSON(&out, loadData(t, "pair")); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "driveSources") || strings.Contains(s, "driveMean") || strings.Contains(s, `"capacity"`) {
		t.Error("drive keys in an export without drive figures")
	}
}

func TestExportDriveCSV(t *testing.T) {
	b := load(t, "drive")
	d, err := Collect(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, col := summaryCSV(t, d)
	for _, h := range []string{"measured_drive_wa", "modelled_wa_op7", "modelled_wa_op28", "usable_bytes", "modelled_usable_share_op28"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("no column %s in %v", h, recs[0])
		}
	}
	rows := 0
	for _, r := range recs[1:] {
		ts := target(t, b, r[col["target"]])
		f, c := ts.DriveMean, ts.Capacity
		if it := r[col["iteration"]]; it != "mean" {
			n, _ := strconv.Atoi(it)
			f, c = ts.Iterations[n-1].Drive, nil
			if r[col["usable_bytes"]] != "" {
				t.Errorf("capacity on a run row: %q", r)
			}
		} else if r[col["usable_bytes"]] != c.UsableBytes || r[col["usable_source"]] != c.UsableSource {
			t.Errorf("%s mean: usable %q", ts.Name, r[col["usable_bytes"]])
		}
		if f.Counters != nil && r[col["measured_drive_wa"]] != f.Counters.WriteAmplification {
			t.Errorf("%s %s: measured WA %q, status %q", ts.Name, r[col["iteration"]], r[col["measured_drive_wa"]], f.Counters.WriteAmplification)
		}
		if f.Counters == nil && (r[col["measured_drive_wa"]] != "" || r[col["measured_drive_unavailable"]] != f.CountersUnavailable) {
			t.Errorf("%s %s: measured %q, reason %q", ts.Name, r[col["iteration"]], r[col["measured_drive_wa"]], r[col["measured_drive_unavailable"]])
		}
		for _, m := range f.Modelled {
			if got := r[col[fmt.Sprintf("modelled_wa_op%d", m.OverProvisioningPercent)]]; got != m.WriteAmplification {
				t.Errorf("%s %s OP %d: %q, status %q", ts.Name, r[col["iteration"]], m.OverProvisioningPercent, got, m.WriteAmplification)
			}
		}
		rows++
	}
	if rows != 3*3 {
		t.Errorf("%d rows, want 2 runs and a mean for each of 3 targets", rows)
	}
}

func merge2(a, b map[string]map[string]string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, m := range []map[string]map[string]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func noteOf(t *testing.T, notes map[string]string, cell string) string {
	t.Helper()
	m := footnoteMark.FindStringSubmatch(cell)
	if m == nil {
		t.Errorf("cell %q has no footnote", cell)
		return ""
	}
	return notes[m[1]]
}

func firstWords(s string) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(len(f), 6)], " ")
}

func gibOf(s string) string {
	n, _ := strconv.ParseInt(s, 10, 64)
	return fmt.Sprintf("%.2f", float64(n)/(1<<30))
}
