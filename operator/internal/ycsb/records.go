package ycsb

import (
	"fmt"
	"strconv"
	"strings"
)

// keyBytes is the length of a key as Args makes them: "user" and the record number padded to keyDigits.
const keyBytes = 4 + keyDigits

// RecordBytes is what one record holds: its key and its fields. It is the logical size the share of capacity is
// counted in; what the engine adds on disk (row headers, indexes, compression, the LSM tree's levels) is the
// engine's, and the verify's measured data size shows it.
func RecordBytes(fieldCount, fieldLength int64) int64 {
	return keyBytes + fieldCount*fieldLength
}

// RecordCount is a count of records, given as a number or as a share of the target's usable capacity.
type RecordCount struct {
	// Records is the count given as a number, 0 for a share.
	Records int64
	// Percent is the share of the usable capacity, 1-100, 0 for a number.
	Percent int
}

// ParseRecordCount reads "1000" or "60%". A share must be a whole percent from 1 to 100: more than the
// capacity cannot be loaded, and 0 is no records.
func ParseRecordCount(s string) (RecordCount, error) {
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(pct)
		if err != nil || n < 1 || n > 100 {
			return RecordCount{}, fmt.Errorf("record count %q: a share of the usable capacity must be a whole percent from 1%% to 100%%", s)
		}
		return RecordCount{Percent: n}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return RecordCount{}, fmt.Errorf("record count %q: want a number of records (>= 1) or a share of the usable capacity such as \"60%%\"", s)
	}
	return RecordCount{Records: n}, nil
}

// Resolve is the number of records for a target whose storage leaves usableBytes for data (0: unknown).
func (rc RecordCount) Resolve(usableBytes, fieldCount, fieldLength int64) (int64, error) {
	if rc.Percent == 0 {
		return rc.Records, nil
	}
	if usableBytes <= 0 {
		return 0, fmt.Errorf("record count %d%% of the usable capacity: the target's usable capacity is not known yet (its status.device or status.filesystem reports none)", rc.Percent)
	}
	per := RecordBytes(fieldCount, fieldLength)
	// usable x percent / 100 / per, without the product overflowing for drives up to 2^63 bytes.
	n := usableBytes/100*int64(rc.Percent)/per + usableBytes%100*int64(rc.Percent)/100/per
	if n < 1 {
		return 0, fmt.Errorf("record count %d%% of %d usable bytes is less than one record of %d bytes", rc.Percent, usableBytes, per)
	}
	return n, nil
}
