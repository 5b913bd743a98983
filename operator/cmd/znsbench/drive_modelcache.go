package main

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/zns-mysql/zns-mysql/operator/internal/ftl"
)

// modelCache keeps settled models on the node, so that a Benchmark's later phases (and later Benchmarks) of
// the same drive start from the model its first phase settled instead of settling it again: the settled state
// depends only on the geometry, the over-provisioning, modelSeed and this program's code, and every phase
// settles it identically (in make test's zoned flow, with the emulated node busy, the two models of a 2 GiB
// volume took 44 s and 96 s to settle; a real drive's, 8M mapping units, 12-16 CPU-s each). Entries live in a
// directory named after this build (its Go build ID), so a new image never reads what an older one settled;
// the other builds' directories are removed when an entry is written.
type modelCache struct {
	root  string
	build string // this build's directory under root
}

func (c *modelCache) dir() string { return filepath.Join(c.root, c.build) }

// settled is what the report says of a model's own preconditioning, kept beside its snapshot.
type settled struct {
	Rounds int    `json:"rounds"`
	Steady bool   `json:"steady"`
	Reason string `json:"reason"`
}

// buildDir names a build's directory: 16 hex digits of its build ID's SHA-256.
var buildDir = regexp.MustCompile(`^[0-9a-f]{16}$`)

// openModelCache uses root for this executable's build; "" and a reason when it cannot be used.
func openModelCache(root string) (*modelCache, string) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "this program's path is unknown: " + err.Error()
	}
	id, err := goBuildID(exe)
	if err != nil {
		return nil, err.Error()
	}
	sum := sha256.Sum256(id)
	build := hex.EncodeToString(sum[:8])
	return &modelCache{root: root, build: build}, ""
}

// goBuildID is the Go build ID note of an ELF executable: it changes with any change to the code built.
func goBuildID(exe string) ([]byte, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, fmt.Errorf("the build ID of %s: %w", exe, err)
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return nil, fmt.Errorf("%s has no Go build ID note", exe)
	}
	b, err := s.Data()
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("the build ID of %s: %v", exe, err)
	}
	return b, nil
}

// path is a model's entry: the geometry, the over-provisioning and the seed, as the file's name.
func (c *modelCache) path(cfg ftl.Config, op int) string {
	return filepath.Join(c.dir(), fmt.Sprintf("ftl-%d-%d-%d-op%d-seed%x.model", cfg.LogicalBytes, cfg.PageBytes, cfg.PagesPerBlock, op, modelSeed))
}

// load reads a model settled before; a missing entry is no error, a damaged one is (the caller settles anew).
func (c *modelCache) load(cfg ftl.Config, op int) (*ftl.Model, settled, error) {
	var s settled
	f, err := os.Open(c.path(cfg, op))
	if err != nil {
		return nil, s, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, s, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if err := json.Unmarshal(line, &s); err != nil {
		return nil, s, fmt.Errorf("%s: %w", f.Name(), err)
	}
	m, err := ftl.ReadSnapshot(r, cfg)
	if err != nil {
		return nil, s, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return m, s, nil
}

// store writes a settled model's entry whole or not at all (a rename), and removes other builds' entries.
func (c *modelCache) store(cfg ftl.Config, op int, m *ftl.Model, s settled) error {
	if err := os.MkdirAll(c.dir(), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.dir(), ".writing-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	head, _ := json.Marshal(s)
	w := bufio.NewWriter(tmp)
	w.Write(append(head, '\n'))
	err = errors.Join(m.WriteSnapshot(w), w.Flush(), tmp.Close())
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), c.path(cfg, op)); err != nil {
		return err
	}
	entries, err := os.ReadDir(c.root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != c.build && buildDir.MatchString(e.Name()) {
			err = errors.Join(err, os.RemoveAll(filepath.Join(c.root, e.Name())))
		}
	}
	return err
}
