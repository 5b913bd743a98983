package zonedfs

import (
	"bufio"
	"fmt"
	"strings"
)

// Probe is what blkid found on a device.
type Probe struct {
	// Type is blkid's TYPE (btrfs, f2fs, ext4, xfs, ...); empty when blkid
	// found no signature.
	Type  string `json:"type,omitempty"`
	UUID  string `json:"uuid,omitempty"`
	Label string `json:"label,omitempty"`
	// Usage is blkid's USAGE: filesystem, raid, crypto, other.
	Usage string `json:"usage,omitempty"`
}

// ProbeCommand asks blkid for the superblocks on the device itself (-p: low
// level, no cache), as KEY=value lines. blkid exits 2 when it finds none.
func ProbeCommand(devPath string) []string {
	return []string{"blkid", "-p", "-o", "export", devPath}
}

// BlkidNothingFound is blkid's exit status when no signature was found.
const BlkidNothingFound = 2

// ParseProbe reads blkid's export output. Values are as blkid prints them:
// it escapes unsafe characters itself.
func ParseProbe(out string) (Probe, error) {
	var p Probe
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return Probe{}, fmt.Errorf("blkid printed %q, not KEY=value", line)
		}
		switch k {
		case "TYPE":
			p.Type = v
		case "UUID":
			p.UUID = v
		case "LABEL":
			p.Label = v
		case "USAGE":
			p.Usage = v
		}
	}
	return p, sc.Err()
}
