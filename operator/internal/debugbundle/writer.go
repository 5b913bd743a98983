// Package debugbundle builds the tarball that `kubectl zns debug` writes for a bug report: the zns-mysql custom
// resources, the children the operator made, their events, logs, reports and device state, and the versions
// involved. It never reads a Secret (NoSecrets, RefuseSecrets) and scrubs literal credentials out of the pod
// specs it keeps (Scrub). Collection runs through the narrow Source interface, so that it is tested without a
// cluster; the plugin wires a real one.
package debugbundle

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"
)

// Paths inside the bundle, below its root directory. Everything a reader looks for first sits at the top.
const (
	ReadmePath   = "README.txt"
	ErrorsPath   = "errors.txt"
	VersionsPath = "versions.txt"
	EventsPath   = "events.txt"
	EventsYAML   = "events.yaml"
)

// ObjectPath is where an object's YAML goes: objects/<kind>/<name>.yaml (kind in lower case).
func ObjectPath(kind, name string) string {
	return path.Join("objects", strings.ToLower(kind), safe(name)+".yaml")
}

// LogPath is where a container's log goes; previous is the log of the container's last terminated run.
func LogPath(pod, container string, previous bool) string {
	name := safe(container) + ".log"
	if previous {
		name = safe(container) + ".previous.log"
	}
	return path.Join("logs", safe(pod), name)
}

// DatabasePath is a file about one ZNSDatabase that is not an object: its my.cnf, reports, device state.
func DatabasePath(db string, elem ...string) string {
	for i := range elem {
		elem[i] = safe(elem[i])
	}
	return path.Join(append([]string{"databases", safe(db)}, elem...)...)
}

// safe keeps a name from leaving its directory. Kubernetes names cannot hold "/" anyway; this is for a
// bundle built from objects that a fake or a future API let through.
func safe(name string) string {
	name = strings.ReplaceAll(name, "/", "_")
	if name == "" || name == "." || name == ".." {
		return "_" + name
	}
	return name
}

// RootDir is the directory every entry of the tarball is in, so that unpacking two bundles never mixes them.
func RootDir(namespace string, at time.Time) string {
	return "zns-debug-" + safe(namespace) + "-" + at.UTC().Format("20060102T150405Z")
}

// Entry is one file of the bundle, for the index.
type Entry struct {
	Path string
	Size int
	What string
}

// Failure is an item that could not be collected, and why.
type Failure struct {
	Item   string
	Reason string
}

// Writer streams entries into a tar.gz as they are collected, so that logs of many pods never sit in memory
// together. The first write error sticks (later calls do nothing) and Close returns it: a bundle that cannot
// be written is the one failure that aborts.
type Writer struct {
	root    string
	mtime   time.Time
	gz      *gzip.Writer
	tw      *tar.Writer
	entries []Entry
	fails   []Failure
	paths   map[string]bool
	err     error
}

// NewWriter writes a gzip'd tar to out, every entry under root/.
func NewWriter(out io.Writer, root string, mtime time.Time) *Writer {
	gz := gzip.NewWriter(out)
	return &Writer{root: root, mtime: mtime, gz: gz, tw: tar.NewWriter(gz), paths: map[string]bool{}}
}

// Add writes one file. A path given twice keeps the first and records the second as a failure: two objects
// mapping to one path would otherwise make the second overwrite the first when unpacked.
func (w *Writer) Add(p, what string, data []byte) {
	if w.err != nil {
		return
	}
	if w.paths[p] {
		w.Fail(p, "a second entry with this path was left out")
		return
	}
	w.paths[p] = true
	hdr := &tar.Header{Name: path.Join(w.root, p), Mode: 0o644, Size: int64(len(data)), ModTime: w.mtime, Typeflag: tar.TypeReg}
	if err := w.tw.WriteHeader(hdr); err != nil {
		w.err = err
		return
	}
	if _, err := w.tw.Write(data); err != nil {
		w.err = err
		return
	}
	w.entries = append(w.entries, Entry{Path: p, Size: len(data), What: what})
}

// Fail records an item that could not be collected.
func (w *Writer) Fail(item, reason string) {
	w.fails = append(w.fails, Failure{Item: item, Reason: strings.TrimSpace(reason)})
}

// Failf is Fail with the error's text as reason.
func (w *Writer) Failf(err error, format string, args ...any) {
	w.Fail(fmt.Sprintf(format, args...), err.Error())
}

// Items is the number of files written so far; Failures the items that could not be collected.
func (w *Writer) Items() int { return len(w.entries) }

// Failures is what could not be collected so far.
func (w *Writer) Failures() []Failure { return w.fails }

// Close writes errors.txt and README.txt (the index, after header) and ends the tar and gzip streams.
func (w *Writer) Close(header []string) error {
	var errs strings.Builder
	if len(w.fails) == 0 {
		errs.WriteString("Every item was collected.\n")
	}
	for _, f := range w.fails {
		fmt.Fprintf(&errs, "%s: %s\n", f.Item, oneLine(f.Reason))
	}
	w.Add(ErrorsPath, "what could not be collected, and why", []byte(errs.String()))
	w.Add(ReadmePath, "this index", []byte(w.readme(header)))
	if w.err != nil {
		return w.err
	}
	if err := w.tw.Close(); err != nil {
		return err
	}
	return w.gz.Close()
}

func (w *Writer) readme(header []string) string {
	var b strings.Builder
	for _, l := range header {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "\n%s, %s that could not be collected (%s).\n\n", plural(len(w.entries)+1, "file"), plural(len(w.fails), "item"), ErrorsPath)
	entries := append([]Entry{}, w.entries...)
	entries = append(entries, Entry{Path: ReadmePath, What: "this index"})
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	width := 0
	for _, e := range entries {
		width = max(width, len(e.Path))
	}
	for _, e := range entries {
		size := fmt.Sprintf("%d", e.Size)
		if e.Path == ReadmePath {
			size = "-"
		}
		fmt.Fprintf(&b, "%-*s  %9s  %s\n", width, e.Path, size, e.What)
	}
	return b.String()
}

// oneLine keeps errors.txt one item per line: API errors and exec output may span lines.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
