package zenfs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// Contract tests: the package against every output the real zenfs printed.

func TestRealDf(t *testing.T) {
	// MiB figures of each successful df, as zenfs printed them; the parser
	// must give them back in bytes.
	want := map[string][4]int64{ // free, used, reclaimable MiB; amplification %
		"capture/errors/busy-df":          {3891, 10, 0, 0}, // while a RocksDB holds the device
		"capture/nullb0/09-df-empty":      {3904, 0, 0, 0},
		"capture/nullb0/21-df-populated":  {3891, 10, 0, 0},
		"capture/nullb1/09-df-empty":      {1000, 0, 0, 0},
		"capture/nullb1/21-df-populated":  {987, 10, 0, 0},
		"capture/nullb4/09-df-empty":      {1600, 0, 0, 0},
		"capture/nullb4/21-df-populated":  {1581, 10, 0, 0},
		"capture/nvme0n1/09-df-empty":     {2220, 0, 0, 0},
		"capture/nvme0n1/21-df-populated": {2207, 10, 0, 0},
		"followup/A-aux/05-df":            {3891, 10, 0, 0},
		"followup/A-aux/10-df-after":      {3891, 10, 0, 0},
		"wa/nullb0-df":                    {3659, 124, 35, 28},
		"wa/nvme0n1-df":                   {1995, 125, 65, 52},
		"wa-nowal/nullb0-df":              {3689, 123, 91, 74},
		"wa-nowal/nvme0n1-df":             {1942, 116, 146, 126}, // amplification above 100%
	}
	seen := 0
	for _, r := range zenfsRuns(t) {
		if r.sub() != "df" {
			continue
		}
		seen++
		got, err := ParseDf(r.stdout)
		if r.rc != 0 {
			// A failed df says why on stderr only.
			if r.stdout != "" || err == nil {
				t.Errorf("%s (exit %d): stdout %q, ParseDf err %v; want nothing to parse", r.rel, r.rc, r.stdout, err)
			}
			continue
		}
		w, ok := want[r.rel]
		if !ok {
			t.Errorf("%s: a successful df with no expectation here", r.rel)
			continue
		}
		exp := Df{FreeBytes: w[0] << 20, UsedBytes: w[1] << 20, ReclaimableBytes: w[2] << 20, SpaceAmplificationPercent: w[3]}
		if err != nil || got != exp {
			t.Errorf("%s: ParseDf = %+v, %v; want %+v", r.rel, got, err, exp)
		}
		delete(want, r.rel)
	}
	if len(want) != 0 || seen < 25 {
		t.Errorf("df captures not found: %v (saw %d df runs)", want, seen)
	}
}

