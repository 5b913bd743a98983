package zenfs

import (
	"slices"
	"strings"
	"testing"
)

func TestMkfsArgs(t *testing.T) {
	got, err := MkfsArgs("nullb0", "/var/lib/zenfs-aux", 10, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mkfs", "--zbd=nullb0", "--aux_path=/var/lib/zenfs-aux", "--finish_threshold=10"}
	if !slices.Equal(got, want) {
		t.Errorf("MkfsArgs = %q, want %q", got, want)
	}
	got, err = MkfsArgs("nvme0n2", "/aux/nvme0n2", 0, true)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"mkfs", "--zbd=nvme0n2", "--aux_path=/aux/nvme0n2", "--finish_threshold=0", "--force"}
	if !slices.Equal(got, want) {
		t.Errorf("MkfsArgs force = %q, want %q", got, want)
	}
}

func TestMkfsArgsRefusesBadInput(t *testing.T) {
	tests := []struct {
		dev, aux string
		pct      int
	}{
		{"/dev/nullb0", "/aux", 0},
		{"../nullb0", "/aux", 0},
		{"-force", "/aux", 0},
		{"", "/aux", 0},
		{"nullb0", "aux", 0},
		{"nullb0", "/aux/../etc", 0},
		{"nullb0", "/aux/", 0},
		{"nullb0", "/", 0},
		{"nullb0", "", 0},
		{"nullb0", "/" + strings.Repeat("a", 254), 0},
		{"nullb0", "/aux\nx", 0},
		{"nullb0", "/aux", -1},
		{"nullb0", "/aux", 101},
	}
	for _, tt := range tests {
		if got, err := MkfsArgs(tt.dev, tt.aux, tt.pct, false); err == nil {
			t.Errorf("MkfsArgs(%q, %q, %d) = %q, want an error", tt.dev, tt.aux, tt.pct, got)
		}
	}
	if _, err := MkfsArgs("nullb0", "/"+strings.Repeat("a", 253), 100, false); err != nil {
		t.Errorf("longest allowed aux path: %v", err)
	}
}

func TestOtherArgs(t *testing.T) {
	if got, err := DfArgs("nullb0"); err != nil || !slices.Equal(got, []string{"df", "--zbd=nullb0"}) {
		t.Errorf("DfArgs = %q, %v", got, err)
	}
	if _, err := DfArgs("nullb0/.."); err == nil {
		t.Error("DfArgs accepted a path")
	}
	if got := LsUUIDArgs(); !slices.Equal(got, []string{"ls-uuid"}) {
		t.Errorf("LsUUIDArgs = %q", got)
	}
	if got, err := ListArgs("nvme0n2", ".rocksdb"); err != nil || !slices.Equal(got, []string{"list", "--zbd=nvme0n2", "--path=.rocksdb"}) {
		t.Errorf("ListArgs = %q, %v", got, err)
	}
	if _, err := ListArgs("nvme0n2", ""); err == nil {
		t.Error("ListArgs accepted an empty path")
	}
	if _, err := ListArgs("-x", "/"); err == nil {
		t.Error("ListArgs accepted a dash device")
	}
}
