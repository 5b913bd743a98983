package benchplan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
)

var t0 = time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)

const uid = types.UID("b-uid")

// waitingBench is a Benchmark in WaitingForTargets since t0, as the reconciler's start leaves it.
func waitingBench(targets ...string) *v1alpha1.Benchmark {
	b := &v1alpha1.Benchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cmp", UID: uid, Generation: 1}}
	b.Spec = v1alpha1.BenchmarkSpec{Workload: "oltp_update_index", Threads: 16, PrepareThreads: 4, TargetTimeoutSeconds: 600}
	for _, name := range targets {
		b.Spec.Targets = append(b.Spec.Targets, v1alpha1.BenchmarkTarget{Name: name})
		b.Status.Targets = append(b.Status.Targets, v1alpha1.TargetStatus{Name: name, State: v1alpha1.TargetPending})
	}
	SetPhase(&b.Status, v1alpha1.BenchmarkWaitingForTargets, "waiting for targets", t0)
	return b
}

// database is a database in the given state: held by this Benchmark or not, Available in a profile or not.
func database(name string, held bool, availableIn v1alpha1.Profile) *v1alpha1.ZNSDatabase {
	db := &v1alpha1.ZNSDatabase{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 3}}
	db.Spec.Engine, db.Spec.Profile = v1alpha1.EngineRocksDB, v1alpha1.ProfileWorkload
	db.Spec.Storage.Volume = &v1alpha1.VolumeSource{}
	db.Status.ObservedGeneration, db.Status.Storage = 3, "volume"
	if held {
		db.Annotations = map[string]string{v1alpha1.AnnotationBenchmark: "cmp", v1alpha1.AnnotationBenchmarkUID: string(uid)}
	}
	status, reason := metav1.ConditionFalse, "Starting"
	if availableIn != "" {
		db.Status.Profile, status, reason = availableIn, metav1.ConditionTrue, "MySQLReady"
	}
	meta.SetStatusCondition(&db.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAvailable, Status: status,
		Reason: reason, Message: "m", ObservedGeneration: 3})
	return db
}

func dbs(list ...*v1alpha1.ZNSDatabase) map[string]*v1alpha1.ZNSDatabase {
	m := map[string]*v1alpha1.ZNSDatabase{}
	for _, db := range list {
		m[db.Name] = db
	}
	return m
}

func reasons(p Plan) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Event.Reason)
	}
	return out
}

