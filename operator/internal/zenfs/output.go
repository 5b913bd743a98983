package zenfs

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// mib is zenfs's "MB": it divides bytes by 1024*1024.
const mib = 1 << 20

// Df is what `zenfs df` prints. zenfs rounds each byte count down to whole
// MiB before printing, so the byte fields are multiples of 1 MiB.
type Df struct {
	FreeBytes        int64
	UsedBytes        int64
	ReclaimableBytes int64
	// SpaceAmplificationPercent is 100 * reclaimable / used, computed by
	// zenfs on exact byte counts.
	SpaceAmplificationPercent int64
}

// ParseDf parses the four lines zenfs_tool_df prints with
// "Free: %lu MB\nUsed: %lu MB\nReclaimable: %lu MB\nSpace amplification: %lu%%\n".
// Other lines (library log noise) are ignored; each of the four must appear.
func ParseDf(out string) (Df, error) {
	var df Df
	fields := []struct {
		prefix, suffix string
		dst            *int64
		scale          int64
	}{
		{"Free: ", " MB", &df.FreeBytes, mib},
		{"Used: ", " MB", &df.UsedBytes, mib},
		{"Reclaimable: ", " MB", &df.ReclaimableBytes, mib},
		{"Space amplification: ", "%", &df.SpaceAmplificationPercent, 1},
	}
	found := make([]bool, len(fields))
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		for i, f := range fields {
			num, ok := strings.CutPrefix(line, f.prefix)
			if !ok {
				continue
			}
			num, ok = strings.CutSuffix(num, f.suffix)
			if !ok {
				return Df{}, fmt.Errorf("zenfs df: line %q does not end in %q", line, f.suffix)
			}
			v, err := strconv.ParseInt(num, 10, 64)
			if err != nil || v < 0 || v > (1<<63-1)/f.scale {
				return Df{}, fmt.Errorf("zenfs df: line %q: bad number %q", line, num)
			}
			*f.dst = v * f.scale
			found[i] = true
		}
	}
	for i, ok := range found {
		if !ok {
			return Df{}, fmt.Errorf("zenfs df: no %q line in output %q", strings.TrimSpace(fields[i].prefix), out)
		}
	}
	return df, nil
}

// FileSystem is one line of `zenfs ls-uuid`.
type FileSystem struct {
	UUID   string
	Device string
}

// ParseLsUUID parses zenfs_tool_lsuuid's "%s\t%s\n" lines: the file
// system's UUID, then the kernel name of the device that holds it.
func ParseLsUUID(out string) ([]FileSystem, error) {
	var fss []FileSystem
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		uuid, dev, ok := strings.Cut(line, "\t")
		if !ok || uuid == "" || dev == "" || strings.Contains(dev, "\t") {
			return nil, fmt.Errorf("zenfs ls-uuid: malformed line %q", line)
		}
		fss = append(fss, FileSystem{UUID: uuid, Device: dev})
	}
	return fss, sc.Err()
}

// FindDevice returns the file system on dev, if ls-uuid listed one.
func FindDevice(fss []FileSystem, dev string) (FileSystem, bool) {
	for _, fs := range fss {
		if fs.Device == dev {
			return fs, true
		}
	}
	return FileSystem{}, false
}
