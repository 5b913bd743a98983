//go:build !linux

package zonedmetrics

import "errors"

type fsSpace struct {
	sizeBytes, availBytes uint64
}

// statFS is implemented for Linux only, where the helper runs.
func statFS(dir string) (fsSpace, error) {
	return fsSpace{}, errors.New("statfs of the datadir needs Linux")
}