func TestRealLsUUID(t *testing.T) {
	const (
		nullb0 = "c59e1291-cd99-49cb-bbf6-f3555b283912\tnullb0"
		nullb1 = "c5d2e339-8a04-4e42-9096-1b325617c165\tnullb1"
		nullb4 = "8ff134cb-ec84-4c31-aa90-3a87d7bbe85d\tnullb4"
		nvme   = "f1e46afc-f95a-4d4b-bdc5-377a97c0aa29\tnvme0n1"
		later0 = "e47c5d2d-0a1a-441b-b943-77e2ba17a413\tnullb0" // followup's boot
	)
	// Each listing, in zenfs's order (by UUID, not by device).
	want := map[string][]string{
		"capture/errors/busy-ls-uuid":               {"5511a978-27b7-44af-a755-dd62bc1d975b\tnullb1", nullb4, nullb0, nvme},
		"capture/garbage/ls-uuid":                   {nullb4, nullb0, nvme},
		"capture/nullb0/03b-ls-uuid-unformatted":    nil,
		"capture/nullb0/10-ls-uuid":                 {nullb0},
		"capture/nullb0/24-ls-uuid-populated":       {nullb0},
		"capture/nullb1/03b-ls-uuid-unformatted":    {nullb0},
		"capture/nullb1/10-ls-uuid":                 {nullb0, nullb1},
		"capture/nullb1/24-ls-uuid-populated":       {nullb0, nullb1},
		"capture/nullb4/03b-ls-uuid-unformatted":    {nullb0, nullb1, nvme},
		"capture/nullb4/10-ls-uuid":                 {nullb4, nullb0, nullb1, nvme},
		"capture/nullb4/24-ls-uuid-populated":       {nullb4, nullb0, nullb1, nvme},
		"capture/nvme0n1/03b-ls-uuid-unformatted":   {nullb0, nullb1},
		"capture/nvme0n1/10-ls-uuid":                {nullb0, nullb1, nvme},
		"capture/nvme0n1/24-ls-uuid-populated":      {nullb0, nullb1, nvme},
		"followup/B-garbage/09-ls-uuid-after-reset": {later0},
		"followup/B-garbage/10-random4-ls-uuid":     {later0},
		"followup/B-garbage/10-random6-ls-uuid":     {later0},
		"znsdb/03b-ls-uuid":                         {"b0de4bca-e67f-44bb-8a63-89a17cd4c95f\tnullb0"},
	}
	aborted := 0
	for _, r := range zenfsRuns(t) {
		if r.sub() != "ls-uuid" {
			continue
		}
		got, err := ParseLsUUID(r.stdout)
		if err != nil {
			t.Errorf("%s: %v", r.rel, err)
			continue
		}
		if r.rc != 0 {
			// One device with bad data aborts the listing for the whole
			// host: nothing at all is printed, the healthy nullb0 included.
			if r.rc != 134 || len(got) != 0 {
				t.Errorf("%s: exit %d listed %v", r.rel, r.rc, got)
			}
			aborted++
			continue
		}
		exp, ok := want[r.rel]
		if !ok {
			t.Errorf("%s: a successful ls-uuid with no expectation here", r.rel)
			continue
		}
		var lines []string
		for _, fs := range got {
			lines = append(lines, fs.UUID+"\t"+fs.Device)
		}
		if !slices.Equal(lines, exp) {
			t.Errorf("%s: ParseLsUUID = %q, want %q", r.rel, lines, exp)
		}
		delete(want, r.rel)
	}
	if len(want) != 0 || aborted != 5 {
		t.Errorf("missing captures %v; %d aborted listings, want 5", want, aborted)
	}
}

