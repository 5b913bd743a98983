package main

import (
	"io/fs"
	"syscall"
)

type fileID struct{ dev, ino uint64 }

// hardLink is the file's identity when it has more than one name, so that its other names become links.
func hardLink(info fs.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}
