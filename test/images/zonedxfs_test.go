package images

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDatabaseImagesCanMakeZonedXFS: the format Job of a zoned XFS runs in the database image, whose bookworm
// xfsprogs (6.1) cannot make it. Both images carry the pinned sid mkfs.xfs (versions.mk's XFS_USERLAND_*, the
// Dockerfiles' defaults the same) as mkfs.xfs-zoned, which znsdb uses for zoned XFS only; and the built image's
// answers with that version.
func TestDatabaseImagesCanMakeZonedXFS(t *testing.T) {
	root := repoRoot(t)
	versions := readFile(t, filepath.Join(root, "versions.mk"))
	pin := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(\S+)`).FindStringSubmatch(versions)
		if m == nil {
			t.Fatalf("versions.mk: no %s", name)
		}
		return m[1]
	}
	suite, version := pin("XFS_USERLAND_SUITE"), pin("XFS_USERLAND_XFSPROGS_VERSION")
	for _, tc := range []struct{ file, stage string }{
		{"Dockerfile.mariadb", ""},
		{"Dockerfile.percona-zenfs", "runtime"},
	} {
		text := readFile(t, filepath.Join(root, tc.file))
		args, _ := parseDockerfile(t, text)
		if args["stage:zonedxfs:ZONED_XFS_SUITE"] != suite || args["stage:zonedxfs:ZONED_XFSPROGS_VERSION"] != version {
			t.Errorf("%s: stage zonedxfs has suite %q, xfsprogs %q; versions.mk pins %s %s", tc.file,
				args["stage:zonedxfs:ZONED_XFS_SUITE"], args["stage:zonedxfs:ZONED_XFSPROGS_VERSION"], suite, version)
		}
		for _, line := range []string{"COPY --from=zonedxfs /opt/zoned-xfs /opt/zoned-xfs",
			"RUN ln -s /opt/zoned-xfs/bin/mkfs.xfs /usr/local/sbin/mkfs.xfs-zoned"} {
			if !strings.Contains(text, line) {
				t.Errorf("%s lacks %q", tc.file, line)
			}
		}
	}

	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("the built image's mkfs.xfs-zoned: needs docker")
	}
	img := "zns-mysql/mariadb-myrocks:latest"
	if err := exec.Command("docker", "image", "inspect", img).Run(); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("images required (%s=1) but %s is not built", RequireEnv, img)
		}
		t.Skip("the built image's mkfs.xfs-zoned: " + img + " is not built (hack/images/build.sh mariadb)")
	}
	out, err := exec.Command("docker", "run", "--rm", "--entrypoint", "mkfs.xfs-zoned", img, "-V").CombinedOutput()
	want := "mkfs.xfs version " + strings.SplitN(version, "-", 2)[0]
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("%s: mkfs.xfs-zoned -V: %v %q, want %q", img, err, out, want)
	}
	out, err = exec.Command("docker", "run", "--rm", "--entrypoint", "mkfs.xfs", img, "-V").CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "mkfs.xfs version 6.1.") {
		t.Errorf("%s: the conventional mkfs.xfs -V: %v %q, want bookworm's 6.1", img, err, out)
	}
}