// Every failed zenfs run maps to a reason a user can act on.
func TestRealFailuresClassified(t *testing.T) {
	want := map[string]Reason{
		"capture/errors/aux-is-file-mkfs":               ReasonAuxPath,
		"capture/errors/aux-long-mkfs":                  ReasonAuxPath,
		"capture/errors/aux-not-empty-mkfs":             ReasonAuxPath,
		"capture/errors/aux-parent-missing-mkfs":        ReasonAuxPath,
		"capture/errors/busy-mkfs-force":                ReasonBusy,
		"capture/errors/busy-mkfs-noforce":              ReasonBusy,
		"capture/errors/df-no-zbd":                      ReasonUsage,
		"capture/errors/df-unknown-flag":                ReasonUsage,
		"capture/errors/finish-threshold-pct-mkfs":      ReasonUsage,
		"capture/errors/mkfs-no-aux":                    ReasonAuxPath,
		"capture/errors/no-device-df":                   ReasonNoSuchDevice,
		"capture/errors/no-device-mkfs":                 ReasonNoSuchDevice,
		"capture/errors/not-zoned-df":                   ReasonNotZoned,
		"capture/errors/not-zoned-mkfs":                 ReasonNotZoned,
		"capture/errors/scheduler-none-df":              ReasonWrongScheduler,
		"capture/errors/scheduler-none-mkfs":            ReasonWrongScheduler,
		"capture/errors/too-few-zones-df":               ReasonTooFewZones,
		"capture/errors/too-few-zones-mkfs":             ReasonTooFewZones,
		"capture/errors/unknown-subcommand":             ReasonUsage,
		"capture/errors/zbd-dev-path-df":                ReasonNoSuchDevice,
		"capture/errors/zbd-dev-path-mkfs":              ReasonNoSuchDevice,
		"capture/garbage/df":                            ReasonUnformatted,
		"followup/B-garbage/02-ls-uuid":                 ReasonAborted,
		"followup/B-garbage/03-df":                      ReasonAborted,
		"followup/B-garbage/04-mkfs-noforce":            ReasonAborted,
		"followup/B-garbage/05-mkfs-force":              ReasonAborted,
		"followup/B-garbage/10-random1-ls-uuid":         ReasonAborted,
		"followup/B-garbage/10-random1-mkfs-force":      ReasonAborted,
		"followup/B-garbage/10-random2-ls-uuid":         ReasonAborted,
		"followup/B-garbage/10-random2-mkfs-force":      ReasonAborted,
		"followup/B-garbage/10-random3-ls-uuid":         ReasonAborted,
		"followup/B-garbage/10-random3-mkfs-force":      ReasonAborted,
		"followup/B-garbage/10-random5-ls-uuid":         ReasonAborted,
		"followup/B-garbage/10-random5-mkfs-force":      ReasonAborted,
		"followup/C-auxlen/03-mkfs-aux-255":             ReasonAuxPath,
		"znsdb/19b-fs-info-nullb1":                      ReasonAborted,
		"znsdb/21b-zenfs-mkfs-fewzones-nullb3":          ReasonTooFewZones,
		"znsdb/33-mkfs-aux-254":                         ReasonAborted,
		"znsdb/34-mkfs-aux-255":                         ReasonAborted,
		"znsdb/34b-fs-info-nullb1":                      ReasonAborted,
		"capture/nullb0/02-df-unformatted":              ReasonUnformatted,
		"capture/nullb0/03-list-unformatted":            ReasonUnformatted,
		"capture/nullb0/05-mkfs-again-noforce-same-aux": ReasonExistingFileSystem,
		"capture/nullb0/06-mkfs-again-noforce-new-aux":  ReasonExistingFileSystem,
	}
	// The four devices of capture/ failed the same way.
	for _, dev := range []string{"nullb1", "nullb4", "nvme0n1"} {
		for _, s := range []string{"02-df-unformatted", "03-list-unformatted"} {
			want["capture/"+dev+"/"+s] = ReasonUnformatted
		}
		for _, s := range []string{"05-mkfs-again-noforce-same-aux", "06-mkfs-again-noforce-new-aux"} {
			want["capture/"+dev+"/"+s] = ReasonExistingFileSystem
		}
	}
	reasons := map[Reason]int{}
	for _, r := range zenfsRuns(t) {
		if r.rc == 0 {
			continue
		}
		exp, ok := want[r.rel]
		if !ok {
			t.Errorf("%s: failed (exit %d, %q) with no expected reason here", r.rel, r.rc, firstLine(r.stderr))
			continue
		}
		delete(want, r.rel)
		dev, _ := r.flag("zbd")
		f := Classify(dev, r.stderr, exitErr(r.rc))
		if f.Reason != exp {
			t.Errorf("%s: reason %s, want %s (%q)", r.rel, f.Reason, exp, f.Message)
		}
		// The message keeps zenfs's own words, so nothing is lost.
		if first := firstLine(r.stderr); first != "" && !strings.Contains(f.Message, first) {
			t.Errorf("%s: message %q lacks zenfs's %q", r.rel, f.Message, first)
		}
		reasons[f.Reason]++
	}
	if len(want) != 0 {
		t.Errorf("expected failures not among the captures: %v", want)
	}
	for _, r := range []Reason{ReasonBusy, ReasonNoSuchDevice, ReasonNotZoned, ReasonTooFewZones, ReasonWrongScheduler,
		ReasonAuxPath, ReasonExistingFileSystem, ReasonUnformatted, ReasonAborted, ReasonUsage} {
		if reasons[r] == 0 {
			t.Errorf("no real failure gave %s", r)
		}
	}
}

// exitErr stands for how the captured process ended, as the runner reports it.
type exitErr int

func (e exitErr) Error() string {
	if e == 134 {
		return "signal: aborted"
	}
	return "exit status " + strconv.Itoa(int(e))
}

func TestClassifyWithoutStderr(t *testing.T) {
	// An abort whose stderr was lost is still an abort.
	if f := Classify("nullb1", "", exitErr(134)); f.Reason != ReasonAborted {
		t.Errorf("got %+v", f)
	}
	if f := Classify("nullb1", "", fmt.Errorf("fork/exec /usr/bin/zenfs: no such file or directory")); f.Reason != ReasonNoBinary ||
		!strings.Contains(f.Message, "/usr/bin/zenfs") {
		t.Errorf("got %+v", f)
	}
	if f := Classify("nullb1", "something new\nmore", exitErr(1)); f.Reason != ReasonUnknown || !strings.Contains(f.Message, "something new") {
		t.Errorf("got %+v", f)
	}
	// The messages name the device and what to do.
	f := Classify("nvme0n2", "Failed to open zoned block device: nvme0n2, error: Invalid argument: Current ZBD scheduler is not mq-deadline, set it to mq-deadline.", exitErr(1))
	if !strings.Contains(f.Message, "echo mq-deadline > /sys/block/nvme0n2/queue/scheduler") {
		t.Errorf("scheduler advice %q", f.Message)
	}
}

