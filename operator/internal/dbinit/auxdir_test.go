package dbinit

import (
	"os"
	"path/filepath"
	"testing"
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

func TestPrepareAuxDir(t *testing.T) {
	root := t.TempDir()
	aux := filepath.Join(root, "aux")
	if err := PrepareAuxDir(aux); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(aux); err != nil || !fi.IsDir() {
		t.Fatalf("aux not created: %v", err)
	}
	// What an old ZenFS leaves: its directory tree with LOCK/LOG, our token.
	if err := os.MkdirAll(filepath.Join(aux, ".rocksdb"), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".rocksdb/LOCK", ".rocksdb/LOG", TokenFileName} {
		if err := os.WriteFile(filepath.Join(aux, f), []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	sibling := filepath.Join(root, "keep-me")
	if err := os.WriteFile(sibling, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := PrepareAuxDir(aux); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(aux); len(entries) != 0 {
		t.Errorf("aux dir still holds %v", entries)
	}
	if _, err := os.Stat(sibling); err != nil {
		t.Errorf("a file beside the aux dir was touched: %v", err)
	}
	for _, bad := range []string{"/", "relative/aux", ""} {
		if err := PrepareAuxDir(bad); err == nil {
			t.Errorf("PrepareAuxDir(%q) accepted", bad)
		}
	}
}
