package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// rootfs is a small image root: a sticky tmp, a file, a symbolic link and a second name of a file.
func rootfs(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, dir := range []string{"bin", "etc", "tmp", "usr/local/bin"} {
		if err := os.MkdirAll(filepath.Join(d, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(d, "tmp"), 0o1777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(d, name), []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(d, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\n", 0o644)
	write("bin/busybox", "#!/bin/true\n", 0o755)
	if err := os.Symlink("busybox", filepath.Join(d, "bin/sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(d, "bin/busybox"), filepath.Join(d, "usr/local/bin/tool")); err != nil {
		t.Fatal(err)
	}
	return d
}

func readTar(t *testing.T, data []byte) ([]*tar.Header, map[string][]byte) {
	t.Helper()
	var hdrs []*tar.Header
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hdrs, files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		hdrs, files[h.Name] = append(hdrs, h), b
	}
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestArchiveDigestsAndLayer(t *testing.T) {
	root := rootfs(t)
	out := filepath.Join(t.TempDir(), "img.tar")
	if err := write(out, "example.org/tool:v1", root, []byte(`{"Env":["PATH=/bin"],"Cmd":["sh"]}`)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	hdrs, files := readTar(t, data)
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest.json %s: %v", files["manifest.json"], err)
	}
	m := manifest[0]
	cfg := files[m.Config]
	if m.Config != sum(cfg)+".json" || !reflect.DeepEqual(m.RepoTags, []string{"example.org/tool:v1"}) || len(m.Layers) != 1 {
		t.Errorf("manifest %+v: want the config named by its digest and one layer", m)
	}
	layer := files[m.Layers[0]]
	var c struct {
		Config map[string]any
		RootFS struct {
			Type    string
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	if want := "sha256:" + sum(layer); len(c.RootFS.DiffIDs) != 1 || c.RootFS.DiffIDs[0] != want || m.Layers[0] != sum(layer)+"/layer.tar" {
		t.Errorf("diff_ids %v, layer %s; want %s, the layer's digest", c.RootFS.DiffIDs, m.Layers[0], want)
	}
	if c.Config["Cmd"] == nil || c.Config["Env"] == nil {
		t.Errorf("config %v lost the given object", c.Config)
	}
	if hdrs[0].Name != "manifest.json" {
		t.Errorf("first entry %s", hdrs[0].Name)
	}

	lh, lf := readTar(t, layer)
	var names []string
	for _, h := range lh {
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.ModTime.Unix() != 0 {
			t.Errorf("%s: owner %d:%d %q, time %s: want 0:0 at the epoch", h.Name, h.Uid, h.Gid, h.Uname, h.ModTime)
		}
	}
	want := []string{"bin/", "bin/busybox", "bin/sh", "etc/", "etc/passwd", "tmp/", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/tool"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("layer entries %v, want %v (name order)", names, want)
	}
	by := map[string]*tar.Header{}
	for _, h := range lh {
		by[h.Name] = h
	}
	if h := by["tmp/"]; h.Mode&0o1777 != 0o1777 {
		t.Errorf("tmp/ mode %o, want sticky 1777", h.Mode)
	}
	if h := by["bin/sh"]; h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
		t.Errorf("bin/sh: %+v", h)
	}
	if h := by["usr/local/bin/tool"]; h.Typeflag != tar.TypeLink || h.Linkname != "bin/busybox" {
		t.Errorf("the second name of bin/busybox: %+v", h)
	}
	if h := by["bin/busybox"]; h.Mode&0o777 != 0o755 || string(lf["bin/busybox"]) != "#!/bin/true\n" {
		t.Errorf("bin/busybox: mode %o, %q", h.Mode, lf["bin/busybox"])
	}

	// the same root gives the same bytes
	again := filepath.Join(t.TempDir(), "again.tar")
	if err := write(again, "example.org/tool:v1", root, []byte(`{"Env":["PATH=/bin"],"Cmd":["sh"]}`)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again); !bytes.Equal(b, data) {
		t.Error("a second archive of the same root differs")
	}
}

func TestArchiveRefusals(t *testing.T) {
	root := rootfs(t)
	out := filepath.Join(t.TempDir(), "x.tar")
	for want, c := range map[string]struct {
		ref, root, config string
	}{
		"-o, -ref and -rootfs are needed":             {"", root, "{}"},
		`-config "[1]": a JSON object`:                {"r:1", root, "[1]"},
		`-config "{": a JSON object`:                  {"r:1", root, "{"},
		"no such file or directory":                   {"r:1", filepath.Join(root, "nope"), "{}"},
		"is neither a file, a directory nor a symbol": {"r:1", fifoRoot(t), "{}"},
	} {
		if err := write(out, c.ref, c.root, []byte(c.config)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", c, err, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%+v: an archive was left behind", c)
		}
	}
}

func fifoRoot(t *testing.T) string {
	d := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// Docker's own loader reads it: the image, its layer and its config as docker sees them.
func TestDockerLoadsIt(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("needs a Docker Engine (docker info failed) to load the archive")
	}
	out := filepath.Join(t.TempDir(), "img.tar")
	ref := "zns-mysql-test/imagearchive:" + sum([]byte(t.Name()))[:12]
	if err := write(out, ref, rootfs(t), []byte(`{"Env":["PATH=/bin","X=1"],"Cmd":["sh"]}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("docker", "load", "-i", out).CombinedOutput(); err != nil {
		t.Fatalf("docker load: %v\n%s", err, b)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", ref).Run() })
	b, err := exec.Command("docker", "image", "inspect", "-f", "{{json .Config.Env}} {{json .Config.Cmd}} {{len .RootFS.Layers}}", ref).Output()
	if got := strings.TrimSpace(string(b)); err != nil || got != `["PATH=/bin","X=1"] ["sh"] 1` {
		t.Errorf("docker image inspect: %q, %v", got, err)
	}
}
