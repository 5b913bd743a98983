package nvmelog

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func readPage(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The pages QEMU 10.0.2 returned in the guest (testdata/README.md): 49 x 64 KiB written between the
// before/ and after/ captures, and 3 reads of 4 KiB (the kernel's partition scan) before both.
func TestParseRecordedSMART(t *testing.T) {
	for _, c := range []string{"zns", "conv-ocp", "fdp"} {
		before, err := ParseSMART(readPage(t, c+"/before/smart.bin"))
		if err != nil {
			t.Fatal(err)
		}
		after, err := ParseSMART(readPage(t, c+"/after/smart.bin"))
		if err != nil {
			t.Fatal(err)
		}
		want := SMART{TemperatureKelvin: 323, DataUnitsRead: Uint128{Lo: 1}, HostReadCommands: Uint128{Lo: 3}}
		if before != want {
			t.Errorf("%s before: %+v, want %+v", c, before, want)
		}
		// 3,211,264 bytes are 6.27 data units of 512,000 bytes: QEMU rounds up to 7
		want.DataUnitsWritten, want.HostWriteCommands = Uint128{Lo: 7}, Uint128{Lo: 49}
		if after != want {
			t.Errorf("%s after: %+v, want %+v", c, after, want)
		}
		if after.TemperatureCelsius() != 50 {
			t.Errorf("%s: %d degrees C", c, after.TemperatureCelsius())
		}
	}
	if _, err := ParseSMART(make([]byte, 511)); err == nil {
		t.Error("a 511-byte SMART page parsed")
	}
}

func TestParseRecordedOCP(t *testing.T) {
	for _, c := range []string{"conv-ocp", "fdp"} {
		before, err := ParseOCPSMART(readPage(t, c+"/before/ocp-smart.bin"))
		if err != nil {
			t.Fatal(err)
		}
		after, err := ParseOCPSMART(readPage(t, c+"/after/ocp-smart.bin"))
		if err != nil {
			t.Fatal(err)
		}
		// bytes, as the OCP specification says: 12,288 read by the partition scan, 3,211,264 written by dd
		want := OCPSMART{PhysicalMediaUnitsRead: Uint128{Lo: 12288}, LogPageVersion: 5, GUID: OCPGUID}
		if before != want {
			t.Errorf("%s before: %+v, want %+v", c, before, want)
		}
		want.PhysicalMediaUnitsWritten = Uint128{Lo: 49 * 65536}
		if after != want {
			t.Errorf("%s after: %+v, want %+v", c, after, want)
		}
	}

	// vendors use C0h for logs of their own: another GUID gives an error and no numbers
	page := readPage(t, "conv-ocp/after/ocp-smart.bin")
	page[0x1FF] ^= 0xFF
	o, err := ParseOCPSMART(page)
	var notOCP *NotOCPError
	if !errors.Is(err, ErrNotOCP) || !errors.As(err, &notOCP) || o != (OCPSMART{}) || notOCP.GUID[15] != 0x50 {
		t.Errorf("foreign GUID: %+v, %v", o, err)
	}
	if !strings.Contains(err.Error(), "c5af1028eabff2a49c4f6f7cc914d550") {
		t.Errorf("the error does not show the GUID found: %v", err)
	}
	if _, err := ParseOCPSMART(make([]byte, 512)); !errors.Is(err, ErrNotOCP) {
		t.Errorf("an all-zero page: %v, want ErrNotOCP", err)
	}
	if _, err := ParseOCPSMART(page[:256]); err == nil || errors.Is(err, ErrNotOCP) {
		t.Errorf("a short page: %v", err)
	}
}

func TestParseRecordedFDPAndIdentify(t *testing.T) {
	before, err := ParseFDPStats(readPage(t, "fdp/before/fdp-stats.bin"))
	if err != nil || before != (FDPStats{}) {
		t.Errorf("before: %+v, %v", before, err)
	}
	after, err := ParseFDPStats(readPage(t, "fdp/after/fdp-stats.bin"))
	want := Uint128{Lo: 49 * 65536}
	if err != nil || after != (FDPStats{HostBytesWritten: want, MediaBytesWritten: want}) {
		t.Errorf("after: %+v, %v", after, err)
	}
	if _, err := ParseFDPStats(make([]byte, 32)); err == nil {
		t.Error("a 32-byte FDP statistics page parsed")
	}

	for _, tc := range []struct {
		c, serial string
		fdp       bool
	}{{"zns", "zns0", false}, {"conv-ocp", "conv1", false}, {"fdp", "fdp2", true}} {
		ctrl, err := ParseIdentifyController(readPage(t, tc.c+"/after/id-ctrl.bin"))
		if err != nil {
			t.Fatal(err)
		}
		if ctrl.Serial != tc.serial || ctrl.Model != "QEMU NVMe Ctrl" || ctrl.Firmware != "10.0.2" || ctrl.FDPSupported() != tc.fdp ||
			!ctrl.SMARTPerNamespace() || !ctrl.ExtendedLogData() || ctrl.LPA != 7 {
			t.Errorf("%s: %+v (FDP supported %v)", tc.c, ctrl, ctrl.FDPSupported())
		}
	}
	if endgid, err := ParseNamespaceENDGID(readPage(t, "fdp/after/id-ns.bin")); err != nil || endgid != 1 {
		t.Errorf("ENDGID %d, %v; want QEMU's endurance group 1", endgid, err)
	}
	if _, err := ParseIdentifyController(make([]byte, 512)); err == nil {
		t.Error("a 512-byte Identify Controller parsed")
	}
	if _, err := ParseNamespaceENDGID(make([]byte, 103)); err == nil {
		t.Error("a 103-byte Identify Namespace parsed")
	}
	if !FDPEnabled(1) || FDPEnabled(0) || FDPEnabled(2) {
		t.Error("FDPEnabled reads bit 0")
	}
}

func TestUint128(t *testing.T) {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, 5)
	binary.LittleEndian.PutUint64(b[8:], 2)
	u := le128(b)
	if u != (Uint128{Lo: 5, Hi: 2}) || u.String() != "36893488147419103237" || u.Float64() != 2*math.Exp2(64)+5 {
		t.Errorf("%+v = %s = %g", u, u, u.Float64())
	}
	if v, ok := u.Uint64(); ok || v != 5 {
		t.Errorf("Uint64 of a 65-bit value: %d, %v", v, ok)
	}
	if v, ok := (Uint128{Lo: 7}).Uint64(); !ok || v != 7 {
		t.Errorf("Uint64(7) = %d, %v", v, ok)
	}
	// a borrow from the high half
	if d, err := sub("x", Uint128{Lo: math.MaxUint64 - 1}, Uint128{Lo: 3, Hi: 1}); err != nil || d != 5 {
		t.Errorf("sub across 2^64: %d, %v", d, err)
	}
	if _, err := sub("x", Uint128{Hi: 1}, Uint128{Lo: 5}); !errors.Is(err, ErrCounterReset) {
		t.Errorf("going backwards: %v", err)
	}
	if _, err := sub("x", Uint128{}, Uint128{Hi: 1}); err == nil || errors.Is(err, ErrCounterReset) {
		t.Errorf("a 2^64 step: %v", err)
	}
	if !(Uint128{Lo: 9}).Less(Uint128{Hi: 1}) || (Uint128{Hi: 1}).Less(Uint128{Lo: 9}) {
		t.Error("Less compares the high half first")
	}
}

