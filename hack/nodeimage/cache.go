package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// openCache makes the cache's directories: kind/ (physical path, as the bash builder's `pwd -P` gave it: the
// scratch directories' cleanup compares paths), its parts/ and the image's node/v<k8s>/.
func (b *builder) openCache() error {
	dir := filepath.Join(b.cfg.CacheRoot, "kind")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s", dir)
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return err
	}
	b.kindDir = abs
	b.partsDir = filepath.Join(abs, "parts")
	b.nodeDir = filepath.Join(abs, "node", "v"+b.pins.K8s)
	b.saved = filepath.Join(b.nodeDir, "node-image.tar.gz")
	for _, d := range []string{b.partsDir, b.nodeDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cannot create %s", d)
		}
	}
	return nil
}

// computeRecipe reads the recipe's inputs from the repository: the builder's sources (the program that runs is
// built from them: hack/kind/build-node-image.sh keys its binary by them), hack/imagearchive's, hack/kind/node.
func (b *builder) computeRecipe() (string, error) {
	in := recipeInput{Pins: b.pins, Packages: nodePackages}
	own, _ := filepath.Glob(filepath.Join(b.Root, "hack/nodeimage/*.go"))
	archive, _ := filepath.Glob(filepath.Join(b.Root, "hack/imagearchive/*.go"))
	for _, f := range append(goSources(own), archive...) {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		in.Sources = append(in.Sources, data)
	}
	files, err := readNodeFiles(filepath.Join(b.Root, "hack/kind/node"))
	if err != nil {
		return "", err
	}
	in.NodeFiles = files
	return recipe(in), nil
}

// goSources are the Go files of paths that are not tests, in name order (go_sources of
// hack/lib/go-program.sh).
func goSources(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !strings.HasSuffix(p, "_test.go") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// readNodeFiles are the regular files under dir, by path in byte order (find | LC_ALL=C sort).
func readNodeFiles(dir string) ([]nodeFile, error) {
	var files []nodeFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		mode := uint32(info.Mode().Perm())
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			mode = st.Mode & 0o7777
		}
		files = append(files, nodeFile{Rel: rel, Mode: mode, Data: data})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Rel < files[j].Rel })
	return files, err
}

// imageRecipe is the recipe label of the image in docker, "" when docker does not have it.
func (b *builder) imageRecipe() string {
	c := b.Cmd(nil, "docker", "image", "inspect", "-f", fmt.Sprintf(`{{ index .Config.Labels "%s" }}`, recipeLabel), b.cfg.Image)
	c.Stderr = nil
	out, rc := b.Output(c)
	if rc != 0 {
		return ""
	}
	return strings.TrimSpace(out)
}

// fastPath ends the run early when the image is in docker with this recipe, or the cache's tarball has it.
func (b *builder) fastPath() bool {
	savedRecipe, _ := os.ReadFile(filepath.Join(b.nodeDir, "recipe"))
	switch chooseFastPath(b.recipe, b.imageRecipe(), strings.TrimSpace(string(savedRecipe)), isFile(b.saved), b.cfg.Save) {
	case useImageSave:
		b.Logf("cached in docker: %s (recipe %s)", b.cfg.Image, b.recipe)
		b.saveInBackground()
		return true
	case useImage:
		b.Logf("cached in docker: %s (recipe %s)", b.cfg.Image, b.recipe)
		return true
	case loadTarball:
		t0 := b.Now()
		b.Logf("loading %s", b.saved)
		c := b.Cmd(nil, "docker", "load", "-i", b.saved)
		if b.Heartbeat("docker load (cache)", "", "", func() int { return b.Run(c) }) != 0 {
			b.Logf("WARNING: docker load -i %s failed", b.saved)
			return false
		}
		if b.imageRecipe() != b.recipe {
			b.Logf("WARNING: %s did not hold %s with recipe %s", b.saved, b.cfg.Image, b.recipe)
			return false
		}
		b.Logf("%s", stepTimeLine("docker load (cache)", secs(b.Now().Sub(t0))))
		return true
	}
	return false
}

