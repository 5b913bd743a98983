package dbinit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenRoundTrip(t *testing.T) {
	aux := t.TempDir()
	if got, err := ReadToken(aux); err != nil || got != "" {
		t.Fatalf("no token yet: %q, %v", got, err)
	}
	if got, err := ReadToken(filepath.Join(aux, "missing")); err != nil || got != "" {
		t.Fatalf("missing aux dir: %q, %v", got, err)
	}
	for _, tok := range []string{"first", "second one"} {
		if err := WriteToken(aux, tok); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadToken(aux); err != nil || got != tok {
			t.Fatalf("ReadToken = %q, %v; want %q", got, err, tok)
		}
	}
	entries, _ := os.ReadDir(aux)
	if len(entries) != 1 || entries[0].Name() != TokenFileName {
		t.Errorf("aux dir holds %v, want only the token file", entries)
	}
	if err := WriteToken(aux, "bad\ntoken"); err == nil {
		t.Error("WriteToken accepted a newline")
	}
	if err := WriteToken(filepath.Join(aux, "missing"), "x"); err == nil {
		t.Error("WriteToken into a missing directory succeeded")
	}
}

// oldAux lays out what a ZenFS in use leaves in its aux directory: its
// directory tree with LOCK and LOG files, and the recorded token.
func oldAux(t *testing.T, aux string) map[string]string {
	t.Helper()
	files := map[string]string{".rocksdb/LOCK": "", ".rocksdb/LOG": "old log", "wa_db/LOG": "x", TokenFileName: "t1\n"}
	for name, content := range files {
		p := filepath.Join(aux, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// tree lists every file under dir with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A failed format leaves the previous aux directory exactly as it was.
func TestAuxSwapAbortRestores(t *testing.T) {
	aux := filepath.Join(t.TempDir(), "zenfs-aux")
	want := oldAux(t, aux)
	s, err := BeginAuxSwap(aux)
	if err != nil {
		t.Fatal(err)
	}
	// What zenfs mkfs sees: an empty directory.
	if entries, err := os.ReadDir(aux); err != nil || len(entries) != 0 {
		t.Fatalf("aux during the format: %v, %v; want empty", entries, err)
	}
	if got := tree(t, StashPath(aux)); !cmp.Equal(got, want) {
		t.Errorf("stash holds %v", got)
	}
	// The failed mkfs left something behind.
	if err := os.WriteFile(filepath.Join(aux, "half"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, aux); !cmp.Equal(got, want) {
		t.Errorf("after Abort the aux dir holds %v, want %v", got, want)
	}
	if _, err := os.Stat(StashPath(aux)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stash still there: %v", err)
	}
}

func TestAuxSwapCommit(t *testing.T) {
	aux := filepath.Join(t.TempDir(), "zenfs-aux")
	oldAux(t, aux)
	s, err := BeginAuxSwap(aux)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteToken(aux, "t2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, aux); !cmp.Equal(got, map[string]string{TokenFileName: "t2\n"}) {
		t.Errorf("after Commit the aux dir holds %v", got)
	}
	if _, err := os.Stat(StashPath(aux)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stash still there: %v", err)
	}
	if fi, err := os.Stat(aux); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("new aux dir: %v, %v", fi, err)
	}
}

// The first format: no previous directory; a failure leaves none either.
func TestAuxSwapWithoutPrevious(t *testing.T) {
	aux := filepath.Join(t.TempDir(), "zenfs-aux")
	s, err := BeginAuxSwap(aux)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(aux); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("aux after an aborted first format: %v", err)
	}
	s, err = BeginAuxSwap(aux)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(aux); err != nil || !fi.IsDir() {
		t.Errorf("aux after a first format: %v", err)
	}
}

// Nothing changes when the swap cannot start.
func TestAuxSwapRefusals(t *testing.T) {
	root := t.TempDir()
	aux := filepath.Join(root, "zenfs-aux")
	want := oldAux(t, aux)
	if err := os.Mkdir(StashPath(aux), 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := BeginAuxSwap(aux); err == nil || !strings.Contains(err.Error(), "interrupted format") {
		t.Errorf("BeginAuxSwap over a stash: %v", err)
	}
	if got := tree(t, aux); !cmp.Equal(got, want) {
		t.Errorf("aux changed: %v", got)
	}
	// The parent is not writable: the rename fails, nothing moves.
	if os.Geteuid() != 0 {
		os.Remove(StashPath(aux))
		if err := os.Chmod(root, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(root, 0o755) })
		if _, err := BeginAuxSwap(aux); err == nil {
			t.Error("BeginAuxSwap in a read-only parent succeeded")
		}
		if got := tree(t, aux); !cmp.Equal(got, want) {
			t.Errorf("aux changed: %v", got)
		}
	}
	for _, bad := range []string{"/", "relative/aux", "", "/a/../b"} {
		if _, err := BeginAuxSwap(bad); err == nil {
			t.Errorf("BeginAuxSwap(%q) accepted", bad)
		}
		if _, err := RecoverAux(bad); err == nil {
			t.Errorf("RecoverAux(%q) accepted", bad)
		}
	}
}

// A crash in the middle of a swap is finished at the next start.
func TestRecoverAux(t *testing.T) {
	t.Run("nothing to recover", func(t *testing.T) {
		aux := filepath.Join(t.TempDir(), "zenfs-aux")
		want := oldAux(t, aux)
		if note, err := RecoverAux(aux); note != "" || err != nil {
			t.Errorf("RecoverAux = %q, %v", note, err)
		}
		if got := tree(t, aux); !cmp.Equal(got, want) {
			t.Errorf("aux changed: %v", got)
		}
	})
	t.Run("crashed during mkfs", func(t *testing.T) {
		aux := filepath.Join(t.TempDir(), "zenfs-aux")
		want := oldAux(t, aux)
		if _, err := BeginAuxSwap(aux); err != nil {
			t.Fatal(err)
		}
		note, err := RecoverAux(aux)
		if err != nil || !strings.Contains(note, "put back") {
			t.Errorf("RecoverAux = %q, %v", note, err)
		}
		if got := tree(t, aux); !cmp.Equal(got, want) {
			t.Errorf("aux after recovery %v, want %v", got, want)
		}
	})
	t.Run("crashed in Abort", func(t *testing.T) {
		aux := filepath.Join(t.TempDir(), "zenfs-aux")
		want := oldAux(t, aux)
		if _, err := BeginAuxSwap(aux); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(aux) // Abort's first step, then the crash
		if _, err := RecoverAux(aux); err != nil {
			t.Fatal(err)
		}
		if got := tree(t, aux); !cmp.Equal(got, want) {
			t.Errorf("aux after recovery %v, want %v", got, want)
		}
	})
	t.Run("crashed before Commit", func(t *testing.T) {
		aux := filepath.Join(t.TempDir(), "zenfs-aux")
		oldAux(t, aux)
		if _, err := BeginAuxSwap(aux); err != nil {
			t.Fatal(err)
		}
		if err := WriteToken(aux, "t2"); err != nil {
			t.Fatal(err)
		}
		note, err := RecoverAux(aux)
		if err != nil || !strings.Contains(note, "completed") {
			t.Errorf("RecoverAux = %q, %v", note, err)
		}
		if tok, _ := ReadToken(aux); tok != "t2" {
			t.Errorf("token %q after recovery", tok)
		}
		if _, err := os.Stat(StashPath(aux)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stash still there: %v", err)
		}
	})
	t.Run("both hold files", func(t *testing.T) {
		aux := filepath.Join(t.TempDir(), "zenfs-aux")
		oldAux(t, aux)
		if _, err := BeginAuxSwap(aux); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(aux, "LOG"), []byte("new"), 0o640); err != nil {
			t.Fatal(err)
		}
		note, err := RecoverAux(aux)
		if err != nil || !strings.Contains(note, "left as they are") {
			t.Errorf("RecoverAux = %q, %v", note, err)
		}
		if got := tree(t, StashPath(aux)); got[TokenFileName] != "t1\n" {
			t.Errorf("stash lost its files: %v", got)
		}
	})
}
