package ycsb

import (
	"math"
	"strings"
	"testing"
)

func TestParseRecordCount(t *testing.T) {
	for in, want := range map[string]RecordCount{"1000": {Records: 1000}, "60%": {Percent: 60}, "100%": {Percent: 100}, "1%": {Percent: 1}} {
		got, err := ParseRecordCount(in)
		if err != nil || got != want {
			t.Errorf("ParseRecordCount(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"101%", "0%", "60.5%", "-1", "0", "", "%", "sixty%"} {
		if _, err := ParseRecordCount(in); err == nil {
			t.Errorf("ParseRecordCount(%q) accepted", in)
		}
	}
	_, err := ParseRecordCount("150%")
	if err == nil || !strings.Contains(err.Error(), "1% to 100%") {
		t.Errorf("a share above 100%%: %v", err)
	}
}

func TestResolve(t *testing.T) {
	const gib = int64(1) << 30
	// 60% of 10 GiB in 4 KiB records with their key.
	rc := RecordCount{Percent: 60}
	n, err := rc.Resolve(10*gib, 1, 4096)
	if err != nil {
		t.Fatal(err)
	}
	per := RecordBytes(1, 4096)
	if n*per > 10*gib*60/100 || (n+1)*per <= 10*gib*60/100 {
		t.Errorf("60%% of 10 GiB = %d records of %d bytes (%d bytes)", n, per, n*per)
	}
	// A share of an enormous device does not overflow.
	if n, err := (RecordCount{Percent: 100}).Resolve(math.MaxInt64, 1, 1); err != nil || n <= 0 {
		t.Errorf("100%% of MaxInt64: %d, %v", n, err)
	}
	if _, err := rc.Resolve(0, 1, 4096); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Errorf("unknown capacity: %v", err)
	}
	if _, err := rc.Resolve(1000, 1, 4096); err == nil {
		t.Error("a share smaller than one record accepted")
	}
	if n, _ := (RecordCount{Records: 7}).Resolve(0, 1, 1); n != 7 {
		t.Errorf("a number resolves to %d", n)
	}
}
