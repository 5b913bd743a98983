package nvmelog

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// SMART is the SMART / Health Information log (02h) of NVMe Base 2.0,
// section 5.16.1.3. Offsets in comments.
type SMART struct {
	CriticalWarning   uint8   // 0: bit 0 spare, 1 temperature, 2 reliability, 3 read-only, 4 volatile backup
	TemperatureKelvin uint16  // 1-2: composite temperature
	AvailableSpare    uint8   // 3: percent
	PercentageUsed    uint8   // 5
	DataUnitsRead     Uint128 // 32: units of 1000 x 512 bytes, rounded up
	DataUnitsWritten  Uint128 // 48: likewise; host writes only
	HostReadCommands  Uint128 // 64
	HostWriteCommands Uint128 // 80
	PowerCycles       Uint128 // 112
	PowerOnHours      Uint128 // 128
	UnsafeShutdowns   Uint128 // 144
	MediaErrors       Uint128 // 160
}

// TemperatureCelsius converts the composite temperature (0 when the drive
// reports none).
func (s SMART) TemperatureCelsius() int {
	if s.TemperatureKelvin == 0 {
		return 0
	}
	return int(s.TemperatureKelvin) - 273
}

// ParseSMART parses a SMART / Health Information log page.
func ParseSMART(b []byte) (SMART, error) {
	if len(b) < SMARTSize {
		return SMART{}, fmt.Errorf("nvmelog: SMART log is %d bytes, want %d", len(b), SMARTSize)
	}
	return SMART{
		CriticalWarning:   b[0],
		TemperatureKelvin: binary.LittleEndian.Uint16(b[1:3]),
		AvailableSpare:    b[3],
		PercentageUsed:    b[5],
		DataUnitsRead:     le128(b[32:]),
		DataUnitsWritten:  le128(b[48:]),
		HostReadCommands:  le128(b[64:]),
		HostWriteCommands: le128(b[80:]),
		PowerCycles:       le128(b[112:]),
		PowerOnHours:      le128(b[128:]),
		UnsafeShutdowns:   le128(b[144:]),
		MediaErrors:       le128(b[160:]),
	}, nil
}

// OCPGUID identifies the OCP Datacenter SMART / Health extended log: these
// bytes, in this order, at offset 1F0h of the page (OCP Datacenter NVMe SSD
// Specification, SMART Cloud Attributes log page).
var OCPGUID = [16]byte{0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4, 0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5, 0xAF}

// OCPSMART is the part of the OCP log (C0h) this package uses.
type OCPSMART struct {
	PhysicalMediaUnitsWritten Uint128 // 0: bytes written to the media, per the OCP specification
	PhysicalMediaUnitsRead    Uint128 // 16: bytes read from the media
	LogPageVersion            uint16  // 1EEh
	GUID                      [16]byte
}

// NotOCPError is a page read with log identifier C0h that is not the OCP
// log: vendors use C0h for logs of their own. errors.Is(err, ErrNotOCP).
type NotOCPError struct{ GUID [16]byte }

func (e *NotOCPError) Error() string {
	return fmt.Sprintf("log page C0h is not the OCP SMART extended log: GUID %s, want %s",
		hex.EncodeToString(e.GUID[:]), hex.EncodeToString(OCPGUID[:]))
}

func (e *NotOCPError) Unwrap() error { return ErrNotOCP }

// ParseOCPSMART parses an OCP SMART extended log page. A page whose GUID is
// not OCPGUID yields a *NotOCPError and no numbers.
func ParseOCPSMART(b []byte) (OCPSMART, error) {
	if len(b) < OCPSMARTSize {
		return OCPSMART{}, fmt.Errorf("nvmelog: OCP log is %d bytes, want %d", len(b), OCPSMARTSize)
	}
	var guid [16]byte
	copy(guid[:], b[ocpGUIDOffset:ocpGUIDOffset+16])
	if guid != OCPGUID {
		return OCPSMART{}, &NotOCPError{GUID: guid}
	}
	return OCPSMART{
		PhysicalMediaUnitsWritten: le128(b[0:]),
		PhysicalMediaUnitsRead:    le128(b[16:]),
		LogPageVersion:            binary.LittleEndian.Uint16(b[ocpVersionOffset:]),
		GUID:                      guid,
	}, nil
}

// FDPStats is the FDP Statistics log (22h) of one endurance group (NVMe
// TP4146): byte counters, metadata included.
type FDPStats struct {
	HostBytesWritten  Uint128 // 0: Host Bytes with Metadata Written
	MediaBytesWritten Uint128 // 16: Media Bytes with Metadata Written
	MediaBytesErased  Uint128 // 32
}

// ParseFDPStats parses an FDP Statistics log page.
func ParseFDPStats(b []byte) (FDPStats, error) {
	if len(b) < FDPStatsSize {
		return FDPStats{}, fmt.Errorf("nvmelog: FDP statistics log is %d bytes, want %d", len(b), FDPStatsSize)
	}
	return FDPStats{HostBytesWritten: le128(b[0:]), MediaBytesWritten: le128(b[16:]), MediaBytesErased: le128(b[32:])}, nil
}

// Controller is what Identify Controller (CNS 01h) says that matters here.
type Controller struct {
	Serial, Model, Firmware string
	CTRATT                  uint32 // Controller Attributes (bytes 99:96)
	LPA                     uint8  // Log Page Attributes (byte 261)
}

// FDPSupported is CTRATT bit 19 (Flexible Data Placement Supported).
func (c Controller) FDPSupported() bool { return c.CTRATT&ctrattFDPS != 0 }

// SMARTPerNamespace is LPA bit 0: the SMART log can be read per namespace.
func (c Controller) SMARTPerNamespace() bool { return c.LPA&1 != 0 }

// ExtendedLogData is LPA bit 2: Get Log Page takes offsets and NUMDU.
func (c Controller) ExtendedLogData() bool { return c.LPA&4 != 0 }

// ParseIdentifyController parses an Identify Controller data structure.
func ParseIdentifyController(b []byte) (Controller, error) {
	if len(b) < IdentifySize {
		return Controller{}, fmt.Errorf("nvmelog: Identify Controller is %d bytes, want %d", len(b), IdentifySize)
	}
	text := func(f []byte) string { return strings.TrimRight(string(bytes.TrimRight(f, "\x00")), " ") }
	return Controller{
		Serial:   text(b[4:24]),
		Model:    text(b[24:64]),
		Firmware: text(b[64:72]),
		CTRATT:   binary.LittleEndian.Uint32(b[idCtrlCTRATTOff:]),
		LPA:      b[idCtrlLPAOff],
	}, nil
}

// ParseNamespaceENDGID returns the Endurance Group Identifier (bytes 103:102)
// of an Identify Namespace data structure (CNS 00h); 0 means the namespace
// reports none.
func ParseNamespaceENDGID(b []byte) (uint16, error) {
	if len(b) < IdentifySize {
		return 0, fmt.Errorf("nvmelog: Identify Namespace is %d bytes, want %d", len(b), IdentifySize)
	}
	return binary.LittleEndian.Uint16(b[idNSENDGIDOffset:]), nil
}

// FDPEnabled reads the result (completion dword 0) of Get Features FDP
// (FID 1Dh): bit 0 is FDP Enabled for the endurance group asked about.
func FDPEnabled(cdw0 uint32) bool { return cdw0&fdpFeatureEnabled != 0 }
