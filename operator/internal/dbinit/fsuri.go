package dbinit

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// FSURIAnnotation is set on a ZenFS database's pod by its readiness helper:
// what the running mysqld says its rocksdb_fs_uri is (an FSURICheck). It
// lives beside the space annotation (v1alpha1.AnnotationZenFSSpace) for the
// same reason: the kubelet reports nothing a running container finds out.
const FSURIAnnotation = "zns-mysql.dev/zenfs-fs-uri"

// FSURIVerdict is what the running server's rocksdb_fs_uri says about where
// MyRocks keeps its data.
type FSURIVerdict string

const (
	// FSURIOnZenFS: rocksdb_fs_uri is the device's zenfs:// URI.
	FSURIOnZenFS FSURIVerdict = "OnZenFS"
	// FSURINotOnZenFS: the server has no rocksdb_fs_uri (its MyRocks lacks
	// ZenFS, so the config's loose-rocksdb-fs-uri was ignored), or another
	// value: MyRocks writes to the small datadir volume instead of the device.
	FSURINotOnZenFS FSURIVerdict = "NotOnZenFS"
	// FSURIUnverified: the helper could not ask the server (no account it
	// could log in with); nothing is concluded.
	FSURIUnverified FSURIVerdict = "Unverified"
)

// FSURICheck is one look at the running server's rocksdb_fs_uri.
type FSURICheck struct {
	// At is when the server was asked.
	At time.Time `json:"at"`
	// Want is the URI the configuration gives (zenfs://dev:<device>).
	Want string `json:"want"`
	// Got is the server's rocksdb_fs_uri; absent when it has no such variable
	// or was not asked.
	Got     *string      `json:"got,omitempty"`
	Verdict FSURIVerdict `json:"verdict"`
	// Message says what the verdict means for a person, and what to do.
	Message string `json:"message"`
}

// ZenFSURI is the FileSystem URI through which MyRocks uses ZenFS on a
// device (the value mycnf gives loose-rocksdb-fs-uri).
func ZenFSURI(device string) string { return "zenfs://dev:" + device }

// JudgeFSURI compares the server's rocksdb_fs_uri with want. got is nil
// when the server has no such system variable. It is the whole decision:
// the value must come from the running server, since a config file only
// says what was asked for, and the `loose-` prefix lets a server that does
// not know the option start without it.
func JudgeFSURI(want string, got *string) (FSURIVerdict, string) {
	const lost = "MyRocks keeps its data on the datadir volume, not on the zoned device"
	switch {
	case got == nil:
		return FSURINotOnZenFS, fmt.Sprintf("mysqld has no rocksdb_fs_uri system variable: its MyRocks is not built "+
			"with ZenFS (or the rocksdb plugin is not loaded), so it ignored loose-rocksdb-fs-uri=%s and %s. Use an "+
			"image whose MyRocks has ZenFS (Percona Server 8.0 from 8.0.26-16 with its ZenFS-enabled MyRocks); "+
			"databases written meanwhile are on the datadir volume", want, lost)
	case *got == want:
		return FSURIOnZenFS, fmt.Sprintf("mysqld runs MyRocks on %s", want)
	case *got == "":
		return FSURINotOnZenFS, fmt.Sprintf("mysqld's rocksdb_fs_uri is empty, not %s: %s. The option did not "+
			"reach the server (check the [mysqld] section of its configuration)", want, lost)
	}
	return FSURINotOnZenFS, fmt.Sprintf("mysqld's rocksdb_fs_uri is %q, not %s: %s", *got, want, lost)
}

// maxFSURIField keeps the annotation small whatever a server answers.
const maxFSURIField = 512

// Encode is the annotation's value.
func (c FSURICheck) Encode() (string, error) {
	c.Message = truncate(c.Message, maxFSURIField)
	if c.Got != nil {
		g := truncate(*c.Got, maxFSURIField)
		c.Got = &g
	}
	b, err := json.Marshal(c)
	return string(b), err
}

// ParseFSURICheck reads an annotation value, refusing what a helper would
// not write: no time, or a verdict it does not know.
func ParseFSURICheck(v string) (FSURICheck, error) {
	var c FSURICheck
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		return FSURICheck{}, fmt.Errorf("zenfs fs-uri annotation: %w", err)
	}
	if c.At.IsZero() {
		return FSURICheck{}, errors.New("zenfs fs-uri annotation: no time")
	}
	switch c.Verdict {
	case FSURIOnZenFS, FSURINotOnZenFS, FSURIUnverified:
	default:
		return FSURICheck{}, fmt.Errorf("zenfs fs-uri annotation: unknown verdict %q", c.Verdict)
	}
	return c, nil
}
