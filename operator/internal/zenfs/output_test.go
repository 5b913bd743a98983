package zenfs

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseDf(t *testing.T) {
	tests := []struct {
		file string
		want Df
	}{
		{"df-fresh.txt", Df{FreeBytes: 3904 << 20}},
		{"df-used.txt", Df{FreeBytes: 1024 << 20, UsedBytes: 2500 << 20, ReclaimableBytes: 412 << 20, SpaceAmplificationPercent: 16}},
	}
	for _, tt := range tests {
		got, err := ParseDf(readTestdata(t, tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.file, diff)
		}
	}
}

func TestParseDfToleratesNoise(t *testing.T) {
	out := "2024/01/01-00:00:00 ZenFS: mounting read-only\n" + readTestdata(t, "df-used.txt")
	got, err := ParseDf(out)
	if err != nil || got.UsedBytes != 2500<<20 {
		t.Errorf("got %+v, %v", got, err)
	}
}

func TestParseDfRejects(t *testing.T) {
	for _, out := range []string{
		"",
		"Failed to mount filesystem, error: IO error: No such file\n",
		"Free: 10 MB\nUsed: 0 MB\nReclaimable: 0 MB\n",                          // no amplification line
		"Free: 10 GB\nUsed: 0 MB\nReclaimable: 0 MB\nSpace amplification: 0%\n", // unit
		"Free: -1 MB\nUsed: 0 MB\nReclaimable: 0 MB\nSpace amplification: 0%\n",
		"Free: 99999999999999999999 MB\nUsed: 0 MB\nReclaimable: 0 MB\nSpace amplification: 0%\n",
		"Free: 9223372036854 MB\nUsed: 0 MB\nReclaimable: 0 MB\nSpace amplification: 0%\n", // overflows in bytes
	} {
		if got, err := ParseDf(out); err == nil {
			t.Errorf("ParseDf(%q) = %+v, want an error", out, got)
		}
	}
}

func TestParseLsUUID(t *testing.T) {
	got, err := ParseLsUUID(readTestdata(t, "ls-uuid.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []FileSystem{
		{UUID: "1b0f5c4e-2a6d-4c1e-9a3b-5f7d2e8c9a10", Device: "nullb0"},
		{UUID: "7d3e9f21-8c4b-4a5e-b6d2-0e1f3a5c7b94", Device: "nvme0n2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if fs, ok := FindDevice(got, "nvme0n2"); !ok || fs.UUID != want[1].UUID {
		t.Errorf("FindDevice(nvme0n2) = %+v, %v", fs, ok)
	}
	if _, ok := FindDevice(got, "nullb1"); ok {
		t.Error("FindDevice found nullb1")
	}

	none, err := ParseLsUUID(readTestdata(t, "ls-uuid-none.txt"))
	if err != nil || len(none) != 0 {
		t.Errorf("empty output: %v, %v", none, err)
	}
	if _, err := ParseLsUUID("Failed to enumerate file systems: IO error"); err == nil {
		t.Error("accepted a line without a tab")
	}
}
