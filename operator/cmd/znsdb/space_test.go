package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// fakeAnnotator records what the helper would set on its pod: the space
// (values) and the rocksdb_fs_uri check (fsURI).
type fakeAnnotator struct {
	values []string
	fsURI  []string
	err    error
}

func (a *fakeAnnotator) Annotate(_ context.Context, key, value string) error {
	if a.err != nil {
		return a.err
	}
	switch key {
	case v1alpha1.AnnotationZenFSSpace:
		a.values = append(a.values, value)
	case dbinit.FSURIAnnotation:
		a.fsURI = append(a.fsURI, value)
	default:
		return errors.New("unexpected annotation " + key)
	}
	return nil
}

// onZenFS is a mysqld whose rocksdb_fs_uri is nullb0's: the space tests are
// about a database that passed that check.
func onZenFS(context.Context, string, string, account) (*string, error) {
	uri := dbinit.ZenFSURI("nullb0")
	return &uri, nil
}

// rootPassword is a container's environment with the root password set.
func rootPassword(k string) string {
	if k == "MYSQL_ROOT_PASSWORD" {
		return "pw"
	}
	return ""
}

func (a *fakeAnnotator) last(t *testing.T) dbinit.Space {
	t.Helper()
	if len(a.values) == 0 {
		t.Fatal("nothing was published")
	}
	s, err := dbinit.ParseSpace(a.values[len(a.values)-1])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// prober runs `znsdb health` the way the kubelet does, with a clock the
// test moves.
type prober struct {
	t      *testing.T
	addr   string
	runner *fakeRunner
	ann    *fakeAnnotator
	now    time.Time
	state  string
}

func newProber(t *testing.T, df reply) *prober {
	return &prober{t: t, addr: tcpServer(t, writes(captured(t))),
		runner: &fakeRunner{replies: map[string]reply{"df": df}}, ann: &fakeAnnotator{},
		now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), state: filepath.Join(t.TempDir(), "zenfs-space.json")}
}

func (p *prober) probe(extra ...string) (code int, stdout, stderr string) {
	p.t.Helper()
	var out, errOut bytes.Buffer
	args := append([]string{"health", "--timeout", "500ms", "--addr", p.addr, "--zenfs-device", "nullb0",
		"--zenfs", "/opt/zenfs", "--zenfs-space-state", p.state}, extra...)
	code = run(context.Background(), args, deps{runner: p.runner, stdout: &out, stderr: &errOut,
		getenv: rootPassword, now: func() time.Time { return p.now }, annotate: p.ann, askFSURI: onZenFS})
	return code, out.String(), errOut.String()
}

func (p *prober) dfRuns() int { return strings.Count(p.runner.argv(), "/opt/zenfs df --zbd=nullb0") }

// The probe runs every 5 s; zenfs df runs at most once a minute, and each
// run is published on the pod.
func TestHealthRefreshesSpaceAtABoundedRate(t *testing.T) {
	p := newProber(t, replay(t, "wa/nullb0-df"))
	start := p.now
	for i := 0; i < 25; i++ { // two minutes of probes
		p.now = start.Add(time.Duration(i) * 5 * time.Second)
		code, stdout, stderr := p.probe()
		if code != exitOK || stderr != "" {
			t.Fatalf("probe %d: exit %d, stderr %q", i, code, stderr)
		}
		wantRuns := i/12 + 1 // at 0 s, 60 s and 120 s
		if got := p.dfRuns(); got != wantRuns {
			t.Fatalf("after the probe at %s: zenfs df ran %d times, want %d", p.now.Sub(start), got, wantRuns)
		}
		if ran := strings.Contains(stdout, "zenfs space refreshed"); ran != (i%12 == 0) {
			t.Errorf("probe at %s: stdout %q", p.now.Sub(start), stdout)
		}
	}
	if len(p.ann.values) != 3 {
		t.Errorf("published %d times, want 3", len(p.ann.values))
	}
	s := p.ann.last(t)
	want := dbinit.Space{At: start.Add(120 * time.Second), FreeBytes: 3659 << 20, UsedBytes: 124 << 20,
		ReclaimableBytes: 35 << 20, SpaceAmplificationPercent: 28}
	if s != want {
		t.Errorf("published %+v, want %+v", s, want)
	}
	// A shorter interval is honoured.
	p.now = p.now.Add(10 * time.Second)
	p.probe("--zenfs-space-interval", "10s")
	if p.dfRuns() != 4 {
		t.Errorf("zenfs df ran %d times with a 10 s interval", p.dfRuns())
	}
}

