package dbinit

import (
	"strings"
	"testing"
	"time"
)

func TestSpaceRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 5, 44, 0, time.UTC)
	s := Space{At: at, FreeBytes: 3659 << 20, UsedBytes: 124 << 20, ReclaimableBytes: 35 << 20, SpaceAmplificationPercent: 28}
	v, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSpace(v)
	if err != nil || back != s {
		t.Errorf("round trip %+v, %v; want %+v", back, err, s)
	}
	long := Space{At: at, Error: strings.Repeat("x", 5000), ErrorReason: "ZenFSAborted"}
	v, _ = long.Encode()
	if len(v) > 700 {
		t.Errorf("annotation of %d bytes", len(v))
	}
}

func TestParseSpaceRejects(t *testing.T) {
	for _, v := range []string{"", "{", `{"freeBytes":1}`, `{"at":"2026-11-22T09:05:44Z","freeBytes":-1}`, `"a string"`} {
		if s, err := ParseSpace(v); err == nil {
			t.Errorf("ParseSpace(%q) = %+v", v, s)
		}
	}
}