// The builders produce exactly the command lines zenfs accepted, and refuse
// the ones it could not use.
func TestRealCommandLines(t *testing.T) {
	checked := 0
	for _, r := range zenfsRuns(t) {
		dev, _ := r.flag("zbd")
		if r.rc != 0 && Classify(dev, r.stderr, exitErr(r.rc)).Reason == ReasonUsage {
			continue // hand-made wrong command lines (no --zbd, --bogus=1), to capture zenfs's usage errors
		}
		var got []string
		var err error
		switch r.sub() {
		case "mkfs":
			aux, _ := r.flag("aux_path")
			_, force := r.flag("force")
			ftStr, hasFT := r.flag("finish_threshold")
			if !hasFT {
				continue // not the project's form: MkfsArgs always passes a threshold
			}
			ft, convErr := strconv.Atoi(ftStr)
			if convErr != nil {
				continue // "10%": the builder takes an int
			}
			got, err = MkfsArgs(dev, aux, ft, force)
		case "df":
			got, err = DfArgs(dev)
		case "ls-uuid":
			got = LsUUIDArgs()
		case "list":
			p, ok := r.flag("path")
			if !ok {
				continue // no --path: ListArgs always gives one
			}
			got, err = ListArgs(dev, p)
		default:
			continue
		}
		checked++
		rel := r.rel[strings.LastIndexByte(r.rel, '/')+1:]
		switch {
		case err == nil:
			if diff := cmp.Diff(r.argv[1:], got); diff != "" {
				t.Errorf("%s: builder differs from what zenfs ran (-ran +built):\n%s", r.rel, diff)
			}
			// Failures that depend on the device, not on the arguments, are
			// fine; any other would be a command line the builder gets wrong.
			if r.rc != 0 && !deviceDependent(r.stderr) {
				t.Errorf("%s: the builder accepts what zenfs refused: %q", r.rel, firstLine(r.stderr))
			}
		case strings.Contains(rel, "dev-path") || strings.Contains(rel, "aux-long") || strings.Contains(rel, "aux-255") ||
			strings.Contains(rel, "aux-relative") || strings.Contains(rel, "threshold-101") || strings.Contains(rel, "threshold-neg") ||
			strings.Contains(rel, "emptypath"):
			// Refused on purpose: zenfs fails on a /dev path and on a
			// 255-byte aux path; it accepts a relative aux path, thresholds
			// outside 0-100 (storing -1 as 4294967295) and an empty list
			// path, which the builders refuse as a matter of policy.
		default:
			t.Errorf("%s: builder refused what zenfs ran: %v", r.rel, err)
		}
	}
	if checked < 80 {
		t.Errorf("checked only %d command lines", checked)
	}
}

