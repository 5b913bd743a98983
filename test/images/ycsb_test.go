package images

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoYCSBPin: the bench image's go-ycsb is versions.mk's YCSB_VERSION everywhere it is built (the host build
// of hack/images/go-ycsb.sh through lib.sh, and images/go-build.Dockerfile's default), it goes through the Go
// binaries image into Dockerfile.bench, and the image checks that it runs. It reads files only: the image itself
// is built by the images tier.
func TestGoYCSBPin(t *testing.T) {
	root := repoRoot(t)
	m := regexp.MustCompile(`(?m)^YCSB_VERSION\s*:=\s*(\S+)`).FindStringSubmatch(readFile(t, filepath.Join(root, "versions.mk")))
	if m == nil || !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(m[1]) {
		t.Fatalf("versions.mk: YCSB_VERSION %v, want a module version vX.Y.Z", m)
	}
	pin := m[1]

	lib := exec.Command("env", "-i", "bash", "-c", `source hack/images/lib.sh && echo "$YCSB_VERSION"`)
	lib.Dir = root
	out, err := lib.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != pin {
		t.Errorf("hack/images/lib.sh YCSB_VERSION %q (%v), versions.mk %s", out, err, pin)
	}

	args, _ := parseDockerfile(t, readFile(t, filepath.Join(root, "images/go-build.Dockerfile")))
	if got := args["stage:build:YCSB_VERSION"]; got != pin {
		t.Errorf("images/go-build.Dockerfile: ARG YCSB_VERSION=%q, versions.mk %s", got, pin)
	}
	script := readFile(t, filepath.Join(root, "hack/images/go-ycsb.sh"))
	for _, want := range []string{`go mod download -json "$mod@$YCSB_VERSION"`, "CGO_ENABLED=0", "./cmd/go-ycsb"} {
		if !strings.Contains(script, want) {
			t.Errorf("hack/images/go-ycsb.sh lacks %q", want)
		}
	}
	if s := readFile(t, filepath.Join(root, "hack/images/go-binaries.sh")); !strings.Contains(s, `hack/images/go-ycsb.sh "$ctx"`) ||
		!strings.Contains(s, `--build-arg "YCSB_VERSION=$YCSB_VERSION"`) {
		t.Error("hack/images/go-binaries.sh does not build go-ycsb in both of its ways")
	}
	if s := readFile(t, filepath.Join(root, "images/go-binaries.Dockerfile")); !regexp.MustCompile(`(?m)^COPY .*\bgo-ycsb\b.* /$`).MatchString(s) {
		t.Error("images/go-binaries.Dockerfile does not copy go-ycsb")
	}
	bench := readFile(t, filepath.Join(root, "Dockerfile.bench"))
	for _, want := range []string{"COPY --from=gobin /go-ycsb /usr/local/bin/go-ycsb", "RUN go-ycsb --help"} {
		if !strings.Contains(bench, want) {
			t.Errorf("Dockerfile.bench lacks %q", want)
		}
	}
}
