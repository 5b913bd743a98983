package dbinit

import (
	"strings"
	"testing"
	"time"
)

// The decision on the running server's rocksdb_fs_uri: only the device's own
// URI means MyRocks is on ZenFS.
func TestJudgeFSURI(t *testing.T) {
	want := ZenFSURI("nvme0n2")
	if want != "zenfs://dev:nvme0n2" {
		t.Fatalf("ZenFSURI = %q", want)
	}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name     string
		got      *string
		verdict  FSURIVerdict
		mentions []string
	}{
		{"the device's URI", str(want), FSURIOnZenFS, []string{want}},
		// MariaDB's MyRocks, or a Percona MyRocks built without ZenFS.
		{"no such variable", nil, FSURINotOnZenFS, []string{"no rocksdb_fs_uri", "loose-rocksdb-fs-uri=" + want, "datadir volume", "image"}},
		{"empty", str(""), FSURINotOnZenFS, []string{"empty", "datadir volume"}},
		{"another device", str("zenfs://dev:nvme0n3"), FSURINotOnZenFS, []string{`"zenfs://dev:nvme0n3"`, "not " + want}},
		{"a prefix of it", str("zenfs://dev:nvme0n"), FSURINotOnZenFS, []string{"not " + want}},
		{"another file system", str("posix://"), FSURINotOnZenFS, []string{`"posix://"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, msg := JudgeFSURI(want, tc.got)
			if v != tc.verdict {
				t.Errorf("verdict %s, want %s (%s)", v, tc.verdict, msg)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(msg, m) {
					t.Errorf("message lacks %q: %s", m, msg)
				}
			}
		})
	}
}

func TestFSURICheckAnnotation(t *testing.T) {
	got := strings.Repeat("x", 5000) // whatever a server answers, the annotation stays small
	c := FSURICheck{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Want: ZenFSURI("nullb0"), Got: &got,
		Verdict: FSURINotOnZenFS, Message: strings.Repeat("m", 5000)}
	v, err := c.Encode()
	if err != nil || len(v) > 1200 {
		t.Fatalf("Encode: %d bytes, %v", len(v), err)
	}
	back, err := ParseFSURICheck(v)
	if err != nil || !back.At.Equal(c.At) || back.Verdict != c.Verdict || back.Want != c.Want || back.Got == nil {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	for _, bad := range []string{`{`, `{"verdict":"OnZenFS"}`, `{"at":"2026-01-02T03:04:05Z","verdict":"Maybe"}`} {
		if _, err := ParseFSURICheck(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
