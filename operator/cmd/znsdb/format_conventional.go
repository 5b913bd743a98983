package main

import (
	"errors"
	"fmt"

	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// preflightConventional judges a conventional device for ext4 or xfs from
// sysfs: not zoned, a whole device, big enough. openCheck also opens the
// device, to prove the pod can reach it (format opens it itself). The device
// is returned when it is fit.
func preflightConventional(f deviceFlags, fs zonedfs.Filesystem, devs Devices, openCheck bool) (dbinit.Report, *zbd.Device) {
	var r dbinit.Report
	dev, problems, err := zbd.Preflight(f.sysBlock, f.device)
	if err != nil {
		r.Error = fmt.Sprintf("inspecting %s: %v", f.device, err)
		return r, nil
	}
	if dev == nil {
		// zbd words these for ZenFS; a partition is refused here for reasons of its own.
		for i, p := range problems {
			if p.Code == zbd.CodePartition {
				problems[i].Message = fmt.Sprintf("%s is a partition; storage.device takes a whole device: "+
					"preconditioning writes every block of it and the file system fills it. Name the whole device.", f.device)
			}
		}
		r.Problems = problems
		return r, nil
	}
	r.Device = dev
	if r.Problems = zonedfs.JudgeConventional(fs, *dev); len(r.Problems) > 0 {
		return r, nil
	}
	if openCheck {
		h, err := devs.Open(f.devPath())
		switch {
		case errors.Is(err, zbd.ErrBusy):
			r.Problems = append(r.Problems, zbd.BusyProblem(f.devPath(), err))
			return r, nil
		case err != nil:
			r.Problems = append(r.Problems, zbd.AccessProblem(f.devPath(), err))
			return r, nil
		}
		h.Close()
	}
	return r, dev
}
