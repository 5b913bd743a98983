package debugbundle

import (
	"bytes"
	"errors"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestScrubRedactsLiteralCredentialsAndKeepsSecretNames(t *testing.T) {
	ref := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db-root"}, Key: "password"}}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "znsbench",
			Command: []string{"znsbench", "run", "--passes", "3", "--mysql-password", "hunter22", "--api-key=abc", "--threads", "8"},
			Env: []corev1.EnvVar{{Name: "MYSQL_PASSWORD", ValueFrom: ref}, {Name: "GITHUB_TOKEN", Value: "ghp_x"},
				{Name: "MYSQL_PWD", Value: "pw"}, {Name: "PASSES", Value: "3"}, {Name: "AWS_SECRET_ACCESS_KEY", Value: ""}},
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "extra"}}}},
		}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debugger", Env: []corev1.EnvVar{{Name: "root_password", Value: "x"}}}}},
	}
	sts := &appsv1.StatefulSet{}
	sts.Name = "db-mysql"
	sts.Annotations = map[string]string{lastApplied: "{...}", "keep": "me"}
	sts.Spec.Template.Spec = spec
	done := Scrub(sts)
	c := sts.Spec.Template.Spec.Containers[0]
	wantCmd := []string{"znsbench", "run", "--passes", "3", "--mysql-password", Redacted, "--api-key=" + Redacted, "--threads", "8"}
	if !slices.Equal(c.Command, wantCmd) {
		t.Errorf("command %q\nwant    %q", c.Command, wantCmd)
	}
	values := map[string]string{}
	for _, e := range c.Env {
		values[e.Name] = e.Value
	}
	if values["GITHUB_TOKEN"] != Redacted || values["MYSQL_PWD"] != Redacted || values["PASSES"] != "3" || values["AWS_SECRET_ACCESS_KEY"] != "" {
		t.Errorf("env %v", values)
	}
	if c.Env[0].ValueFrom.SecretKeyRef.Name != "db-root" || c.EnvFrom[0].SecretRef.Name != "extra" {
		t.Error("a reference to a Secret lost its name")
	}
	if sts.Spec.Template.Spec.EphemeralContainers[0].Env[0].Value != Redacted {
		t.Error("an ephemeral container's env kept its value")
	}
	if _, ok := sts.Annotations[lastApplied]; ok || sts.Annotations["keep"] != "me" {
		t.Errorf("annotations %v", sts.Annotations)
	}
	if len(done) != 5 || !strings.Contains(strings.Join(done, "\n"), "statefulset/db-mysql container znsbench flag mysql-password") {
		t.Errorf("redactions reported: %q", done)
	}
}

func TestWriterIndexDuplicatesAndWriteErrors(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, "root", t0)
	w.Add("a/x.txt", "first", []byte("1"))
	w.Add("a/x.txt", "second", []byte("2"))
	w.Fail("thing", "line one\n  line two")
	if err := w.Close([]string{"header"}); err != nil {
		t.Fatal(err)
	}
	root, files := untar(t, buf.Bytes())
	if root != "root" || files["a/x.txt"] != "1" {
		t.Errorf("root %q, files %v", root, files)
	}
	if files[ErrorsPath] != "a/x.txt: a second entry with this path was left out\nthing: line one line two\n" {
		t.Errorf("errors.txt %q", files[ErrorsPath])
	}
	for _, want := range []string{`^header\n`, `3 files, 2 items that could not be collected`, `\na/x.txt +1  first\n`} {
		if !regexp.MustCompile(want).MatchString(files[ReadmePath]) {
			t.Errorf("README.txt lacks %q:\n%s", want, files[ReadmePath])
		}
	}

	// A bundle that cannot be written is the one error that stops it.
	w = NewWriter(failingWriter{}, "root", t0)
	w.Add("big", "", bytes.Repeat([]byte("x"), 1<<20))
	if err := w.Close(nil); err == nil {
		t.Error("Close after a failed write: no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestPathsStayInsideTheBundle(t *testing.T) {
	for _, p := range []string{ObjectPath("Pod", ".."), LogPath("a/b", "..", true), DatabasePath("..", "x/y")} {
		if path.Clean(p) != p || path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") || strings.Count(p, "/") > 2 {
			t.Errorf("path %q", p)
		}
	}
}
