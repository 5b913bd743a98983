package debugbundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// fakeSource is a cluster in memory: objects in controller-runtime's fake client (behind NoSecrets, as the
// plugin wires it), logs and exec answers by pod/container, and a record of every exec.
type fakeSource struct {
	client.Reader
	events   []corev1.Event
	logs     map[string]string // "pod/container" or "pod/container/previous"
	logErr   error             // for every log not in logs
	execOut  map[string]string // first word of the command -> stdout
	execErr  map[string]error
	execs    [][]string
	eventErr error
}

func newFake(objs ...client.Object) *fakeSource {
	c := fake.NewClientBuilder().WithScheme(Scheme).WithObjects(objs...).Build()
	return &fakeSource{Reader: NoSecrets(c, Scheme), logs: map[string]string{}, execOut: map[string]string{}, execErr: map[string]error{}}
}

func (f *fakeSource) Events(context.Context, string) ([]corev1.Event, error) {
	return f.events, f.eventErr
}

func (f *fakeSource) Logs(_ context.Context, _, pod, container string, previous bool, _ int64) ([]byte, error) {
	key := pod + "/" + container
	if previous {
		key += "/previous"
	}
	if l, ok := f.logs[key]; ok {
		return []byte(l), nil
	}
	if f.logErr != nil {
		return nil, f.logErr
	}
	return nil, fmt.Errorf("no log %s", key)
}

// exitError is what client-go's exec.CodeExitError looks like to the collector.
type exitError int

func (e exitError) Error() string   { return fmt.Sprintf("command terminated with exit code %d", int(e)) }
func (e exitError) ExitStatus() int { return int(e) }

func (f *fakeSource) Exec(_ context.Context, _, _, _ string, cmd []string) ([]byte, []byte, error) {
	f.execs = append(f.execs, cmd)
	return []byte(f.execOut[cmd[0]]), []byte("stderr of " + cmd[0] + "\n"), f.execErr[cmd[0]]
}

func (f *fakeSource) ServerVersion(context.Context) (string, error) {
	return "v1.36.3 (linux/amd64)", nil
}

// untar reads a bundle: path below the root directory -> content.
func untar(t *testing.T, raw []byte) (string, map[string]string) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	root := ""
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dir, rest, _ := strings.Cut(h.Name, "/")
		if root == "" {
			root = dir
		}
		if dir != root {
			t.Errorf("%s is outside the bundle's root %s", h.Name, root)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[rest] = string(b)
	}
	return root, files
}
