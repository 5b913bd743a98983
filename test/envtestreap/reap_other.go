//go:build !linux

package envtestreap

// Guard does nothing here: the reaper reads /proc, which only Linux has.
func Guard() {}
