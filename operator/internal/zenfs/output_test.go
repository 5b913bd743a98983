package zenfs

import (
	"testing"
)

// Every real df and ls-uuid output is parsed in real_test.go; these are the
// edge cases zenfs did not happen to print.

func TestParseDfToleratesNoise(t *testing.T) {
	out := "2024/01/01-00:00:00 ZenFS: mounting read-only\n" + readCapture(t, "wa/nullb0-df.stdout")
	got, err := ParseDf(out)
	if err != nil || got.UsedBytes != 124<<20 || got.SpaceAmplificationPercent != 28 {
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

func TestParseLsUUIDRejects(t *testing.T) {
	if _, err := ParseLsUUID("Failed to enumerate file systems: IO error"); err == nil {
		t.Error("accepted a line without a tab")
	}
	fss, err := ParseLsUUID(readCapture(t, "capture/nullb4/10-ls-uuid.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	if fs, ok := FindDevice(fss, "nvme0n1"); !ok || fs.UUID != "f1e46afc-f95a-4d4b-bdc5-377a97c0aa29" {
		t.Errorf("FindDevice(nvme0n1) = %+v, %v", fs, ok)
	}
	if _, ok := FindDevice(fss, "nullb2"); ok {
		t.Error("FindDevice found nullb2")
	}
}