// df's failure reaches the operator (and never fails the probe), and is not
// retried before the interval is up either.
func TestHealthPublishesDfFailure(t *testing.T) {
	p := newProber(t, replay(t, "followup/B-garbage/03-df"))
	code, _, stderr := p.probe()
	if code != exitOK || !strings.Contains(stderr, "zenfs space not refreshed: zenfs df failed") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	s := p.ann.last(t)
	if s.ErrorReason != string(zenfs.ReasonAborted) || !strings.Contains(s.Error, "std::bad_alloc") || s.FreeBytes != 0 {
		t.Errorf("published %+v", s)
	}
	p.now = p.now.Add(30 * time.Second)
	p.probe()
	if p.dfRuns() != 1 {
		t.Errorf("a failed df was retried within the interval (%d runs)", p.dfRuns())
	}
}

// A helper that cannot publish (no RBAC, no API server) keeps probing, at
// the same bounded rate.
func TestHealthPublishFailure(t *testing.T) {
	p := newProber(t, replay(t, "capture/nullb0/21-df-populated"))
	p.ann.err = errors.New(`patching pod db/x-mysql-0: 403 Forbidden: cannot patch resource "pods"`)
	code, _, stderr := p.probe()
	if code != exitOK || !strings.Contains(stderr, "publishing the ZenFS space") || !strings.Contains(stderr, "403") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	p.now = p.now.Add(5 * time.Second)
	p.probe()
	if p.dfRuns() != 1 {
		t.Errorf("zenfs df ran %d times", p.dfRuns())
	}
}

// No df while mysqld does not answer: the probe fails fast on its own.
func TestHealthUnhealthyRunsNoDf(t *testing.T) {
	p := newProber(t, replay(t, "wa/nullb0-df"))
	p.addr = "127.0.0.1:1"
	if code, _, _ := p.probe(); code != exitRefused || p.dfRuns() != 0 || len(p.ann.values) != 0 {
		t.Errorf("exit %d, df runs %d, published %d", code, p.dfRuns(), len(p.ann.values))
	}
}

// A clock that went back does not silence df for the distance it jumped.
func TestHealthClockWentBack(t *testing.T) {
	p := newProber(t, replay(t, "wa/nullb0-df"))
	p.probe()
	p.now = p.now.Add(-time.Hour)
	p.probe()
	if p.dfRuns() != 2 {
		t.Errorf("zenfs df ran %d times", p.dfRuns())
	}
}

// blockingRunner is a zenfs df that never returns by itself.
type blockingRunner struct{ calls int }

func (b *blockingRunner) Run(ctx context.Context, _ string, _ ...string) (string, string, error) {
	b.calls++
	<-ctx.Done()
	return "", "", ctx.Err()
}

func TestHealthDfTimeout(t *testing.T) {
	p := newProber(t, reply{})
	br := &blockingRunner{}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"health", "--addr", p.addr, "--zenfs-device", "nullb0",
		"--zenfs-space-state", p.state, "--zenfs-df-timeout", "100ms"},
		deps{runner: br, stdout: &out, stderr: &errOut, getenv: rootPassword, annotate: p.ann, askFSURI: onZenFS})
	// The helper's own kill of a df that overran is a timeout, not the OOM killer its SIGKILL would suggest.
	if code != exitOK || br.calls != 1 || !strings.Contains(p.ann.last(t).Error, "did not finish within 100ms") ||
		p.ann.last(t).ErrorReason != string(zenfs.ReasonTimedOut) {
		t.Errorf("exit %d, calls %d, published %+v, stderr %q", code, br.calls, p.ann.values, errOut.String())
	}
}