// saveCommand is the builder's hidden command line of the background save.
const saveCommand = "--background-save"

// saveInBackground saves the image into the cache without making anyone wait for it (~30 s): the image is in
// docker already, and the tarball only matters once docker has lost it. The save is this program again,
// holding the cache's lock (the builder's descriptor, inherited), so that the next build waits for it; the
// tarball is renamed into place only when whole. Without the lock (the fast path), a run that holds it is a
// build or a save already: this one does not save.
func (b *builder) saveInBackground() {
	if b.lock == nil && !b.tryLockCache() {
		b.Logf("the cache is locked by another run (a build, or a save already running): %s is not saved now", b.cfg.Image)
		return
	}
	b.removeStaleSaves()
	b.Logf("saving %s into %s in the background (for when docker has lost it)", b.cfg.Image, b.saved)
	c := exec.Command(b.self[0], append(b.self[1:len(b.self):len(b.self)], saveCommand, b.cfg.Image, b.nodeDir, b.recipe)...)
	c.Dir, c.Env = b.Root, b.Env.List(nil)
	c.ExtraFiles = []*os.File{b.lock}
	if err := c.Start(); err != nil {
		b.Logf("WARNING: cannot start the background save: %v", err)
		return
	}
	// reaped if it ends while the builder still runs; an orphan's parent reaps it otherwise
	go func() { _ = c.Wait() }()
}

// removeStaleSaves removes the temporary tarballs of saves that were killed: only under the lock, which a
// running save holds.
func (b *builder) removeStaleSaves() {
	old, _ := filepath.Glob(filepath.Join(b.nodeDir, ".node-image.*"))
	for _, f := range old {
		_ = os.Remove(f)
	}
}

// runSave is the background save: docker save | pigz -1 (gzip -1 without pigz) into a temporary file, renamed
// into place with the recipe beside it. It ignores the terminal's SIGINT and SIGHUP (as bash's background jobs
// do); SIGTERM removes the temporary file.
func runSave(args []string, stderr io.Writer) int {
	if len(args) != 3 {
		fmt.Fprintf(stderr, "%s: %s IMAGE NODE-DIR RECIPE\n", prefix, saveCommand)
		return 2
	}
	image, nodeDir, rcp := args[0], args[1], args[2]
	// the lock is this process's to hold: a child that outlived it would hold it on
	closeInheritedFiles()
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	tmp, err := os.CreateTemp(nodeDir, ".node-image.")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	gz := "gzip"
	if _, err := exec.LookPath("pigz"); err == nil {
		gz = "pigz"
	}
	save, zip := exec.Command("docker", "save", image), exec.Command(gz, "-1")
	zip.Stdin, _ = save.StdoutPipe()
	zip.Stdout, zip.Stderr, save.Stderr = tmp, stderr, stderr
	var mu sync.Mutex // the commands' processes, which the signal may find started or not
	go func() {
		<-term
		mu.Lock()
		for _, c := range []*exec.Cmd{save, zip} {
			if c.Process != nil {
				_ = c.Process.Kill()
			}
		}
		os.Remove(tmp.Name())
		os.Exit(128 + int(syscall.SIGTERM))
	}()
	mu.Lock()
	err = save.Start()
	if err == nil {
		if err = zip.Start(); err != nil {
			_ = save.Process.Kill()
		}
	}
	mu.Unlock()
	if err == nil {
		err = save.Wait()
		if zerr := zip.Wait(); err == nil {
			err = zerr
		}
	} else if save.Process != nil {
		_ = save.Wait()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(nodeDir, "node-image.tar.gz"))
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(nodeDir, "recipe"), []byte(rcp+"\n"), 0o644)
	}
	if err != nil {
		os.Remove(tmp.Name())
		fmt.Fprintf(stderr, "%s: the save of %s failed: %v\n", prefix, image, err)
		return 1
	}
	return 0
}
