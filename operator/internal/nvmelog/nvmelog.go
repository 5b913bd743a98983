// Package nvmelog reads what an NVMe drive says it wrote: the counters of its
// SMART / Health log (02h), of the OCP datacenter SMART extended log (C0h) and
// of the Flexible Data Placement statistics log (22h), so that the benchmark
// can report the drive's half of write amplification next to the host's half
// (package blockstat).
//
// The parsers take raw log pages (little-endian byte slices) and are pure.
// Read (Linux only) takes a Snapshot of one device through the kernel's NVMe
// passthrough ioctl; Delta compares two. Nothing here makes up a zero: a log
// that could not be read is absent from the Snapshot with the reason, and a
// figure that cannot be computed is absent from the Delta.
//
// Units, from the specifications: SMART's Data Units Written counts units of
// 1000 x 512 bytes of host data, rounded up by the drive, so a difference of
// two readings is only good to DataUnitBytes either way; OCP's Physical Media
// Units Written and FDP's Host and Media Bytes with Metadata Written count
// bytes. Emulators do not always follow: see testdata/README.md for what QEMU
// reports.
package nvmelog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
)

// Log identifiers (Get Log Page, CDW10 bits 7:0).
const (
	LogSMART = 0x02 // SMART / Health Information, 512 bytes
	// FDP Statistics, 64 bytes, per endurance group. 22h: 20h is the FDP
	// Configurations log (21h reclaim unit handle usage, 23h FDP events).
	LogFDPStats = 0x22
	LogOCPSMART = 0xC0 // OCP Datacenter SMART / Health extended, 512 bytes
)

// Sizes of the pages this package reads.
const (
	SMARTSize         = 512
	OCPSMARTSize      = 512
	FDPStatsSize      = 64
	IdentifySize      = 4096
	DataUnitBytes     = 1000 * 512 // one SMART data unit
	BroadcastNSID     = 0xFFFFFFFF // the whole controller (SMART)
	ocpGUIDOffset     = 0x1F0
	ocpVersionOffset  = 0x1EE
	idNSENDGIDOffset  = 102
	idCtrlCTRATTOff   = 96
	idCtrlLPAOff      = 261
	ctrattFDPS        = 1 << 19
	fdpFeatureEnabled = 1 << 0
)

// Uint128 is an NVMe 128-bit counter.
type Uint128 struct{ Lo, Hi uint64 }

// le128 reads 16 little-endian bytes.
func le128(b []byte) Uint128 {
	return Uint128{Lo: binary.LittleEndian.Uint64(b[:8]), Hi: binary.LittleEndian.Uint64(b[8:16])}
}

// Big is the value as a big.Int.
func (u Uint128) Big() *big.Int {
	v := new(big.Int).SetUint64(u.Hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(u.Lo))
}

// Float64 is the value rounded to a float64.
func (u Uint128) Float64() float64 { return float64(u.Hi)*math.Exp2(64) + float64(u.Lo) }

// Uint64 is the value when it fits in 64 bits.
func (u Uint128) Uint64() (uint64, bool) { return u.Lo, u.Hi == 0 }

func (u Uint128) String() string { return u.Big().String() }

// Less reports u < v.
func (u Uint128) Less(v Uint128) bool { return u.Hi < v.Hi || u.Hi == v.Hi && u.Lo < v.Lo }

// sub returns after - before as a uint64; a counter that went backwards is
// ErrCounterReset.
func sub(what string, before, after Uint128) (uint64, error) {
	if after.Less(before) {
		return 0, fmt.Errorf("%w: %s %s -> %s", ErrCounterReset, what, before, after)
	}
	lo := after.Lo - before.Lo
	hi := after.Hi - before.Hi
	if after.Lo < before.Lo {
		hi--
	}
	if hi != 0 {
		return 0, fmt.Errorf("nvmelog: %s grew by more than 2^64 between snapshots", what)
	}
	return lo, nil
}

// Reasons a log is absent from a Snapshot, or why Read failed; test them
// with errors.Is. The Error values that wrap them say what to do.
var (
	ErrNotNVMe       = errors.New("not an NVMe device")
	ErrPermission    = errors.New("permission denied")
	ErrUnsupported   = errors.New("log page not supported")
	ErrNotOCP        = errors.New("not the OCP log")
	ErrFDPDisabled   = errors.New("FDP not enabled")
	ErrNoDevice      = errors.New("no such device")
	ErrUnsupportedOS = errors.New("reading NVMe logs needs Linux")
	// ErrCounterReset: a counter went backwards between two snapshots (the
	// drive was reset, power-cycled in an emulator, or replaced), which makes
	// the difference meaningless.
	ErrCounterReset = errors.New("nvmelog: drive counters went backwards (drive reset or replaced between snapshots?)")
)

// Error is a failure to read one device or one of its logs. Kind is one of
// the sentinel errors above (errors.Is works on an Error); the message says
// what a user can do about it.
type Error struct {
	Device string // kernel name, e.g. nvme0n1
	Page   string // "" for the device as a whole, else e.g. "SMART log (02h)"
	Kind   error
	Detail string // the message proper
}

func (e *Error) Error() string {
	where := e.Device
	if e.Page != "" {
		where += ": " + e.Page
	}
	return "nvmelog: " + where + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Kind }

// StatusError is a command the controller completed with an error status:
// Status holds the Status Field (bits 14:0 of completion dword 3 shifted
// right by one, as Linux returns it): SC in 7:0, SCT in 10:8, DNR in 14.
type StatusError struct{ Status uint16 }

func (e *StatusError) Error() string {
	dnr := ""
	if e.Status&0x4000 != 0 {
		dnr = " (DNR)"
	}
	return fmt.Sprintf("NVMe status SCT %d SC %#02x%s", e.SCT(), e.SC(), dnr)
}

// SCT is the Status Code Type, SC the Status Code.
func (e *StatusError) SCT() uint8 { return uint8(e.Status>>8) & 0x7 }
func (e *StatusError) SC() uint8  { return uint8(e.Status) }

// Status codes this package tells apart.
const (
	sctGeneric         = 0
	sctCommandSpecific = 1
	scInvalidOpcode    = 0x01
	scInvalidField     = 0x02
	scInvalidNamespace = 0x0B
	scInvalidLogPage   = 0x09 // command specific
	scFDPDisabled      = 0x29 // command specific
)

func (e *StatusError) unsupported() bool {
	switch {
	case e.SCT() == sctGeneric && (e.SC() == scInvalidField || e.SC() == scInvalidOpcode || e.SC() == scInvalidNamespace):
		return true
	case e.SCT() == sctCommandSpecific && e.SC() == scInvalidLogPage:
		return true
	}
	return false
}

func (e *StatusError) fdpDisabled() bool {
	return e.SCT() == sctCommandSpecific && e.SC() == scFDPDisabled
}
