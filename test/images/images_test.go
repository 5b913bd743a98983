// Package images tests the container images (Dockerfile.*, images/, hack/images/).
//
//   - TestDockerfilesKeepTheContract and TestVerifyZenFS read files and run shell scripts: they run
//     everywhere.
//   - TestEntrypointOnHost runs the MySQL images' entrypoint against the host's MariaDB (the Debian packages
//     the real-server tier installs), so its initialisation logic is tested without Docker.
//   - TestSmoke runs hack/images/smoke.sh against the built bench and MariaDB images. It skips, with the
//     reason, when Docker or the images are missing (`make images` or hack/images/build.sh bench mariadb
//     builds them); ZNS_REQUIRE_IMAGES=1 turns that skip into a failure.
package images

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// RequireEnv, set to 1, makes TestSmoke fail instead of skipping when Docker or the images are missing.
const RequireEnv = "ZNS_REQUIRE_IMAGES"

func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stage is one FROM section of a Dockerfile.
type stage struct {
	name  string
	from  string
	lines []string // instructions, continuation lines joined
}

var fromRE = regexp.MustCompile(`(?i)^FROM\s+(\S+)(?:\s+AS\s+(\S+))?`)

// parseDockerfile splits a Dockerfile into its global ARG defaults and its stages.
func parseDockerfile(t testing.TB, text string) (map[string]string, []stage) {
	t.Helper()
	var joined []string
	cur := ""
	for _, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(l)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, `\`) {
			cur += strings.TrimSuffix(trimmed, `\`) + " "
			continue
		}
		joined = append(joined, cur+trimmed)
		cur = ""
	}
	args := map[string]string{}
	var stages []stage
	for _, l := range joined {
		if m := fromRE.FindStringSubmatch(l); m != nil {
			stages = append(stages, stage{name: m[2], from: m[1]})
			continue
		}
		if strings.HasPrefix(l, "ARG ") {
			k, v, ok := strings.Cut(strings.TrimPrefix(l, "ARG "), "=")
			if ok {
				if len(stages) == 0 {
					args[k] = v
				} else if _, set := args["stage:"+stages[len(stages)-1].name+":"+k]; !set {
					args["stage:"+stages[len(stages)-1].name+":"+k] = v
				}
			}
		}
		if len(stages) > 0 {
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, l)
		}
	}
	return args, stages
}

// effective returns the instruction (USER, ENTRYPOINT, CMD) a stage ends with, following FROM <stage> chains.
func effective(stages []stage, name, instruction string) (string, string) {
	byName := map[string]stage{}
	for _, s := range stages {
		if s.name != "" {
			byName[s.name] = s
		}
	}
	s := stages[len(stages)-1]
	if name != "" {
		s = byName[name]
	}
	for {
		for i := len(s.lines) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(s.lines[i], instruction+" "); ok {
				return v, s.name
			}
		}
		parent, ok := byName[s.from]
		if !ok {
			return "", s.name
		}
		s = parent
	}
}

// expand replaces ${NAME} with the ARG default of the stage (or the global one).
func expand(args map[string]string, stageName, v string) string {
	return regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(v, func(m string) string {
		k := m[2 : len(m)-1]
		if d, ok := args["stage:"+stageName+":"+k]; ok {
			return d
		}
		return args[k]
	})
}

func TestDockerfilesKeepTheContract(t *testing.T) {
	root := repoRoot(t)
	entry := `["/usr/local/bin/zns-mysql-entrypoint"]`
	cmd := `["--defaults-file=` + v1alpha1.ConfigDir + "/" + v1alpha1.ConfigFileName + `"]`
	for _, tc := range []struct {
		file, stage, user, entrypoint, cmd string
	}{
		{"Dockerfile.bench", "", "1000:1000", "", ""},
		{"Dockerfile.mariadb", "", "999:999", entry, cmd},
		{"Dockerfile.operator", "", "65532:65532", `["/manager"]`, ""},
		{"Dockerfile.percona-zenfs", "", "999:999", entry, cmd},
		// The from-source alternative starts FROM the runtime stage's image: its own stage sets the user.
		{"images/percona-zenfs-source.Dockerfile", "", "999:999", "", ""},
	} {
		args, stages := parseDockerfile(t, readFile(t, filepath.Join(root, tc.file)))
		if len(stages) == 0 {
			t.Fatalf("%s: no stages", tc.file)
		}
		user, at := effective(stages, tc.stage, "USER")
		if got := expand(args, at, user); got != tc.user {
			t.Errorf("%s stage %q runs as %q, want %q", tc.file, tc.stage, got, tc.user)
		}
		if tc.entrypoint != "" {
			if got, _ := effective(stages, tc.stage, "ENTRYPOINT"); got != tc.entrypoint {
				t.Errorf("%s stage %q: ENTRYPOINT %s, want %s", tc.file, tc.stage, got, tc.entrypoint)
			}
		}
		if tc.cmd != "" {
			if got, _ := effective(stages, tc.stage, "CMD"); got != tc.cmd {
				t.Errorf("%s stage %q: CMD %s, want %s (the operator passes it as the container's args)", tc.file, tc.stage, got, tc.cmd)
			}
		}
		// Every image copies its Go binaries from the same image, on the same base.
		if tc.file != "Dockerfile.operator" && args["BASE_IMAGE"] != "zns-mysql/debian:bookworm" {
			t.Errorf("%s: ARG BASE_IMAGE=%q, want zns-mysql/debian:bookworm (hack/images/lib.sh)", tc.file, args["BASE_IMAGE"])
		}
		if tc.file != "images/percona-zenfs-source.Dockerfile" && args["GO_BINARIES"] != "zns-mysql/go-binaries:dev" {
			t.Errorf("%s: ARG GO_BINARIES=%q, want zns-mysql/go-binaries:dev (hack/images/lib.sh)", tc.file, args["GO_BINARIES"])
		}
	}

	// The Percona releases are versions.mk's pins, the same in the package build's defaults (8.0 and 8.4) and
	// the source build (8.0), and the source build starts from the package build's runtime stage.
	args, _ := parseDockerfile(t, readFile(t, filepath.Join(root, "Dockerfile.percona-zenfs")))
	srcArgs, _ := parseDockerfile(t, readFile(t, filepath.Join(root, "images/percona-zenfs-source.Dockerfile")))
	if srcArgs["RUNTIME_IMAGE"] != "zns-mysql/percona-zenfs-runtime:latest" {
		t.Errorf("images/percona-zenfs-source.Dockerfile: ARG RUNTIME_IMAGE=%q", srcArgs["RUNTIME_IMAGE"])
	}
	versions := readFile(t, filepath.Join(root, "versions.mk"))
	for _, p := range []struct{ pin, series, src string }{
		{"PERCONA_80_VERSION", "8.0", srcArgs["stage:source-build:PERCONA_VERSION"]},
		{"PERCONA_84_VERSION", "8.4", ""},
	} {
		m := regexp.MustCompile(`(?m)^` + p.pin + `\s*:=\s*(\S+)`).FindStringSubmatch(versions)
		pkg := args["stage:percona-zenfs:"+p.pin]
		if m == nil || m[1] != pkg || !regexp.MustCompile(`^`+regexp.QuoteMeta(p.series)+`\.\d+-\d+$`).MatchString(pkg) {
			t.Errorf("%s: versions.mk %v, Dockerfile.percona-zenfs default %q: want one pinned %s.N-M", p.pin, m, pkg, p.series)
		}
		if p.src != "" && p.src != pkg {
			t.Errorf("%s: the source build's PERCONA_VERSION is %q, the packages' %q", p.pin, p.src, pkg)
		}
	}
	if args["stage:percona-zenfs:PERCONA_SERIES"] != "8.0" || args["stage:percona-zenfs:PERCONA_VERSION"] != "" {
		t.Errorf("Dockerfile.percona-zenfs: PERCONA_SERIES=%q PERCONA_VERSION=%q, want 8.0 (ZenFS, the default) and empty",
			args["stage:percona-zenfs:PERCONA_SERIES"], args["stage:percona-zenfs:PERCONA_VERSION"])
	}

	// The names the scripts build are the operator's default images.
	lib := exec.Command("env", "-i", "bash", "-c", `source hack/images/lib.sh && echo "$BASE_IMAGE $GO_BINARIES_IMAGE $PERCONA_IMAGE $PERCONA84_IMAGE $MARIADB_IMAGE $BENCH_IMAGE"`)
	lib.Dir = root
	out, err := lib.CombinedOutput()
	if err != nil {
		t.Fatalf("sourcing hack/images/lib.sh: %v: %s", err, out)
	}
	names := strings.Fields(string(out))
	if names[0] != "zns-mysql/debian:bookworm" || names[1] != "zns-mysql/go-binaries:dev" {
		t.Errorf("lib.sh base and Go binaries images: %v", names[:2])
	}
	manager := readFile(t, filepath.Join(root, "operator/cmd/manager/main.go"))
	for i, flag := range []string{"percona-image", "percona-8.4-image", "mariadb-image", "bench-image"} {
		m := regexp.MustCompile(`"` + flag + `",\s*"([^"]+)"`).FindStringSubmatch(manager)
		if m == nil || m[1] != names[2+i] {
			t.Errorf("manager --%s default %v, hack/images builds %s", flag, m, names[2+i])
		}
	}

	// Every script parses.
	scripts, _ := filepath.Glob(filepath.Join(root, "hack/images/*.sh"))
	more, _ := filepath.Glob(filepath.Join(root, "images/*.sh"))
	for _, s := range append(scripts, more...) {
		if out, err := exec.Command("bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v: %s", s, err, out)
		}
		if fi, err := os.Stat(s); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
	}
}

