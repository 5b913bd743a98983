package benchplan

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// inPhase is a Benchmark of one target "a" in phase, since t0, with the target in state.
func inPhase(phase v1alpha1.BenchmarkPhase, state v1alpha1.TargetState) *v1alpha1.Benchmark {
	b := waitingBench("a")
	b.Spec.Tables, b.Spec.TableSize = 2, 1000
	SetPhase(&b.Status, phase, string(phase), t0)
	b.Status.Targets[0].State = state
	return b
}

// leased is a database held by the Benchmark whose lease names profile, Available in availableIn ("" for not).
func leased(profile, availableIn v1alpha1.Profile) *v1alpha1.ZNSDatabase {
	db := database("a", true, availableIn)
	db.Annotations[v1alpha1.AnnotationBenchmarkProfile] = string(profile)
	return db
}

func jobs(phase string, j Job) map[JobKey]Job {
	return map[JobKey]Job{{Phase: phase, Target: "a"}: j}
}

func done(sum benchresult.Summary) Job { return Job{Exists: true, Done: true, Summary: sum} }

var ok = benchresult.Summary{OK: true}

type want struct {
	phase   v1alpha1.BenchmarkPhase
	state   v1alpha1.TargetState
	reason  string // the target's failure reason
	actions []string
	events  []string
	after   time.Duration
	requeue bool
	check   func(t *testing.T, p Plan)
}

func (w want) verify(t *testing.T, b *v1alpha1.Benchmark, p Plan) {
	t.Helper()
	if p.Status.Phase != w.phase {
		t.Errorf("phase %s, want %s", p.Status.Phase, w.phase)
	}
	ts := p.Status.Targets[0]
	if ts.State != w.state || ts.Reason != w.reason {
		t.Errorf("target %s/%s (%s), want %s/%s", ts.State, ts.Reason, ts.Message, w.state, w.reason)
	}
	if got := join(p.Actions); got != strings.Join(w.actions, ",") {
		t.Errorf("actions %q, want %q", got, strings.Join(w.actions, ","))
	}
	if got := strings.Join(reasons(p), ","); got != strings.Join(w.events, ",") {
		t.Errorf("events %s, want %s", got, strings.Join(w.events, ","))
	}
	if p.Requeue != w.requeue || p.RequeueAfter != w.after {
		t.Errorf("requeue %v after %v, want %v after %v", p.Requeue, p.RequeueAfter, w.requeue, w.after)
	}
	if w.check != nil {
		w.check(t, p)
	}
}