// TestTargets walks the WaitingForTargets decision through every way out of it, without an API server.
func TestTargets(t *testing.T) {
	late := t0.Add(601 * time.Second)
	for _, tc := range []struct {
		name     string
		bench    func() *v1alpha1.Benchmark
		obs      TargetsObserved
		phase    v1alpha1.BenchmarkPhase
		ready    string // TargetsReady's reason
		events   []string
		actions  []ActionKind
		requeue  bool
		after    time.Duration
		failed   map[string]string // target -> reason
		messages []string          // in the Failed condition or TargetsReady's message
	}{
		{name: "a target missing: wait, holding nothing",
			obs:   TargetsObserved{Databases: dbs(database("a", true, v1alpha1.ProfileWorkload)), Now: t0.Add(time.Second)},
			phase: v1alpha1.BenchmarkWaitingForTargets, ready: v1alpha1.ReasonTargetsMissing, events: []string{"TargetsMissing"},
			actions: []ActionKind{ReleaseAll}, after: MissingRetry,
			messages: []string{"waiting for ZNSDatabase b in namespace ns: the Benchmark runs only with all 2 of its targets, and fails if they do not exist within 600s"}},
		{name: "a target missing past the timeout: the Benchmark fails",
			obs:   TargetsObserved{Databases: dbs(database("a", false, v1alpha1.ProfileWorkload)), Now: late},
			phase: v1alpha1.BenchmarkFailed, ready: v1alpha1.ReasonTargetsMissing,
			events: []string{"TargetsMissing", "TargetNotFound", "Failed"}, actions: []ActionKind{ReleaseAll, Settle},
			failed:   map[string]string{"b": "TargetNotFound"},
			messages: []string{"ZNSDatabase b did not appear in namespace ns within 600s"}},
		{name: "a target held by another Benchmark: wait without a limit, take nothing",
			obs: TargetsObserved{Databases: dbs(database("a", false, v1alpha1.ProfileWorkload), database("b", false, v1alpha1.ProfileWorkload)),
				HeldByOther: map[string]string{"b": "other"}, Now: late},
			phase: v1alpha1.BenchmarkWaitingForTargets, ready: v1alpha1.ReasonTargetsBusy, events: []string{"TargetsBusy"}, after: BusyRetry,
			messages: []string{"ZNSDatabase b is used by Benchmark other: a database serves one Benchmark at a time"}},
		{name: "free but not held yet: take them",
			obs:   TargetsObserved{Databases: dbs(database("a", true, v1alpha1.ProfileWorkload), database("b", false, v1alpha1.ProfileWorkload)), Now: t0},
			phase: v1alpha1.BenchmarkWaitingForTargets, actions: []ActionKind{Acquire}, requeue: true},
		{name: "held, one not Available in the workload profile: wait",
			obs:   TargetsObserved{Databases: dbs(database("a", true, v1alpha1.ProfileWorkload), database("b", true, v1alpha1.ProfileBulkLoad)), Now: t0.Add(time.Minute)},
			phase: v1alpha1.BenchmarkWaitingForTargets, ready: v1alpha1.ReasonTargetsUnavailable, events: []string{"TargetUnavailable"},
			after:    UnavailableRetry,
			messages: []string{"waiting for ZNSDatabase b: MySQLReady in the bulkload profile (m) to be Available in the workload profile (at most 600s)"}},
		{name: "held, one not Available past the timeout: the Benchmark fails",
			obs:   TargetsObserved{Databases: dbs(database("a", true, v1alpha1.ProfileWorkload), database("b", true, "")), Now: late},
			phase: v1alpha1.BenchmarkFailed, ready: v1alpha1.ReasonTargetsUnavailable,
			events: []string{"TargetUnavailable", "TargetUnavailable", "Failed"}, actions: []ActionKind{Settle},
			failed:   map[string]string{"b": "TargetUnavailable"},
			messages: []string{"targets not Available in time: b: Starting (m)"}},
		{name: "ready, but a server allows fewer connections than the runs open: the Benchmark fails before any Job",
			obs: TargetsObserved{Databases: dbs(database("a", true, v1alpha1.ProfileWorkload), database("b", true, v1alpha1.ProfileWorkload)),
				MaxConnections: map[string]int64{"a": 151, "b": 16}, Now: t0},
			phase: v1alpha1.BenchmarkFailed, events: []string{"TooFewConnections", "Failed"}, actions: []ActionKind{Settle},
			failed:   map[string]string{"b": "TooFewConnections"},
			messages: []string{"target b allows 16 connections (max_connections), the Benchmark opens up to 17 (threads 16 + 1 for the runner): raise spec.config max_connections on b or lower threads"}},
		{name: "ready: on to the prepare",
			obs: TargetsObserved{Databases: dbs(database("a", true, v1alpha1.ProfileWorkload), database("b", true, v1alpha1.ProfileWorkload)),
				MaxConnections: map[string]int64{"a": 151, "b": 17}, Now: t0},
			phase: v1alpha1.BenchmarkPreparing, ready: v1alpha1.ReasonTargetsReady, events: []string{"TargetsReady"}, requeue: true,
			messages: []string{"all 2 targets exist, are Available and are held by this Benchmark"}},
		{name: "ready with a precondition: on to it",
			bench: func() *v1alpha1.Benchmark {
				b := waitingBench("a", "b")
				b.Spec.Precondition = &v1alpha1.PreconditionSpec{}
				return b
			},
			obs:   TargetsObserved{Databases: dbs(database("a", true, v1alpha1.ProfileWorkload), database("b", true, v1alpha1.ProfileWorkload)), Now: t0},
			phase: v1alpha1.BenchmarkPreconditioning, ready: v1alpha1.ReasonTargetsReady, events: []string{"TargetsReady"}, requeue: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := waitingBench("a", "b")
			if tc.bench != nil {
				b = tc.bench()
			}
			// A timeout counts from the current reason to wait: the cases past it have waited for that reason.
			if tc.obs.Now.Equal(late) && tc.ready != "" {
				meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionTargetsReady,
					Status: metav1.ConditionFalse, Reason: tc.ready})
				tc.events = tc.events[1:] // the wait was announced when it began
			}
			before := b.DeepCopy()
			tc.obs.Benchmark = b
			p := Targets(tc.obs)
			if p.Status.Phase != tc.phase {
				t.Errorf("phase %s, want %s", p.Status.Phase, tc.phase)
			}
			c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionTargetsReady)
			if tc.ready == "" && c != nil || tc.ready != "" && (c == nil || c.Reason != tc.ready) {
				t.Errorf("TargetsReady %+v, want reason %q", c, tc.ready)
			}
			if got := strings.Join(reasons(p), ","); got != strings.Join(tc.events, ",") {
				t.Errorf("events %s, want %s", got, strings.Join(tc.events, ","))
			}
			var kinds []ActionKind
			for _, a := range p.Actions {
				kinds = append(kinds, a.Kind)
			}
			if got, want := join(kinds), join(tc.actions); got != want {
				t.Errorf("actions %s, want %s", got, want)
			}
			if p.Requeue != tc.requeue || p.RequeueAfter != tc.after {
				t.Errorf("requeue %v after %v, want %v after %v", p.Requeue, p.RequeueAfter, tc.requeue, tc.after)
			}
			for _, ts := range p.Status.Targets {
				if want := tc.failed[ts.Name]; want != "" && (ts.State != v1alpha1.TargetFailed || ts.Reason != want) ||
					want == "" && ts.State == v1alpha1.TargetFailed {
					t.Errorf("target %s %s/%s, want failed %q", ts.Name, ts.State, ts.Reason, want)
				}
			}
			text := ""
			for _, c := range p.Status.Conditions {
				text += c.Message + "\n"
			}
			for _, m := range tc.messages {
				if !strings.Contains(text, m) {
					t.Errorf("no condition says %q:\n%s", m, text)
				}
			}
			if tc.phase == v1alpha1.BenchmarkFailed && (p.Status.CompletedAt == nil || !p.Status.CompletedAt.Time.Equal(tc.obs.Now)) {
				t.Errorf("completedAt %v", p.Status.CompletedAt)
			}
			// Deciding touches nothing it was given.
			if !equality.Semantic.DeepEqual(b, before) {
				t.Errorf("the observed Benchmark was changed: %+v", b.Status)
			}
		})
	}
}

