//go:build linux

package zonedmetrics

import (
	"fmt"
	"syscall"
)

type fsSpace struct {
	sizeBytes, availBytes uint64
}

// statFS measures the file system holding dir. Sizes count in f_frsize
// units (the fundamental block size, what df(1) uses), or f_bsize on file
// systems that leave f_frsize 0. Available is f_bavail: what an
// unprivileged mysqld can still write, without root's reserve.
func statFS(dir string) (fsSpace, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fsSpace{}, fmt.Errorf("statfs %s: %w", dir, err)
	}
	unit := uint64(st.Frsize)
	if unit == 0 {
		unit = uint64(st.Bsize)
	}
	return fsSpace{sizeBytes: st.Blocks * unit, availBytes: st.Bavail * unit}, nil
}