// TestPrecondition walks the Preconditioning decision: a conventional target's Job is created, waited for, its
// drive figures waited for and kept; a zoned target needs none; a failure or a deleted database ends the
// Benchmark before any run.
func TestPrecondition(t *testing.T) {
	zoned := database("a", true, v1alpha1.ProfileWorkload)
	zoned.Spec.Storage = v1alpha1.StorageSpec{ZonedDevice: &v1alpha1.ZonedDeviceSource{NodeName: "n", DeviceName: "nullb0"}}
	figures := &v1alpha1.DriveFigures{Device: "nvme1n1", DeviceBytes: "1073741824"}
	reset := Emit{Event: event.DriveCountersReset, Args: []any{"a", "precondition", "went backwards"}}
	for _, tc := range []struct {
		name string
		db   *v1alpha1.ZNSDatabase
		jobs map[JobKey]Job
		want want
	}{
		{"a conventional target: its Job is created", leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload), nil,
			want{phase: v1alpha1.BenchmarkPreconditioning, state: v1alpha1.TargetPending, actions: []string{"CreateJob a precondition/0"}, after: StepRetry,
				check: func(t *testing.T, p Plan) {
					if p.Status.Progress != "precondition: 1 target(s) left" {
						t.Errorf("progress %q", p.Status.Progress)
					}
				}}},
		{"its Job runs: wait", leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload), jobs(resources.BenchPhasePrecondition, Job{Exists: true}),
			want{phase: v1alpha1.BenchmarkPreconditioning, state: v1alpha1.TargetPending, after: StepRetry}},
		{"done, the drive sidecar's report still to come: wait", leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload),
			jobs(resources.BenchPhasePrecondition, Job{Exists: true, Done: true, Summary: ok, DrivePending: true}),
			want{phase: v1alpha1.BenchmarkPreconditioning, state: v1alpha1.TargetPending, after: StepRetry}},
		{"done: kept with its drive figures and their Events, on to the prepare", leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload),
			jobs(resources.BenchPhasePrecondition, Job{Exists: true, Done: true, Summary: benchresult.Summary{OK: true, DeviceWrittenBytes: 2 << 30},
				Drive: figures, DriveEvents: []Emit{reset}}),
			want{phase: v1alpha1.BenchmarkPreparing, state: v1alpha1.TargetPending, events: []string{"DriveCountersReset"}, requeue: true,
				check: func(t *testing.T, p Plan) {
					ts := p.Status.Targets[0]
					if !ts.Preconditioned || ts.PreconditionWrittenBytes != 2<<30 || ts.PreconditionDrive != figures {
						t.Errorf("target %+v", ts)
					}
				}}},
		{"a zoned target needs none", zoned, nil,
			want{phase: v1alpha1.BenchmarkPreparing, state: v1alpha1.TargetPending, requeue: true}},
		{"failed: the Benchmark fails before any run", leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload),
			jobs(resources.BenchPhasePrecondition, done(benchresult.Summary{Reason: "Crashed", Error: "fio died"})),
			want{phase: v1alpha1.BenchmarkFailed, state: v1alpha1.TargetFailed, reason: "Crashed", actions: []string{"Settle"},
				events: []string{"PreconditionFailed", "Failed"},
				check: func(t *testing.T, p Plan) {
					if m := p.Events[1].Message(); !strings.Contains(m, "target a (Crashed: precondition failed: fio died) failed while preconditioning") {
						t.Errorf("Failed event %q", m)
					}
				}}},
		{"the database was deleted: its Jobs stopped, the Benchmark fails", nil, nil,
			want{phase: v1alpha1.BenchmarkFailed, state: v1alpha1.TargetFailed, reason: "TargetDeleted", actions: []string{"StopJobs a", "Settle"},
				events: []string{"TargetDeleted", "Failed"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := inPhase(v1alpha1.BenchmarkPreconditioning, v1alpha1.TargetPending)
			b.Spec.Precondition = &v1alpha1.PreconditionSpec{}
			before := b.DeepCopy()
			p := Precondition(PhaseObserved{Benchmark: b, Databases: present(tc.db), Jobs: tc.jobs, Now: t0.Add(time.Minute)})
			tc.want.verify(t, b, p)
			if !equality.Semantic.DeepEqual(b, before) {
				t.Error("the observed Benchmark was changed")
			}
		})
	}
}

func present(db *v1alpha1.ZNSDatabase) map[string]*v1alpha1.ZNSDatabase {
	if db == nil {
		return nil
	}
	return dbs(db)
}

