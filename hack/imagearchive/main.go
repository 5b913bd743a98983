// Command imagearchive writes a one-layer container image in docker save's format (docker-archive), which both
// `docker load` and containerd's `ctr images import` read, from a directory that is the image's root file
// system: the offline kind node's component images (hack/kind/build-node-image.sh), made without docker.
//
//	imagearchive -o kube-apiserver.tar -ref registry.k8s.io/kube-apiserver:v1.36.0 -rootfs DIR -config '{"Env":[...]}'
//
// The layer is reproducible: entries in name order, owned by 0:0, dated 1970-01-01. Its digest (the config's
// diff_id and the layer's directory) and the config's (its file name) are computed as they are written.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

func main() {
	out := flag.String("o", "", "the archive to write")
	ref := flag.String("ref", "", "the image's name and tag (RepoTags)")
	rootfs := flag.String("rootfs", "", "the directory that is the image's root file system")
	config := flag.String("config", "{}", `the image config's "config" object (Env, Cmd, Entrypoint, User, ...), as JSON`)
	flag.Parse()
	if err := write(*out, *ref, *rootfs, []byte(*config)); err != nil {
		fmt.Fprintln(os.Stderr, "imagearchive:", err)
		os.Exit(1)
	}
}

// epoch is every entry's time: the layer's bytes depend on its files only.
var epoch = time.Unix(0, 0).UTC()

func write(out, ref, rootfs string, config []byte) error {
	switch {
	case out == "" || ref == "" || rootfs == "":
		return errors.New("-o, -ref and -rootfs are needed")
	case !json.Valid(config) || !bytes.HasPrefix(bytes.TrimSpace(config), []byte("{")):
		return fmt.Errorf("-config %q: a JSON object", config)
	}
	layer, err := os.CreateTemp(filepath.Dir(out), ".layer-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(layer.Name())
	defer layer.Close()
	h := sha256.New()
	if err := writeLayer(io.MultiWriter(layer, h), rootfs); err != nil {
		return fmt.Errorf("layer of %s: %w", rootfs, err)
	}
	diffID := hex.EncodeToString(h.Sum(nil))
	cfg, err := imageConfig(config, diffID)
	if err != nil {
		return err
	}
	cfgSum := sha256.Sum256(cfg)
	cfgName := hex.EncodeToString(cfgSum[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{{"Config": cfgName, "RepoTags": []string{ref}, "Layers": []string{diffID + "/layer.tar"}}})
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	add := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add("manifest.json", manifest); err != nil {
		return err
	}
	if err := add(cfgName, cfg); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: diffID + "/", Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
		return err
	}
	size, err := layer.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: diffID + "/layer.tar", Mode: 0o644, Size: size, ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := layer.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.Copy(tw, layer); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// imageConfig is the image's config file (the OCI image config, as docker save writes it) for one layer.
func imageConfig(config []byte, diffID string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.Format(time.RFC3339),
		"config":       json.RawMessage(config),
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + diffID}},
		"history":      []map[string]string{{"created": epoch.Format(time.RFC3339), "created_by": "hack/imagearchive"}},
	})
}

// writeLayer writes rootfs as a tar: directories, regular files, symbolic links and hard links, in name order.
func writeLayer(w io.Writer, rootfs string) error {
	tw := tar.NewWriter(w)
	seen := map[fileID]string{}
	err := filepath.WalkDir(rootfs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(rootfs, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		hdr.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = epoch, time.Time{}, time.Time{}
		hdr.Format = tar.FormatPAX
		if info.Mode().IsRegular() {
			if id, ok := hardLink(info); ok {
				if first, dup := seen[id]; dup {
					hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
					return tw.WriteHeader(hdr)
				}
				seen[id] = hdr.Name
			}
		} else if !info.IsDir() && info.Mode()&fs.ModeSymlink == 0 {
			return fmt.Errorf("%s: %s is neither a file, a directory nor a symbolic link", rel, info.Mode().Type())
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
