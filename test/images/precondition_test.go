package images

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDatabaseImagesCanPrecondition: the format Job of a ZNSDatabase's storage.device runs in the database image
// (`znsdb format --filesystem ext4|xfs --precondition`), so the image must carry fio, pinned to the bench image's
// series, mkfs.ext4, mkfs.xfs and blkid, and its build must fail when one is missing. The Percona image gets them
// in its Debian-only runtime stage, where the from-source build starts too.
func TestDatabaseImagesCanPrecondition(t *testing.T) {
	root := repoRoot(t)
	benchArgs, _ := parseDockerfile(t, readFile(t, filepath.Join(root, "Dockerfile.bench")))
	want := benchArgs["stage::FIO_VERSION"]
	if want == "" {
		t.Fatal("Dockerfile.bench: no ARG FIO_VERSION")
	}
	for _, tc := range []struct{ file, stage string }{
		{"Dockerfile.mariadb", ""},
		{"Dockerfile.percona-zenfs", "runtime"},
	} {
		args, stages := parseDockerfile(t, readFile(t, filepath.Join(root, tc.file)))
		if got := args["stage:"+tc.stage+":FIO_VERSION"]; got != want {
			t.Errorf("%s stage %q: ARG FIO_VERSION=%q, want the bench image's %q", tc.file, tc.stage, got, want)
		}
		var install string
		for _, s := range stages {
			if s.name != tc.stage {
				continue
			}
			for _, l := range s.lines {
				if strings.HasPrefix(l, "RUN ") && strings.Contains(l, `"fio=${FIO_VERSION}"`) {
					install = l
				}
			}
		}
		if install == "" {
			t.Errorf("%s stage %q installs no pinned fio (\"fio=${FIO_VERSION}\" through apt-install.sh)", tc.file, tc.stage)
			continue
		}
		for _, s := range []string{"apt-install.sh", " e2fsprogs ", " xfsprogs ", "mkfs.ext4", "mkfs.xfs", "blkid", "fio --enghelp | grep -qw libaio"} {
			if !strings.Contains(install, s) {
				t.Errorf("%s stage %q: the install step lacks %q:\n%s", tc.file, tc.stage, s, install)
			}
		}
		// The build checks the programs exist: a `command -v` that names them all.
		start := strings.Index(install, "command -v")
		end := strings.Index(install[max(start, 0):], ">/dev/null")
		if start < 0 || end < 0 {
			t.Errorf("%s stage %q: the install step checks no program with `command -v ... >/dev/null`", tc.file, tc.stage)
			continue
		}
		check := install[start : start+end]
		for _, prog := range []string{"fio", "mkfs.ext4", "mkfs.xfs", "blkid"} {
			if !strings.Contains(" "+check+" ", " "+prog+" ") {
				t.Errorf("%s stage %q: `%s` does not check %s", tc.file, tc.stage, check, prog)
			}
		}
	}
}