// TestPrepare walks one target through the Preparing and Verifying decision: the lease to bulkload, the prepare
// Job once the database runs it, the lease back to workload, the verify Job once the database runs that, the
// row check; and every way it fails.
func TestPrepare(t *testing.T) {
	late := t0.Add(601 * time.Second)
	rows := benchresult.Summary{OK: true, RowsFound: 2000, DataBytes: 5 << 20, DataBytesSource: "information_schema"}
	for _, tc := range []struct {
		name  string
		state v1alpha1.TargetState
		set   func(b *v1alpha1.Benchmark)
		db    *v1alpha1.ZNSDatabase
		jobs  map[JobKey]Job
		now   time.Time
		want  want
	}{
		{name: "held in workload: the lease goes to bulkload first", state: v1alpha1.TargetPending,
			db: leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload),
			want: want{phase: v1alpha1.BenchmarkPreparing, state: v1alpha1.TargetPending, actions: []string{"SetLeaseProfile a bulkload"},
				events: []string{"ProfileSwitched"}, after: StepRetry, check: switched(true)}},
		{name: "the lease says bulkload, the database does not run it yet: wait", state: v1alpha1.TargetPending,
			db:   leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileWorkload),
			want: want{phase: v1alpha1.BenchmarkPreparing, state: v1alpha1.TargetPending, after: StepRetry, check: switched(true)}},
		{name: "not in bulkload within targetTimeoutSeconds: the target fails, its lease goes back", state: v1alpha1.TargetPending,
			db: leased(v1alpha1.ProfileBulkLoad, ""), now: late,
			want: want{phase: v1alpha1.BenchmarkFailed, state: v1alpha1.TargetFailed, reason: "TargetUnavailable",
				actions: []string{"SetLeaseProfile a workload", "Settle"}, events: []string{"TargetUnavailable", "ProfileSwitched", "Failed"},
				check: switched(false)}},
		{name: "running bulkload: the prepare Job", state: v1alpha1.TargetPending,
			db:   leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileBulkLoad),
			want: want{phase: v1alpha1.BenchmarkPreparing, state: v1alpha1.TargetPending, actions: []string{"CreateJob a prepare/0"}, after: StepRetry}},
		{name: "the prepare Job runs: the switch back is owed, even if the status that said so was lost", state: v1alpha1.TargetPending,
			db: leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileBulkLoad), jobs: jobs(resources.BenchPhasePrepare, Job{Exists: true}),
			want: want{phase: v1alpha1.BenchmarkPreparing, state: v1alpha1.TargetPending, after: StepRetry, check: switched(true)}},
		{name: "prepared, the drive report still to come: wait, in bulkload", state: v1alpha1.TargetPending,
			db: leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileBulkLoad), jobs: jobs(resources.BenchPhasePrepare, Job{Exists: true, Done: true, Summary: ok, DrivePending: true}),
			want: want{phase: v1alpha1.BenchmarkPreparing, state: v1alpha1.TargetPending, after: StepRetry, check: switched(true)}},
		{name: "prepared: the lease back to workload", state: v1alpha1.TargetPending,
			db: leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileBulkLoad), jobs: jobs(resources.BenchPhasePrepare, done(ok)),
			want: want{phase: v1alpha1.BenchmarkVerifying, state: v1alpha1.TargetPrepared, actions: []string{"SetLeaseProfile a workload"},
				events: []string{"ProfileSwitched"}, after: StepRetry, check: switched(false)}},
		{name: "prepared on a second attempt after sysbench could not connect: said so", state: v1alpha1.TargetPending,
			db: leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileBulkLoad), jobs: jobs(resources.BenchPhasePrepare, done(benchresult.Summary{OK: true, PrepareAttempts: 2})),
			want: want{phase: v1alpha1.BenchmarkVerifying, state: v1alpha1.TargetPrepared, actions: []string{"SetLeaseProfile a workload"},
				events: []string{"PrepareRetried", "ProfileSwitched"}, after: StepRetry}},
		{name: "the prepare failed: the lease back to workload, the Benchmark fails", state: v1alpha1.TargetPending,
			db: leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileBulkLoad), jobs: jobs(resources.BenchPhasePrepare, done(benchresult.Summary{Reason: "SQLError", Error: "1062"})),
			want: want{phase: v1alpha1.BenchmarkFailed, state: v1alpha1.TargetFailed, reason: "SQLError",
				actions: []string{"SetLeaseProfile a workload", "Settle"}, events: []string{"PrepareFailed", "ProfileSwitched", "Failed"}}},
		{name: "prepared, the database not in workload yet: wait", state: v1alpha1.TargetPrepared,
			db:   leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileBulkLoad),
			want: want{phase: v1alpha1.BenchmarkVerifying, state: v1alpha1.TargetPrepared, after: StepRetry}},
		{name: "prepared, in workload: the verify Job", state: v1alpha1.TargetPrepared,
			db:   leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload),
			want: want{phase: v1alpha1.BenchmarkVerifying, state: v1alpha1.TargetPrepared, actions: []string{"CreateJob a verify/0"}, after: StepRetry}},
		{name: "prepared with the lease still in bulkload (a lost write): back to workload first", state: v1alpha1.TargetPrepared,
			db: leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileBulkLoad),
			want: want{phase: v1alpha1.BenchmarkVerifying, state: v1alpha1.TargetPrepared, actions: []string{"SetLeaseProfile a workload"},
				events: []string{"ProfileSwitched"}, after: StepRetry}},
		{name: "the rows are all there: on to the runs, marked as not aged", state: v1alpha1.TargetPrepared,
			db: leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload), jobs: jobs(resources.BenchPhaseVerify, done(rows)),
			want: want{phase: v1alpha1.BenchmarkRunning, state: v1alpha1.TargetVerified, requeue: true, check: func(t *testing.T, p Plan) {
				ts := p.Status.Targets[0]
				if p.Status.Iteration != 1 || p.Status.Progress != "run 1/1" || ts.Rows != 2000 || ts.Size == nil || ts.Size.AfterPrepareBytes != 5<<20 ||
					ts.SteadyState == nil || !ts.SteadyState.Required {
					t.Errorf("status %+v, target %+v", p.Status, ts)
				}
			}}},
		{name: "the rows are all there, with spec.steadyState: on to the write-only rounds", state: v1alpha1.TargetPrepared,
			set: func(b *v1alpha1.Benchmark) { b.Spec.SteadyState = &v1alpha1.SteadyStateSpec{} },
			db:  leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload), jobs: jobs(resources.BenchPhaseVerify, done(rows)),
			want: want{phase: v1alpha1.BenchmarkSteadyState, state: v1alpha1.TargetVerified, requeue: true}},
		{name: "rows missing: RowCountMismatch, the Benchmark fails", state: v1alpha1.TargetPrepared,
			db: leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload), jobs: jobs(resources.BenchPhaseVerify, done(benchresult.Summary{OK: true, RowsFound: 1763})),
			want: want{phase: v1alpha1.BenchmarkFailed, state: v1alpha1.TargetFailed, reason: "RowCountMismatch", actions: []string{"Settle"},
				events: []string{"RowCountMismatch", "Failed"}, check: func(t *testing.T, p Plan) {
					if m := p.Status.Targets[0].Message; m != "found 1763 rows, expected 2 tables x 1000 rows = 2000" {
						t.Errorf("message %q", m)
					}
				}}},
		{name: "without a prepare: straight to the verify", state: v1alpha1.TargetPending,
			set:  func(b *v1alpha1.Benchmark) { b.Spec.Prepare = ptr.To(false) },
			db:   leased(v1alpha1.ProfileWorkload, v1alpha1.ProfileWorkload),
			want: want{phase: v1alpha1.BenchmarkVerifying, state: v1alpha1.TargetPrepared, actions: []string{"CreateJob a verify/0"}, after: StepRetry}},
		{name: "verified, waiting for others, its lease rewritten by hand: ProfileChanged", state: v1alpha1.TargetVerified,
			db: leased(v1alpha1.ProfileBulkLoad, v1alpha1.ProfileBulkLoad),
			want: want{phase: v1alpha1.BenchmarkFailed, state: v1alpha1.TargetFailed, reason: "ProfileChanged", actions: []string{"StopJobs a", "Settle"},
				events: []string{"ProfileChanged", "Failed"}, check: switched(true)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := inPhase(v1alpha1.BenchmarkPreparing, tc.state)
			if tc.state == v1alpha1.TargetPrepared {
				SetPhase(&b.Status, v1alpha1.BenchmarkVerifying, "verify", t0)
			}
			if tc.set != nil {
				tc.set(b)
			}
			now := tc.now
			if now.IsZero() {
				now = t0.Add(time.Minute)
			}
			before := b.DeepCopy()
			p := Prepare(PhaseObserved{Benchmark: b, Databases: present(tc.db), Jobs: tc.jobs, Now: now})
			tc.want.verify(t, b, p)
			if !equality.Semantic.DeepEqual(b, before) {
				t.Error("the observed Benchmark was changed")
			}
		})
	}
}

func switched(want bool) func(t *testing.T, p Plan) {
	return func(t *testing.T, p Plan) {
		t.Helper()
		if got := p.Status.Targets[0].ProfileSwitched; got != want {
			t.Errorf("profileSwitched %v, want %v", got, want)
		}
	}
}
