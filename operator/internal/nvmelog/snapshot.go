package nvmelog

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Page names the pages a Snapshot keeps raw, for callers that record them.
type Page string

const (
	PageSMART       Page = "smart"     // log 02h, NSID FFFFFFFFh
	PageOCPSMART    Page = "ocp-smart" // log C0h
	PageFDPStats    Page = "fdp-stats" // log 22h, LSI = endurance group
	PageIDCtrl      Page = "id-ctrl"   // Identify CNS 01h
	PageIDNamespace Page = "id-ns"     // Identify CNS 00h
)

func (p Page) title() string {
	switch p {
	case PageSMART:
		return "SMART log (02h)"
	case PageOCPSMART:
		return "OCP SMART extended log (C0h)"
	case PageFDPStats:
		return "FDP statistics log (22h)"
	case PageIDCtrl:
		return "Identify Controller"
	case PageIDNamespace:
		return "Identify Namespace"
	}
	return string(p)
}

// Snapshot is what was read from one device at one moment. Each of SMART,
// OCP and FDP is nil when its log is absent, and Absent then says why.
type Snapshot struct {
	Device     string // kernel name: nvme0n1 (a namespace) or nvme0 (a controller)
	NSID       uint32 // the namespace's id; 0 for a controller device
	Taken      time.Time
	Controller Controller
	// EnduranceGroup is the namespace's ENDGID (0: none, or a controller device).
	EnduranceGroup uint16
	// FDPEnabled: Get Features FDP said FDP is on for EnduranceGroup.
	FDPEnabled bool

	SMART *SMART
	OCP   *OCPSMART
	FDP   *FDPStats
	// Absent maps each of PageSMART, PageOCPSMART and PageFDPStats that was
	// not read to the reason (an *Error; errors.Is with ErrUnsupported,
	// ErrPermission, ErrNotOCP, ErrFDPDisabled, ...).
	Absent map[Page]error
	// Raw holds every page read, as the drive returned it.
	Raw map[Page][]byte
}

// command is one admin command (NVMe Base 2.0, Figure 91 and the commands'
// own figures); data is the buffer the controller fills.
type command struct {
	opcode       uint8
	nsid         uint32
	cdw10, cdw11 uint32
	data         []byte
}

const (
	opGetLogPage  = 0x02
	opIdentify    = 0x06
	opGetFeatures = 0x0A
	cnsNamespace  = 0x00
	cnsController = 0x01
	fidFDP        = 0x1D
)

// admin sends an admin command to the device; it returns completion dword
// 0, a *StatusError when the controller failed the command, or the
// syscall.Errno of the ioctl.
type admin func(c command) (uint32, error)

// getLogPage builds Get Log Page: CDW10 LID 7:0, RAE 15 (set: reading does
// not clear an asynchronous event another tool waits for), NUMDL 31:16;
// CDW11 NUMDU 15:0, LSI 31:16.
func getLogPage(lid uint8, nsid uint32, lsi uint16, size int) command {
	numd := uint32(size/4 - 1)
	return command{opcode: opGetLogPage, nsid: nsid,
		cdw10: uint32(lid) | 1<<15 | (numd&0xFFFF)<<16,
		cdw11: numd>>16 | uint32(lsi)<<16,
		data:  make([]byte, size)}
}

func identify(cns uint8, nsid uint32) command {
	return command{opcode: opIdentify, nsid: nsid, cdw10: uint32(cns), data: make([]byte, IdentifySize)}
}

// permissionDetail is the reason a user sees when the kernel refused.
const permissionDetail = "needs CAP_SYS_ADMIN: Linux admits admin commands without it only for some Identify pages (nvme_cmd_allowed)"

// classify turns a failed command into an *Error with a reason a user can act on.
func classify(dev string, p Page, err error) *Error {
	e := &Error{Device: dev, Page: p.title(), Kind: err, Detail: err.Error()}
	var st *StatusError
	var errno syscall.Errno
	switch {
	case errors.As(err, &st) && st.fdpDisabled():
		e.Kind, e.Detail = ErrFDPDisabled, "FDP is not enabled on the namespace's endurance group ("+st.Error()+")"
	case errors.As(err, &st) && st.unsupported():
		e.Kind, e.Detail = ErrUnsupported, "not supported by the drive ("+st.Error()+"): skipped"
	case errors.As(err, &errno) && (errno == syscall.EACCES || errno == syscall.EPERM):
		e.Kind, e.Detail = ErrPermission, permissionDetail
	case p == PageIDCtrl && errors.As(err, &errno) && (errno == syscall.ENOTTY || errno == syscall.EINVAL):
		// the first command: another driver's device does not know the ioctl
		e.Kind, e.Page, e.Detail = ErrNotNVMe, "", "no drive counters: "+dev+" is not an NVMe device"
	}
	return e
}

