//go:build linux

package zbd

import (
	"errors"
	"os"
	"testing"
)

// Which zones a reset touches: only sequential zones holding data. Resetting
// a conventional zone is an I/O error on null_blk, and offline or read-only
// zones cannot be reset. (The ioctl itself runs on real devices in the QEMU
// tier: operator/internal/qemuguest, TestZnsdbFormatGarbage.)
func TestNeedsReset(t *testing.T) {
	for _, tc := range []struct {
		typ  ZoneType
		cond ZoneCond
		want bool
	}{
		{ZoneTypeSeqWriteReq, ZoneCondEmpty, false},
		{ZoneTypeSeqWriteReq, ZoneCondImpOpen, true},
		{ZoneTypeSeqWriteReq, ZoneCondExpOpen, true},
		{ZoneTypeSeqWriteReq, ZoneCondClosed, true},
		{ZoneTypeSeqWriteReq, ZoneCondFull, true},
		{ZoneTypeSeqWriteReq, ZoneCondOffline, false},
		{ZoneTypeSeqWriteReq, ZoneCondReadOnly, false},
		{ZoneTypeSeqWritePref, ZoneCondFull, true},
		{ZoneTypeConventional, ZoneCondNotWP, false},
	} {
		if got := needsReset(Zone{Type: tc.typ, Cond: tc.cond}); got != tc.want {
			t.Errorf("%v %v: needsReset = %v", tc.typ, tc.cond, got)
		}
	}
}

func TestOpenExclusiveMissing(t *testing.T) {
	_, err := OpenExclusive("/dev/zns-mysql-no-such-device", false)
	if !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrBusy) {
		t.Errorf("err = %v, want not-exist (and not busy)", err)
	}
}
