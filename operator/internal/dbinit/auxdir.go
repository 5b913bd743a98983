package dbinit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
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
	if err := fsformat.ValidateToken(token); err != nil {
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

// stashSuffix names the sibling that holds the previous file system's aux
// directory while a format runs. A sibling, not a child: zenfs mkfs needs the
// aux directory empty, and a rename within one filesystem moves it whole.
const stashSuffix = ".znsdb-previous"

// StashPath is where BeginAuxSwap puts the previous aux directory.
func StashPath(auxPath string) string { return auxPath + stashSuffix }

// AuxSwap gives zenfs mkfs the empty aux directory it requires without
// losing the one in place: the old directory (ZenFS's LOCK and LOG files, its
// directory tree, the recorded reformat token) is moved aside and comes back
// unless the format succeeded. A failed mkfs (a busy device, an abort) leaves
// the old file system on the device, and with this its aux directory too.
type AuxSwap struct {
	aux, stash string
	stashed    bool // there was a previous directory to put back
}

// BeginAuxSwap moves auxPath aside (if it exists) and creates it empty. It
// refuses when an earlier swap left its stash behind (RecoverAux decides what
// that one is), and changes nothing when it fails.
func BeginAuxSwap(auxPath string) (*AuxSwap, error) {
	if err := checkAuxPath(auxPath); err != nil {
		return nil, err
	}
	s := &AuxSwap{aux: auxPath, stash: StashPath(auxPath)}
	if _, err := os.Lstat(s.stash); err == nil {
		return nil, fmt.Errorf("%s is left from an interrupted format and holds an earlier aux directory; "+
			"move it away or delete it after checking it, then retry", s.stash)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	switch err := os.Rename(auxPath, s.stash); {
	case err == nil:
		s.stashed = true
	case errors.Is(err, os.ErrNotExist):
	default:
		// A mount point cannot be renamed (EBUSY), nor across filesystems.
		return nil, fmt.Errorf("moving the aux directory aside before formatting: %w", err)
	}
	if err := os.Mkdir(auxPath, 0o750); err != nil {
		if s.stashed {
			if rerr := os.Rename(s.stash, auxPath); rerr != nil {
				return nil, fmt.Errorf("creating the new aux directory: %v; and putting the previous one back "+
					"from %s: %w", err, s.stash, rerr)
			}
		}
		return nil, fmt.Errorf("creating the new aux directory: %w", err)
	}
	return s, nil
}

// Commit discards the previous aux directory: the new file system is there.
func (s *AuxSwap) Commit() error {
	if !s.stashed {
		return nil
	}
	if err := os.RemoveAll(s.stash); err != nil {
		return fmt.Errorf("removing the previous aux directory %s: %w", s.stash, err)
	}
	return nil
}

// Abort puts the previous aux directory back; what the failed format left in
// the new one goes.
func (s *AuxSwap) Abort() error {
	if err := os.RemoveAll(s.aux); err != nil {
		return fmt.Errorf("removing the aux directory of the failed format: %w", err)
	}
	if !s.stashed {
		return nil
	}
	if err := os.Rename(s.stash, s.aux); err != nil {
		return fmt.Errorf("putting the previous aux directory back from %s: %w", s.stash, err)
	}
	return nil
}

// RecoverAux finishes a swap that a crash interrupted, from what is on disk:
// with no stash there is nothing to do; an aux directory that is missing or
// empty means the format never completed (or completed and nothing used it
// yet), so the previous one is put back; one that holds a reformat token means
// it completed (the token is written only after mkfs succeeded), so the stash
// goes. Anything else is left for BeginAuxSwap to refuse. note says what was
// done, for the log; "" when nothing was.
func RecoverAux(auxPath string) (note string, err error) {
	if err := checkAuxPath(auxPath); err != nil {
		return "", err
	}
	stash := StashPath(auxPath)
	if _, err := os.Lstat(stash); errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(auxPath)
	switch {
	case errors.Is(err, os.ErrNotExist) || err == nil && len(entries) == 0:
		if err == nil {
			if err := os.Remove(auxPath); err != nil {
				return "", err
			}
		}
		if err := os.Rename(stash, auxPath); err != nil {
			return "", fmt.Errorf("putting the previous aux directory back from %s: %w", stash, err)
		}
		return fmt.Sprintf("put back the aux directory that an interrupted format had moved to %s", stash), nil
	case err != nil:
		return "", err
	}
	if tok, err := ReadToken(auxPath); err == nil && tok != "" {
		if err := os.RemoveAll(stash); err != nil {
			return "", err
		}
		return fmt.Sprintf("removed %s, left by a format that completed", stash), nil
	}
	return fmt.Sprintf("%s and %s both hold files; left as they are", stash, auxPath), nil
}

func checkAuxPath(auxPath string) error {
	if !filepath.IsAbs(auxPath) || filepath.Clean(auxPath) != auxPath || auxPath == "/" {
		return fmt.Errorf("refusing aux path %q: want an absolute, clean path other than /", auxPath)
	}
	return nil
}
