//go:build !linux

package nvmelog

// Read needs Linux's NVMe passthrough ioctl; elsewhere it fails with
// ErrUnsupportedOS.
func Read(devDir, name string) (*Snapshot, error) {
	return nil, &Error{Device: name, Kind: ErrUnsupportedOS, Detail: "no drive counters: " + ErrUnsupportedOS.Error()}
}
