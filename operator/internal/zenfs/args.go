// Package zenfs builds command lines for the zenfs utility, parses what it
// prints, and recognises a ZenFS superblock on a zoned device.
//
// The formats follow util/zenfs.cc and fs/fs_zenfs.cc of
// github.com/westerndigitalcorporation/zenfs.
package zenfs

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
)

// DefaultBinary is where the Percona ZenFS image installs the utility.
const DefaultBinary = "/usr/bin/zenfs"

// maxAuxPathLen: ZenFS::MkFS refuses an aux path of 256 bytes or more after
// it appends a trailing "/", and stores it in a 256-byte superblock field.
const maxAuxPathLen = 254

// ValidateAuxPath accepts an absolute, clean directory path other than "/".
// ZenFS keeps the path in its superblock and resolves LOCK/LOG files against
// it, so a relative path would depend on the working directory of mysqld.
func ValidateAuxPath(p string) error {
	switch {
	case !path.IsAbs(p):
		return fmt.Errorf("aux path %q is not absolute", p)
	case path.Clean(p) != p:
		return fmt.Errorf("aux path %q is not clean (want %q)", p, path.Clean(p))
	case p == "/":
		return fmt.Errorf("aux path must be a directory of its own, not /")
	case len(p) > maxAuxPathLen:
		return fmt.Errorf("aux path %q is %d bytes; ZenFS takes at most %d", p, len(p), maxAuxPathLen)
	case strings.ContainsAny(p, "\x00\n"):
		return fmt.Errorf("aux path %q contains a NUL or newline", p)
	}
	return nil
}

// MkfsArgs returns the arguments (without the binary) of
// `zenfs mkfs --zbd=<dev> --aux_path=<dir> --finish_threshold=<n> [--force]`.
// finishThreshold is a percentage: ZenFS finishes a zone once less than that
// share of it is left.
func MkfsArgs(dev, auxPath string, finishThreshold int, force bool) ([]string, error) {
	if err := zbd.ValidateName(dev); err != nil {
		return nil, err
	}
	if err := ValidateAuxPath(auxPath); err != nil {
		return nil, err
	}
	if finishThreshold < 0 || finishThreshold > 100 {
		return nil, fmt.Errorf("finish threshold %d is not a percentage (0-100)", finishThreshold)
	}
	args := []string{"mkfs", "--zbd=" + dev, "--aux_path=" + auxPath,
		"--finish_threshold=" + strconv.Itoa(finishThreshold)}
	if force {
		args = append(args, "--force")
	}
	return args, nil
}

// DfArgs returns the arguments of `zenfs df --zbd=<dev>`.
func DfArgs(dev string) ([]string, error) {
	if err := zbd.ValidateName(dev); err != nil {
		return nil, err
	}
	return []string{"df", "--zbd=" + dev}, nil
}

// LsUUIDArgs returns the arguments of `zenfs ls-uuid`, which lists every
// ZenFS file system on the host's zoned devices.
func LsUUIDArgs() []string {
	return []string{"ls-uuid"}
}

// ListArgs returns the arguments of `zenfs list --zbd=<dev> --path=<path>`.
// The path is inside ZenFS ("/" or ".rocksdb"). An empty one is refused: the
// captured zenfs (v2.1.0-65) exits 0 on `--path=`, but its code reads the
// path's last character, which is undefined for an empty string.
func ListArgs(dev, p string) ([]string, error) {
	if err := zbd.ValidateName(dev); err != nil {
		return nil, err
	}
	if p == "" || strings.ContainsAny(p, "\x00\n") {
		return nil, fmt.Errorf("zenfs path %q: want a non-empty path without NUL or newline", p)
	}
	return []string{"list", "--zbd=" + dev, "--path=" + p}, nil
}