func join[T any](a []T) string {
	var s []string
	for _, x := range a {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

// TestTargetsWaitClock: a new reason to wait restarts the timeout clock and is announced once; the same reason
// again only refreshes the message, so a target that keeps being missing fails once targetTimeoutSeconds have
// passed since it was first found missing, not since the Benchmark started.
func TestTargetsWaitClock(t *testing.T) {
	b := waitingBench("a")
	busy := TargetsObserved{Benchmark: b, Databases: dbs(database("a", false, v1alpha1.ProfileWorkload)),
		HeldByOther: map[string]string{"a": "other"}, Now: t0.Add(time.Hour)}
	p := Targets(busy)
	if p.Status.PhaseSince == nil || !p.Status.PhaseSince.Time.Equal(t0.Add(time.Hour)) || len(p.Events) != 1 {
		t.Fatalf("a new wait: since %v, events %v", p.Status.PhaseSince, reasons(p))
	}
	b.Status = p.Status
	busy.Now = t0.Add(2 * time.Hour)
	if p := Targets(busy); len(p.Events) != 0 || !p.Status.PhaseSince.Time.Equal(t0.Add(time.Hour)) {
		t.Errorf("the same wait again: events %v, since %v", reasons(p), p.Status.PhaseSince)
	}

	missing := TargetsObserved{Benchmark: b, Now: t0.Add(2 * time.Hour)}
	p = Targets(missing)
	if len(p.Events) != 1 || p.Status.Phase != v1alpha1.BenchmarkWaitingForTargets {
		t.Fatalf("missing after busy: %v, phase %s", reasons(p), p.Status.Phase)
	}
	b.Status = p.Status
	missing.Now = t0.Add(2*time.Hour + 599*time.Second)
	if p := Targets(missing); p.Status.Phase != v1alpha1.BenchmarkWaitingForTargets {
		t.Errorf("failed before targetTimeoutSeconds of missing: %s", p.Status.Phase)
	}
	missing.Now = t0.Add(2*time.Hour + 601*time.Second)
	if p := Targets(missing); p.Status.Phase != v1alpha1.BenchmarkFailed {
		t.Errorf("still %s after targetTimeoutSeconds of missing", p.Status.Phase)
	}
}

// TestConnectionsNeeded: the largest thread count a target sees, from the field that sets it: the runs', the
// prepare's (unless there is none) and the write-only rounds' (only on a target that takes part in them).
func TestConnectionsNeeded(t *testing.T) {
	volume := database("v", false, "")
	zoned := &v1alpha1.ZNSDatabase{}
	zoned.Spec.Storage.ZonedDevice = &v1alpha1.ZonedDeviceSource{NodeName: "n1", DeviceName: "nvme0n1"}
	for _, tc := range []struct {
		name string
		spec v1alpha1.BenchmarkSpec
		db   *v1alpha1.ZNSDatabase
		want ConnectionDemand
	}{
		{"threads", v1alpha1.BenchmarkSpec{Threads: 16, PrepareThreads: 4}, volume, ConnectionDemand{"threads", 16}},
		{"the largest of a sweep", v1alpha1.BenchmarkSpec{Threads: 16, ThreadSweep: []int32{8, 512, 64}, PrepareThreads: 4}, volume,
			ConnectionDemand{"threadSweep", 512}},
		{"a prepare with more threads", v1alpha1.BenchmarkSpec{Threads: 16, PrepareThreads: 1000}, volume, ConnectionDemand{"prepareThreads", 1000}},
		{"no prepare", v1alpha1.BenchmarkSpec{Threads: 16, PrepareThreads: 1000, Prepare: ptr.To(false)}, volume, ConnectionDemand{"threads", 16}},
		{"write-only rounds on a volume", v1alpha1.BenchmarkSpec{Threads: 16, PrepareThreads: 4, SteadyState: &v1alpha1.SteadyStateSpec{Threads: 300}}, volume,
			ConnectionDemand{"steadyState.threads", 300}},
		{"no write-only rounds on a zoned target", v1alpha1.BenchmarkSpec{Threads: 16, PrepareThreads: 4, SteadyState: &v1alpha1.SteadyStateSpec{Threads: 300}}, zoned,
			ConnectionDemand{"threads", 16}},
	} {
		b := &v1alpha1.Benchmark{Spec: tc.spec}
		if got := ConnectionsNeeded(b, tc.db); got != tc.want || got.Total() != int64(tc.want.Threads)+1 {
			t.Errorf("%s: %+v (total %d), want %+v", tc.name, got, got.Total(), tc.want)
		}
	}
}

// TestTargetsNameSharedDrives: two namespaces of one NVMe controller are one drive, and each target says who
// else is on it; a null_blk device, or a namespace on another node, is a drive of its own.
func TestTargetsNameSharedDrives(t *testing.T) {
	b := waitingBench("a", "b", "c", "d", "e")
	obs := TargetsObserved{Benchmark: b, Now: t0,
		Databases: dbs(database("a", false, ""), database("b", false, ""), database("c", false, ""), database("d", false, ""), database("e", false, "")),
		Devices: map[string]deviceid.ID{"a": {Node: "n1", Device: "nvme0n1"}, "b": {Node: "n1", Device: "nvme0n2"},
			"c": {Node: "n1", Device: "nullb0"}, "d": {Node: "n2", Device: "nvme0n1"}}}
	p := Targets(obs)
	for _, want := range []struct {
		name, drive string
		shares      []string
	}{
		{"a", "n1/nvme0", []string{"b"}}, {"b", "n1/nvme0", []string{"a"}}, {"c", "n1/nullb0", nil}, {"d", "n2/nvme0", nil}, {"e", "", nil},
	} {
		ts := TargetStatus(&p.Status, want.name)
		if ts.Drive != want.drive || strings.Join(ts.SharesDriveWith, ",") != strings.Join(want.shares, ",") {
			t.Errorf("%s: drive %q shared with %v, want %q with %v", want.name, ts.Drive, ts.SharesDriveWith, want.drive, want.shares)
		}
	}
}
