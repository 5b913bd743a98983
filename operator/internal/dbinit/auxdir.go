package dbinit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TokenFileName is the file in the aux directory that holds the last
// reformat token a successful format applied. It lives beside ZenFS's own
// LOCK and LOG files, so it is lost exactly when they are.
const TokenFileName = ".znsdb-reformat-token"

// ReadToken returns the recorded token, "" if none was recorded.
func ReadToken(auxPath string) (string, error) {
	b, err := os.ReadFile(filepath.Join(auxPath, TokenFileName))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// WriteToken records token, replacing the file atomically so a crash leaves
// either the old token or the new one.
func WriteToken(auxPath, token string) error {
	if err := ValidateToken(token); err != nil {
		return err
	}
	f, err := os.CreateTemp(auxPath, TokenFileName+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(token + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(auxPath, TokenFileName))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("recording reformat token: %w", err)
	}
	return nil
}

// PrepareAuxDir makes auxPath an existing, empty directory, as zenfs mkfs
// requires ("Aux directory ... is not empty"). Called only when the device
// is about to be formatted: what the directory holds (ZenFS's LOCK and LOG
// files, its directory tree, the recorded token) belongs to the file system
// being replaced. The directory itself stays, since it is often a mount point.
func PrepareAuxDir(auxPath string) error {
	if !filepath.IsAbs(auxPath) || filepath.Clean(auxPath) == "/" {
		return fmt.Errorf("refusing to empty aux path %q", auxPath)
	}
	if err := os.MkdirAll(auxPath, 0o750); err != nil {
		return err
	}
	entries, err := os.ReadDir(auxPath)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(auxPath, e.Name())); err != nil {
			return fmt.Errorf("emptying aux directory: %w", err)
		}
	}
	return nil
}