// TestVerifyZenFS: the check that fails the Percona image's build accepts a plugin with ZenFS's zoned-device
// code and refuses one without (the host's MariaDB MyRocks, where installed, is a real one without ZenFS).
func TestVerifyZenFS(t *testing.T) {
	root := repoRoot(t)
	script := filepath.Join(root, "images/verify-zenfs.sh")
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withZenFS := write("ha_rocksdb_zenfs.so", "x\x00Failed to open zoned block device for read: \x00Current ZBD scheduler is not mq-deadline, set it to mq-deadline.\x00", 0o644)
	withoutZenFS := write("ha_rocksdb_plain.so", "x\x00RocksDB\x00rocksdb_fs_uri\x00", 0o644)
	zenfs := write("zenfs", "#!/bin/sh\necho 'You need to specify a command.' >&2\nexit 1\n", 0o755)
	notZenFS := write("not-zenfs", "#!/bin/sh\necho hello\n", 0o755)
	mysqld := write("mysqld", "#!/bin/sh\necho 'mysqld  Ver 8.0.44-35 for Linux on x86_64 (Percona Server (GPL))'\n", 0o755)

	run := func(args ...string) (int, string) {
		out, err := exec.Command(script, args...).CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	cases := []struct {
		args []string
		code int
		says string
	}{
		{[]string{withZenFS, zenfs, mysqld}, 0, "verify-zenfs: ok: mysqld  Ver 8.0.44-35"},
		{[]string{withoutZenFS, zenfs, mysqld}, 1, "lacks ZenFS"},
		{[]string{withZenFS, filepath.Join(dir, "missing"), mysqld}, 1, "no ZenFS utility"},
		{[]string{withZenFS, notZenFS, mysqld}, 1, "did not answer like ZenFS's utility"},
		{[]string{filepath.Join(dir, "none.so"), zenfs, mysqld}, 1, "MyRocks is not installed"},
	}
	if _, err := os.Stat("/usr/lib/mysql/plugin/ha_rocksdb.so"); err == nil {
		cases = append(cases, struct {
			args []string
			code int
			says string
		}{[]string{"/usr/lib/mysql/plugin/ha_rocksdb.so", zenfs, mysqld}, 1, "lacks ZenFS"})
	}
	for _, tc := range cases {
		code, out := run(tc.args...)
		if code != tc.code || !strings.Contains(out, tc.says) {
			t.Errorf("verify-zenfs.sh %s: exit %d, output %q; want exit %d saying %q", strings.Join(tc.args, " "), code, out, tc.code, tc.says)
		}
	}
}

func TestSmoke(t *testing.T) {
	root := repoRoot(t)
	skip := func(reason string) {
		t.Helper()
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("images required (%s=1) but: %s", RequireEnv, reason)
		}
		t.Skip("image smoke test: " + reason)
	}
	if _, err := exec.LookPath("docker"); err != nil {
		skip("needs docker (not on PATH)")
	}
	if out, err := exec.Command("docker", "info", "-f", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		skip("needs a running Docker daemon: " + firstLine(string(out)))
	}
	for _, img := range []string{"zns-mysql/bench:latest", "zns-mysql/mariadb-myrocks:latest"} {
		if err := exec.Command("docker", "image", "inspect", img).Run(); err != nil {
			skip(img + " is not built (make images, or hack/images/build.sh bench mariadb)")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack/images/smoke.sh"), "--no-build")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		skip(firstLine(out.String()))
	case err != nil:
		t.Fatalf("hack/images/smoke.sh: %v\n%s", err, out.String())
	}
	// The timings and sizes, without the servers' own log lines.
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "images: smoke") || strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "smoke test") || strings.HasPrefix(l, "image sizes") {
			t.Log(l)
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