// collect reads a snapshot through send. nsid is the namespace of a block
// device, 0 for a controller device. It fails only when the controller
// cannot be identified; each log that cannot be read is left absent.
func collect(dev string, nsid uint32, send admin, now time.Time) (*Snapshot, error) {
	s := &Snapshot{Device: dev, NSID: nsid, Taken: now, Absent: map[Page]error{}, Raw: map[Page][]byte{}}
	run := func(p Page, c command) (uint32, error) {
		dw0, err := send(c)
		if err != nil {
			return 0, classify(dev, p, err)
		}
		if c.data != nil {
			s.Raw[p] = c.data
		}
		return dw0, nil
	}
	if _, err := run(PageIDCtrl, identify(cnsController, 0)); err != nil {
		if e := err.(*Error); e.Kind == ErrPermission || e.Kind == ErrNotNVMe {
			e.Page = ""
		}
		return nil, err
	}
	ctrl, err := ParseIdentifyController(s.Raw[PageIDCtrl])
	if err != nil {
		return nil, err
	}
	s.Controller = ctrl

	if _, err := run(PageSMART, getLogPage(LogSMART, BroadcastNSID, 0, SMARTSize)); err != nil {
		s.Absent[PageSMART] = err
	} else if v, err := ParseSMART(s.Raw[PageSMART]); err != nil {
		s.Absent[PageSMART] = &Error{Device: dev, Page: PageSMART.title(), Kind: err, Detail: err.Error()}
	} else {
		s.SMART = &v
	}

	if _, err := run(PageOCPSMART, getLogPage(LogOCPSMART, BroadcastNSID, 0, OCPSMARTSize)); err != nil {
		s.Absent[PageOCPSMART] = err
	} else if v, err := ParseOCPSMART(s.Raw[PageOCPSMART]); err != nil {
		kind := err
		if errors.Is(err, ErrNotOCP) {
			kind = ErrNotOCP
		}
		s.Absent[PageOCPSMART] = &Error{Device: dev, Page: PageOCPSMART.title(), Kind: kind, Detail: err.Error()}
	} else {
		s.OCP = &v
	}

	s.Absent[PageFDPStats] = s.readFDP(run)
	if s.Absent[PageFDPStats] == nil {
		delete(s.Absent, PageFDPStats)
	}
	return s, nil
}

// readFDP fills the FDP fields, or returns why it could not.
func (s *Snapshot) readFDP(run func(Page, command) (uint32, error)) error {
	absent := func(kind error, detail string) error {
		return &Error{Device: s.Device, Page: PageFDPStats.title(), Kind: kind, Detail: detail}
	}
	if !s.Controller.FDPSupported() {
		return absent(ErrUnsupported, "the controller does not support Flexible Data Placement (CTRATT bit 19): skipped")
	}
	if s.NSID == 0 {
		return absent(ErrUnsupported, "a controller device names no namespace, so no endurance group: read a namespace (nvme0n1)")
	}
	if _, err := run(PageIDNamespace, identify(cnsNamespace, s.NSID)); err != nil {
		return err
	}
	endgid, err := ParseNamespaceENDGID(s.Raw[PageIDNamespace])
	if err != nil {
		return err
	}
	s.EnduranceGroup = endgid
	if endgid == 0 {
		return absent(ErrFDPDisabled, fmt.Sprintf("namespace %d is in no endurance group (ENDGID 0), so not under FDP", s.NSID))
	}
	dw0, err := run(PageFDPStats, command{opcode: opGetFeatures, cdw10: fidFDP, cdw11: uint32(endgid)})
	if err != nil {
		return err
	}
	if s.FDPEnabled = FDPEnabled(dw0); !s.FDPEnabled {
		return absent(ErrFDPDisabled, fmt.Sprintf("FDP is not enabled on endurance group %d (Get Features 1Dh)", endgid))
	}
	if _, err := run(PageFDPStats, getLogPage(LogFDPStats, 0, endgid, FDPStatsSize)); err != nil {
		return err
	}
	v, err := ParseFDPStats(s.Raw[PageFDPStats])
	if err != nil {
		return err
	}
	s.FDP = &v
	return nil
}

// Reason is why page p is absent from s, nil when it is present.
func (s *Snapshot) Reason(p Page) error { return s.Absent[p] }