// deviceDependent: zenfs failed because of the device's state, which no
// argument check can see.
func deviceDependent(stderr string) bool {
	for _, s := range []string{"No such file or directory", "for read: Invalid argument", "scheduler", "To few zones",
		"is not empty", "is not a directory", "Failed to create aux directory", "Device or resource busy",
		"Existing filesystem found", "No valid superblock", "std::bad_alloc"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// The superblock reader on every captured meta zone: each device after its
// first mkfs, after the last one (formatted), and after a RocksDB session
// rolled the metadata log into the second meta zone (populated). The zone
// layout and write pointers come from the blkzone report taken at that
// moment; the bytes from the first 4 KiB dumped at each meta zone's start.
func TestRealMetaZones(t *testing.T) {
	states := []struct {
		name, report, fsInfo, lsUUID string
		// which meta zone holds the superblock, and its sequence number
		zone int
		seq  uint32
	}{
		{"after-mkfs", "04b-blkzone-report-after-mkfs", "", "", 0, 1},
		{"formatted", "16-blkzone-report-formatted", "14-fs-info", "10-ls-uuid", 0, 1},
		{"populated", "25-blkzone-report-populated", "23-fs-info-populated", "24-ls-uuid-populated", 1, 2},
	}
	devices := []struct {
		name                   string
		zones, zoneSizeBlocks  uint32
		firstSeq               int // index of the first sequential zone
		formattedAux, firstAux string
	}{
		{"nullb0", 64, 16384, 0, "/tmp/aux/nullb0-3/", "/tmp/aux/nullb0/"},
		{"nullb1", 128, 2048, 0, "/tmp/aux/nullb1-3/", "/tmp/aux/nullb1/"},
		{"nullb4", 32, 16384, 4, "/tmp/aux/nullb4-3/", "/tmp/aux/nullb4/"}, // 4 conventional zones first
		{"nvme0n1", 40, 16384, 0, "/tmp/aux/nvme0n1-3/", "/tmp/aux/nvme0n1/"},
	}
	for _, d := range devices {
		for _, st := range states {
			t.Run(d.name+"/"+st.name, func(t *testing.T) {
				dir := "capture/" + d.name + "/"
				zones := parseBlkzoneReport(t, dir+st.report+".stdout")
				if len(zones) != int(d.zones) {
					t.Fatalf("%d zones in the report, want %d", len(zones), d.zones)
				}
				meta := MetaZones(zones)
				if len(meta) != MetaZoneCount {
					t.Fatalf("MetaZones = %+v", meta)
				}
				img := sparseDevice{}
				for i, z := range meta {
					stem := fmt.Sprintf("%s%s-metazone%d", dir, st.name, i)
					sector, err := strconv.ParseInt(strings.TrimSpace(readCapture(t, stem+".start-sector")), 0, 64)
					if err != nil {
						t.Fatal(err)
					}
					// The guest dumped the zones ZenFS uses; MetaZones must
					// pick the same ones, conventional zones skipped.
					if z.Start != sector*512 || z.Start != zones[d.firstSeq+i].Start {
						t.Errorf("meta zone %d starts at byte %d, the dump at sector %d", i, z.Start, sector)
					}
					b := readHexdump(t, stem+".first4k.hex.txt")
					img[z.Start] = b
					if got := isSuperblockRecord(b); got != (i == st.zone) {
						t.Errorf("meta zone %d: isSuperblockRecord = %v", i, got)
					}
				}
				if ok, err := HasSuperblock(img, zones[0].Len, MetaZoneCount); d.firstSeq == 0 && (err != nil || !ok) {
					t.Errorf("HasSuperblock = %v, %v", ok, err)
				}
				sb, err := ReadSuperblock(img, meta)
				if err != nil || sb == nil {
					t.Fatalf("ReadSuperblock = %+v, %v", sb, err)
				}
				if found, err := ProbeSuperblock(img, meta); !found || err != nil {
					t.Errorf("ProbeSuperblock = %v, %v", found, err)
				}
				aux := d.formattedAux
				if st.name == "after-mkfs" {
					aux = d.firstAux
				}
				want := Superblock{UUID: sb.UUID, Sequence: st.seq, Version: 2, BlockSize: 4096, ZoneSizeBlocks: d.zoneSizeBlocks,
					NrZones: d.zones, FinishThreshold: 10, AuxPath: aux, ZenFSVersion: "v2.1.0-65-g919c2eb"}
				if diff := cmp.Diff(want, *sb); diff != "" {
					t.Errorf("superblock (-want +got):\n%s", diff)
				}
				if len(sb.UUID) != 36 {
					t.Errorf("UUID %q", sb.UUID)
				}
				if st.fsInfo == "" {
					return
				}
				// What the real zenfs reports about the same device at the
				// same moment.
				info := fsInfo(t, dir+st.fsInfo+".stdout")
				fromInfo := Superblock{UUID: info["UUID"], Sequence: mustAtoi(t, info["Sequence Number"]),
					Version: mustAtoi(t, info["Superblock Version"]), Flags: mustAtoi(t, info["Flags [Decimal]"]),
					BlockSize: mustAtoi(t, info["Block Size [Bytes]"]), ZoneSizeBlocks: mustAtoi(t, info["Zone Size [Blocks]"]),
					NrZones: mustAtoi(t, info["Number of Zones"]), FinishThreshold: mustAtoi(t, info["Finish Threshold [%]"]),
					AuxPath: info["Auxiliary FS Path"], ZenFSVersion: info["ZenFS Version"]}
				if diff := cmp.Diff(fromInfo, *sb); diff != "" {
					t.Errorf("superblock against zenfs fs-info (-fs-info +read):\n%s", diff)
				}
				fss, err := ParseLsUUID(readCapture(t, dir+st.lsUUID+".stdout"))
				if fs, ok := FindDevice(fss, d.name); err != nil || !ok || fs.UUID != sb.UUID {
					t.Errorf("zenfs ls-uuid lists %+v for %s (%v); the superblock says %s", fs, d.name, err, sb.UUID)
				}
			})
		}
	}
}

// A meta zone whose bytes are behind the write pointer only (reset since) is
// not read: the populated devices' first meta zone was reset by ZenFS.
func TestRealResetMetaZoneNotRead(t *testing.T) {
	zones := parseBlkzoneReport(t, "capture/nullb0/25-blkzone-report-populated.stdout")
	meta := MetaZones(zones)
	if meta[0].WritePointer != meta[0].Start || meta[1].WritePointer == meta[1].Start {
		t.Fatalf("populated nullb0: meta zones %+v; want the first reset and the second written", meta[:2])
	}
	// Put the formatted superblock (sequence 1) back into the reset zone: a
	// stale record the reader must not prefer over the live one.
	img := sparseDevice{
		meta[0].Start: readHexdump(t, "capture/nullb0/formatted-metazone0.first4k.hex.txt"),
		meta[1].Start: readHexdump(t, "capture/nullb0/populated-metazone1.first4k.hex.txt"),
	}
	sb, err := ReadSuperblock(img, meta)
	if err != nil || sb == nil || sb.Sequence != 2 {
		t.Errorf("ReadSuperblock = %+v, %v; want the live sequence-2 superblock", sb, err)
	}
	// Both written: the newer sequence wins.
	meta[0].WritePointer = meta[0].Start + 8192
	if sb, err := ReadSuperblock(img, meta); err != nil || sb == nil || sb.Sequence != 2 {
		t.Errorf("ReadSuperblock with both written = %+v, %v", sb, err)
	}
}

// What made zenfs abort: the first meta zone of nullb1 started with random
// bytes, read by zenfs as a record (CRC word, then length word). The six
// random blocks aborted ls-uuid exactly when the length word was 2 GiB or
// more (a 2 GiB guest: zenfs allocates that much before checking the CRC).
// The project's reader takes no length from the device and finds nothing.
func TestRealGarbageThatAbortsZenFS(t *testing.T) {
	for i := 1; i <= 6; i++ {
		stem := fmt.Sprintf("followup/B-garbage/10-random%d", i)
		// od -A d -t x1 output: "0000000 3e ad 15 9a dd 5b 35 80"
		fields := strings.Fields(strings.Split(readCapture(t, stem+"-first8.txt"), "\n")[0])
		if len(fields) != 9 {
			t.Fatalf("%s-first8.txt: %q", stem, fields)
		}
		block := make([]byte, 4096)
		for j, f := range fields[1:] {
			v, err := strconv.ParseUint(f, 16, 8)
			if err != nil {
				t.Fatal(err)
			}
			block[j] = byte(v)
		}
		length := uint32(block[4]) | uint32(block[5])<<8 | uint32(block[6])<<16 | uint32(block[7])<<24
		rc := strings.TrimSpace(readCapture(t, stem+"-ls-uuid.rc"))
		if aborted := rc == "134"; aborted != (length >= 1<<31) {
			t.Errorf("random%d: length word %#x, ls-uuid exit %s", i, length, rc)
		}
		zone := seqZone(0, zbd.ZoneCondImpOpen, 16*4096)
		if sb, err := ReadSuperblock(sparseDevice{0: block}, []zbd.Zone{zone}); sb != nil || err != nil {
			t.Errorf("random%d: ReadSuperblock = %+v, %v", i, sb, err)
		}
	}
}

// ls-uuid reads every device: its abort is not blamed on one.
func TestClassifyHostWide(t *testing.T) {
	f := Classify("", readCapture(t, "followup/B-garbage/02-ls-uuid.stderr"), exitErr(134))
	if f.Reason != ReasonAborted || !strings.Contains(f.Message, "one of this node's zoned devices") {
		t.Errorf("got %+v", f)
	}
}
