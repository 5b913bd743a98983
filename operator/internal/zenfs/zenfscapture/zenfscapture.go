// Package zenfscapture reads the real zenfs captures kept in
// operator/internal/zenfs/testdata/real (see its README) for tests of every
// package that handles what zenfs prints or writes: the text outputs, the
// hexdump -C dumps of meta zones and the blkzone reports taken with them.
package zenfscapture

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// Dir is the absolute path of the captures.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "real")
}

// Read returns a captured file; rel is relative to Dir.
func Read(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Hexdump decodes a `hexdump -C` capture: "offset  hex bytes  |ascii|" lines,
// "*" for lines repeating the previous one up to the next offset, and a last
// line holding the total length.
func Hexdump(t testing.TB, rel string) []byte {
	t.Helper()
	var out, prev []byte
	repeat := false
	sc := bufio.NewScanner(strings.NewReader(Read(t, rel)))
	for sc.Scan() {
		line := sc.Text()
		if line == "*" {
			repeat = true
			continue
		}
		offStr, rest, _ := strings.Cut(line, " ")
		off, err := strconv.ParseInt(offStr, 16, 64)
		if err != nil {
			t.Fatalf("%s: line %q: %v", rel, line, err)
		}
		for repeat && int64(len(out)) < off {
			out = append(out, prev...)
		}
		repeat = false
		if int64(len(out)) != off {
			t.Fatalf("%s: offset %#x after %d bytes", rel, off, len(out))
		}
		if rest == "" {
			break // the total length
		}
		hexPart, _, _ := strings.Cut(rest, "|")
		b, err := hex.DecodeString(strings.Join(strings.Fields(hexPart), ""))
		if err != nil {
			t.Fatalf("%s: line %q: %v", rel, line, err)
		}
		out, prev = append(out, b...), b
	}
	return out
}

// BlkzoneReport reads a `blkzone report` capture ("start: 0x..., len 0x...,
// cap 0x..., wptr 0x... ..., zcond: N(..) [type: N(..)]" lines); sizes are
// 512-byte sectors and wptr is relative to the zone start.
func BlkzoneReport(t testing.TB, rel string) []zbd.Zone {
	t.Helper()
	var zones []zbd.Zone
	for _, line := range strings.Split(strings.TrimSpace(Read(t, rel)), "\n") {
		var start, length, capacity, wp, reset, nonSeq, cond, typ uint64
		var condName, typeName string
		_, err := fmt.Sscanf(strings.TrimSpace(line),
			"start: 0x%x, len 0x%x, cap 0x%x, wptr 0x%x reset:%d non-seq:%d, zcond:%d(%2s) [type: %d(%s",
			&start, &length, &capacity, &wp, &reset, &nonSeq, &cond, &condName, &typ, &typeName)
		if err != nil {
			t.Fatalf("%s: %q: %v", rel, line, err)
		}
		zones = append(zones, zbd.Zone{Start: int64(start) * 512, Len: int64(length) * 512,
			Capacity: int64(capacity) * 512, WritePointer: int64(start+wp) * 512,
			Type: zbd.ZoneType(typ), Cond: zbd.ZoneCond(cond)})
	}
	return zones
}

// Od decodes an `od -t x1` capture ("offset byte byte ..." lines, then a
// line holding only the total length), such as the first 8 bytes of the
// random blocks written over nullb1's first meta zone
// (followup/B-garbage/10-random<N>-first8.txt).
func Od(t testing.TB, rel string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(strings.TrimSpace(Read(t, rel)), "\n") {
		fields := strings.Fields(line)
		for _, f := range fields[1:] {
			v, err := strconv.ParseUint(f, 16, 8)
			if err != nil {
				t.Fatalf("%s: line %q: %v", rel, line, err)
			}
			out = append(out, byte(v))
		}
	}
	return out
}
