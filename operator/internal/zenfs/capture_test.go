package zenfs

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs/zenfscapture"
)

// realDir holds what the real zenfs utility printed in the project's QEMU
// guest; testdata/README.md says how it was produced.
const realDir = "testdata/real"

// run is one captured command: its argv as typed and what it printed.
type run struct {
	rel    string // path under realDir without extension, e.g. capture/nullb0/09-df-empty
	argv   []string
	stdout string
	stderr string
	rc     int
}

func (r run) sub() string {
	if len(r.argv) < 2 {
		return ""
	}
	return r.argv[1]
}

// flag returns the value of --name=value and whether it was given.
func (r run) flag(name string) (string, bool) {
	for _, a := range r.argv[1:] {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name {
			return "", true
		}
	}
	return "", false
}

func readCapture(t *testing.T, rel string) string { return zenfscapture.Read(t, rel) }

// zenfsRuns loads every captured zenfs command, sorted by path. The .cmd
// files are shell-quoted argv; none of the zenfs ones needs unquoting.
func zenfsRuns(t *testing.T) []run {
	t.Helper()
	var runs []run
	err := filepath.WalkDir(realDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".cmd") {
			return err
		}
		stem := strings.TrimSuffix(p, ".cmd")
		rel, _ := filepath.Rel(realDir, stem)
		cmd := readCapture(t, rel+".cmd")
		argv := strings.Fields(cmd)
		if len(argv) == 0 || argv[0] != "zenfs" {
			return nil
		}
		if strings.ContainsAny(cmd, `'"\`) {
			t.Fatalf("%s: quoted argv; teach zenfsRuns to unquote it", p)
		}
		rc, err := strconv.Atoi(strings.TrimSpace(readCapture(t, rel+".rc")))
		if err != nil {
			t.Fatalf("%s.rc: %v", stem, err)
		}
		runs = append(runs, run{rel: rel, argv: argv, rc: rc,
			stdout: readCapture(t, rel+".stdout"), stderr: readCapture(t, rel+".stderr")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].rel < runs[j].rel })
	if len(runs) < 100 {
		t.Fatalf("only %d zenfs runs under %s", len(runs), realDir)
	}
	return runs
}

func readHexdump(t *testing.T, rel string) []byte { return zenfscapture.Hexdump(t, rel) }

func parseBlkzoneReport(t *testing.T, rel string) []zbd.Zone {
	return zenfscapture.BlkzoneReport(t, rel)
}

// sparseDevice is a device image built from the captured first 4 KiB of
// some zones; everything else reads as 0xff, as unwritten null_blk blocks do.
type sparseDevice map[int64][]byte

func (d sparseDevice) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		p[i] = 0xff
	}
	for start, b := range d {
		if start <= off && off < start+int64(len(b)) {
			copy(p, b[off-start:])
		}
	}
	return len(p), nil
}

// fsInfo parses `zenfs fs-info` ("Key:\t\tvalue" lines).
func fsInfo(t *testing.T, rel string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(readCapture(t, rel), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	if m["Magic"] != "FNEZ" {
		t.Fatalf("%s: not fs-info output: %q", rel, m)
	}
	return m
}

func mustAtoi(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

func TestReadHexdumpRepeats(t *testing.T) {
	// The nvme0n1 populated meta zone 2 is 4 KiB of zeros written as one
	// line, "*" and the length.
	b := readHexdump(t, "capture/nvme0n1/populated-metazone2.first4k.hex.txt")
	if len(b) != 4096 || !bytes.Equal(b, make([]byte, 4096)) {
		t.Errorf("decoded %d bytes, want 4096 zeros", len(b))
	}
}