func TestCommandEncoding(t *testing.T) {
	c := getLogPage(LogSMART, BroadcastNSID, 0, SMARTSize)
	// LID 02h, RAE (bit 15), NUMDL 127 (512 bytes = 128 dwords, 0's based)
	if c.opcode != 0x02 || c.nsid != 0xFFFFFFFF || c.cdw10 != 0x007F8002 || c.cdw11 != 0 || len(c.data) != 512 {
		t.Errorf("SMART: %+v", c)
	}
	c = getLogPage(LogFDPStats, 0, 1, FDPStatsSize)
	if c.cdw10 != 0x000F8022 || c.cdw11 != 0x00010000 || len(c.data) != 64 {
		t.Errorf("FDP statistics of endurance group 1: %#x %#x", c.cdw10, c.cdw11)
	}
	// a page over 256 KiB spills NUMD into NUMDU
	c = getLogPage(LogOCPSMART, 0, 0, 1<<20)
	if c.cdw10>>16 != 0xFFFF || c.cdw11 != 0x3 {
		t.Errorf("1 MiB: %#x %#x", c.cdw10, c.cdw11)
	}
	if c := identify(cnsNamespace, 3); c.opcode != 0x06 || c.cdw10 != 0 || c.nsid != 3 || len(c.data) != 4096 {
		t.Errorf("Identify Namespace: %+v", c)
	}
}

func TestClassify(t *testing.T) {
	// ENOTTY means "not NVMe" only for the first command: later, the device is known to be NVMe
	if e := classify("nvme0n1", PageSMART, syscall.EINVAL); errors.Is(e, ErrNotNVMe) || !errors.Is(e, syscall.EINVAL) {
		t.Errorf("EINVAL from Get Log Page: %v", e)
	}
	for _, tc := range []struct {
		err  error
		kind error
		says string
	}{
		{&StatusError{Status: 0x4002}, ErrUnsupported, "not supported by the drive (NVMe status SCT 0 SC 0x02 (DNR)): skipped"},
		{&StatusError{Status: 0x4109}, ErrUnsupported, "SCT 1 SC 0x09"},
		{&StatusError{Status: 0x4129}, ErrFDPDisabled, "FDP is not enabled"},
		{&StatusError{Status: 0x0006}, nil, "SCT 0 SC 0x06"}, // internal error: passed through
		{syscall.EACCES, ErrPermission, permissionDetail},
		{syscall.EPERM, ErrPermission, "needs CAP_SYS_ADMIN"},
		{syscall.ENOTTY, ErrNotNVMe, "no drive counters: nvme0n1 is not an NVMe device"},
		{syscall.EIO, syscall.EIO, "input/output error"},
	} {
		e := classify("nvme0n1", PageIDCtrl, tc.err)
		if tc.kind == nil {
			tc.kind = tc.err
		}
		if !errors.Is(e, tc.kind) || !strings.Contains(e.Error(), tc.says) || !strings.HasPrefix(e.Error(), "nvmelog: nvme0n1") {
			t.Errorf("%v: %v (kind %v); want %v saying %q", tc.err, e, e.Kind, tc.kind, tc.says)
		}
	}
}
