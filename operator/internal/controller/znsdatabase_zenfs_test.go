package controller_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/podannotate"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs/zenfscapture"
)

// zonedUpToPod creates a zoned database on the recorded nullb0 of a node of its own (a device serves one
// database), passes its preflight and waits for its StatefulSet.
func zonedUpToPod(t *testing.T, name string) (*v1alpha1.ZNSDatabase, *appsv1.StatefulSet) {
	t.Helper()
	ns := newNamespace(t)
	db := zonedDB(ns, name, "node-"+name, "nullb0")
	create(t, db)
	report, ok := preflightReport(t, "nullb0")
	if !ok {
		t.Fatalf("recorded nullb0 must pass: %s", report)
	}
	finishPreflight(t, db, report, true)
	finishJob(t, db, db.FormatJobName(), resources.FormatContainer, formatReport(t, fsformat.ActionFormat, "capture/nullb0/09-df-empty.stdout"), true)
	sts := &appsv1.StatefulSet{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts)
	return get(t, db), sts
}

// passFormat plays the format Job of a ZenFS database: it made ZenFS on the empty recorded nullb0.
func passFormat(t *testing.T, db *v1alpha1.ZNSDatabase) {
	t.Helper()
	finishJob(t, db, db.FormatJobName(), resources.FormatContainer, formatReport(t, fsformat.ActionFormat, "capture/nullb0/09-df-empty.stdout"), true)
}

// zonedUpToFormat is zonedUpToPod up to the format Job, which has not finished.
func zonedUpToFormat(t *testing.T, name string) *v1alpha1.ZNSDatabase {
	t.Helper()
	ns := newNamespace(t)
	db := zonedDB(ns, name, "node-"+name, "nullb0")
	create(t, db)
	passPreflight(t, db, "nullb0")
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, &batchv1.Job{})
	return get(t, db)
}

// formatReport is what `znsdb format` reports after zenfs df printed the captured output.
func formatReport(t *testing.T, action fsformat.Action, dfCapture string) string {
	t.Helper()
	df, err := zenfs.ParseDf(zenfscapture.Read(t, dfCapture))
	if err != nil {
		t.Fatal(err)
	}
	b, err := dbinit.Report{Filesystem: &dbinit.FilesystemState{Type: "zenfs", UUID: "c59e1291-cd99-49cb-bbf6-f3555b283912",
		Action: action, Reason: "device is empty; formatting it with zenfs", Space: &dbinit.Space{At: time.Now().UTC(),
			FreeBytes: df.FreeBytes, UsedBytes: df.UsedBytes, ReclaimableBytes: df.ReclaimableBytes,
			SpaceAmplificationPercent: df.SpaceAmplificationPercent}}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// annotatePod plays the readiness helper: it sets the space annotation on the database's pod.
func annotatePod(t *testing.T, db *v1alpha1.ZNSDatabase, value string) {
	t.Helper()
	eventually(t, "annotate the pod", func() error {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: db.PodName()}, pod); err != nil {
			return err
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[v1alpha1.AnnotationZenFSSpace] = value
		return k8s.Update(ctx, pod)
	})
}

func space(t *testing.T, s dbinit.Space) string {
	t.Helper()
	v, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The pod of a zoned database may annotate itself and nothing else, and its readiness probe refreshes the
// ZenFS space.
func TestZonedPodIdentity(t *testing.T) {
	requireEnv(t)
	db, sts := zonedUpToPod(t, "ident")
	name := db.ServiceAccountName()
	sa := &corev1.ServiceAccount{}
	waitObject(t, client.ObjectKey{Namespace: db.Namespace, Name: name}, sa)
	ownedBy(t, sa, db)
	role := &rbacv1.Role{}
	waitObject(t, client.ObjectKey{Namespace: db.Namespace, Name: name}, role)
	ownedBy(t, role, db)
	if len(role.Rules) != 1 {
		t.Fatalf("role rules %+v", role.Rules)
	}
	r := role.Rules[0]
	if !slices.Equal(r.APIGroups, []string{""}) || !slices.Equal(r.Resources, []string{"pods"}) ||
		!slices.Equal(r.ResourceNames, []string{db.PodName()}) || !slices.Equal(r.Verbs, []string{"get", "patch"}) {
		t.Errorf("role rule %+v: want get and patch of pod %s only", r, db.PodName())
	}
	rb := &rbacv1.RoleBinding{}
	waitObject(t, client.ObjectKey{Namespace: db.Namespace, Name: name}, rb)
	ownedBy(t, rb, db)
	if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != name || len(rb.Subjects) != 1 ||
		rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Name != name || rb.Subjects[0].Namespace != db.Namespace {
		t.Errorf("role binding %+v", rb)
	}

	spec := sts.Spec.Template.Spec
	if spec.ServiceAccountName != name || spec.AutomountServiceAccountToken == nil || !*spec.AutomountServiceAccountToken {
		t.Errorf("pod service account %q, automount %v", spec.ServiceAccountName, spec.AutomountServiceAccountToken)
	}
	mysqld := spec.Containers[0]
	env := map[string]string{}
	for _, e := range mysqld.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	// The names the helper reads (package podannotate).
	if env[podannotate.PodNameEnv] != "metadata.name" || env[podannotate.PodNamespaceEnv] != "metadata.namespace" {
		t.Errorf("mysqld env from fields %v", env)
	}
	probe := mysqld.ReadinessProbe
	want := "znsdb health --socket /var/run/mysqld/mysqld.sock --zenfs-device nullb0 --zenfs-space-interval 60s"
	if got := strings.Join(probe.Exec.Command, " "); got != want || probe.TimeoutSeconds < 10 {
		t.Errorf("readiness probe %q (timeout %ds), want %q", got, probe.TimeoutSeconds, want)
	}
	// A conventional database keeps the plain probe and no identity of its own.
	vdb := volumeDB(db.Namespace, "plain", v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona)
	create(t, vdb)
	vsts := &appsv1.StatefulSet{}
	waitObject(t, client.ObjectKey{Namespace: db.Namespace, Name: vdb.StatefulSetName()}, vsts)
	if vs := vsts.Spec.Template.Spec; vs.ServiceAccountName != "" || strings.Contains(strings.Join(vs.Containers[0].ReadinessProbe.Exec.Command, " "), "zenfs") {
		t.Errorf("conventional pod: service account %q, probe %v", vs.ServiceAccountName, vs.Containers[0].ReadinessProbe.Exec.Command)
	}
}

// status.filesystem.zenfs follows the space the readiness helper publishes while mysqld runs, not only the format step's.
func TestZenFSSpaceRefreshedWhileRunning(t *testing.T) {
	requireEnv(t)
	db, sts := zonedUpToPod(t, "space")
	mysqlPod(t, db, sts)
	var formatAt time.Time
	eventually(t, "status.filesystem.zenfs from the format step", func() error {
		fs := get(t, db).Status.Filesystem
		if fs == nil || fs.UUID != "c59e1291-cd99-49cb-bbf6-f3555b283912" {
			return fmt.Errorf("status.filesystem = %+v", fs)
		}
		z := fs.ZenFS
		if z == nil || z.Free.Value() != 3904<<20 || z.MeasuredAt == nil {
			return fmt.Errorf("status.filesystem.zenfs = %+v", z)
		}
		formatAt = z.MeasuredAt.Time
		return nil
	})
	markReady(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")

	// A minute later the probe measured again (the figures of the captured df after a RocksDB session).
	later := formatAt.Add(time.Minute).UTC().Truncate(time.Second)
	annotatePod(t, db, space(t, dbinit.Space{At: later, FreeBytes: 3659 << 20, UsedBytes: 124 << 20,
		ReclaimableBytes: 35 << 20, SpaceAmplificationPercent: 28}))
	eventually(t, "status.filesystem.zenfs refreshed", func() error {
		z := get(t, db).Status.ZenFSSpace()
		if z.Free.Value() != 3659<<20 || z.Used.Value() != 124<<20 || z.Reclaimable.Value() != 35<<20 ||
			z.MeasuredAt == nil || !z.MeasuredAt.Time.Equal(later) {
			return fmt.Errorf("status.filesystem.zenfs = %+v", z)
		}
		if fs := get(t, db).Status.Filesystem; fs.Action != "format" || fs.Type != "zenfs" {
			return fmt.Errorf("the format step's record was lost: %+v", fs)
		}
		return nil
	})

	// A failed measurement keeps the figures, says why, and raises an Event.
	failedAt := later.Add(time.Minute)
	annotatePod(t, db, space(t, dbinit.Space{At: failedAt, Error: "zenfs df failed: zenfs aborted reading nullb0",
		ErrorReason: string(zenfs.ReasonAborted)}))
	eventually(t, "status.filesystem.zenfs.error", func() error {
		z := get(t, db).Status.ZenFSSpace()
		if !strings.Contains(z.Error, "zenfs aborted") || z.Free.Value() != 3659<<20 || !z.MeasuredAt.Time.Equal(later) {
			return fmt.Errorf("status.filesystem.zenfs = %+v", z)
		}
		return nil
	})
	if msg := waitEvent(t, db, "ZenFSSpaceFailed"); !strings.Contains(msg, "ZenFSAborted") {
		t.Errorf("event %q", msg)
	}

	// What is not newer than the format step's df, or not a measurement at all, changes nothing.
	for _, v := range []string{
		space(t, dbinit.Space{At: formatAt.Add(-time.Hour), FreeBytes: 1}),
		`{"at":"not a time"}`,
		`{"at":"2030-01-01T00:00:00Z","freeBytes":-5}`,
	} {
		annotatePod(t, db, v)
		consistently(t, "ignored annotation "+v, time.Second, func() error {
			z := get(t, db).Status.ZenFSSpace()
			if z.Free.Value() != 3659<<20 || z.Error == "" {
				return fmt.Errorf("status.filesystem.zenfs = %+v", z)
			}
			return nil
		})
	}
	if c := meta.FindStatusCondition(get(t, db).Status.Conditions, v1alpha1.ConditionAvailable); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("a space annotation changed availability: %+v", c)
	}
}

// Each way the format step can fail shows as its own condition reason and Event, with zenfs's own words:
// one real captured failure of each kind zenfs.Classify knows.
func TestFormatFailureReasons(t *testing.T) {
	requireEnv(t)
	// What znsdb reports when the real zenfs failed as captured: the same classification, the same words.
	classified := func(stem, dev string) dbinit.Report {
		sub := strings.Fields(zenfscapture.Read(t, stem+".cmd"))[1]
		f := zenfs.Classify(dev, zenfscapture.Read(t, stem+".stderr"), fmt.Errorf("exit status %s", strings.TrimSpace(zenfscapture.Read(t, stem+".rc"))))
		return dbinit.Report{Filesystem: &dbinit.FilesystemState{Type: "zenfs", Action: fsformat.ActionFormat},
			Error: "zenfs " + sub + " failed: " + f.Message, ErrorReason: string(f.Reason)}
	}
	for _, tc := range []struct {
		name, reason, event, mention string
		report                       dbinit.Report
	}{
		{"busy", "DeviceBusy", "DeviceBusy", "/dev/nullb0 is busy",
			dbinit.Report{Problems: []zbd.Problem{zbd.BusyProblem("/dev/nullb0", zbd.ErrBusy)}}},
		{"aborted", "ZenFSAborted", "FormatFailed", "std::bad_alloc", classified("followup/B-garbage/05-mkfs-force", "nullb0")},
		{"busy-at-mkfs", "DeviceBusy", "FormatFailed", "Device or resource busy", classified("capture/errors/busy-mkfs-force", "nullb0")},
		{"aux", "AuxPathProblem", "FormatFailed", "is not empty", classified("capture/errors/aux-not-empty-mkfs", "nullb0")},
		{"scheduler", "WrongScheduler", "FormatFailed", "echo mq-deadline", classified("capture/errors/scheduler-none-mkfs", "nullb0")},
		{"no-device", "NoSuchDevice", "FormatFailed", "No such file or directory", classified("capture/errors/no-device-mkfs", "nullb0")},
		{"not-zoned", "NotZoned", "FormatFailed", "not host-managed zoned", classified("capture/errors/not-zoned-mkfs", "nullb0")},
		{"few-zones", "TooFewZones", "FormatFailed", "32 required", classified("capture/errors/too-few-zones-mkfs", "nullb0")},
		{"existing", "ExistingFileSystem", "FormatFailed", "reformatToken", classified("capture/nullb0/05-mkfs-again-noforce-same-aux", "nullb0")},
		{"unformatted", "Unformatted", "FormatFailed", "No valid superblock", classified("capture/nullb0/02-df-unformatted", "nullb0")},
		{"usage", "ZenFSUsage", "FormatFailed", "unknown command line flag", classified("capture/errors/df-unknown-flag", "nullb0")},
		{"forged-reason", "FormatFailed", "FormatFailed", "x", dbinit.Report{Error: "x", ErrorReason: "not a valid reason!"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := zonedUpToFormat(t, "fail-"+tc.name)
			b, err := tc.report.Encode()
			if err != nil {
				t.Fatal(err)
			}
			finishJob(t, db, db.FormatJobName(), resources.FormatContainer, string(b), false)
			cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, tc.reason)
			if !strings.Contains(cond.Message, tc.mention) {
				t.Errorf("condition message %q lacks %q", cond.Message, tc.mention)
			}
			if msg := waitEvent(t, db, tc.event); !strings.Contains(msg, tc.mention) {
				t.Errorf("event %q lacks %q", msg, tc.mention)
			}
		})
	}
}

// A device whose zone limits are above the floor but below what was seen to work is accepted, with a warning
// condition and Event.
func TestDeviceWarningForFewOpenZones(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := zonedDB(ns, "few-zones", "node-w", "nullb0")
	create(t, db)
	d, _, err := zbd.Preflight(sysBlock(), "nullb0")
	if err != nil {
		t.Fatal(err)
	}
	d.MaxOpenZones, d.MaxActiveZones = 8, 8
	if ps := zbd.Judge(*d); len(ps) != 0 {
		t.Fatalf("a device with 8 open zones is refused: %+v", ps)
	}
	b, err := dbinit.Report{Device: d, Warnings: zbd.Advise(*d)}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	finishPreflight(t, db, string(b), true)
	waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, "PreflightPassed")
	cond := waitCondition(t, db, v1alpha1.ConditionDeviceWarning, metav1.ConditionTrue, zbd.CodeFewOpenZones)
	if !strings.Contains(cond.Message, "8 open zones") || !strings.Contains(cond.Message, "8 active zones") {
		t.Errorf("warning %q", cond.Message)
	}
	if msg := waitEvent(t, db, "DeviceWarning"); msg != cond.Message {
		t.Errorf("event %q, condition %q", msg, cond.Message)
	}
	if w := get(t, db).Status.Device.Warnings; len(w) != 2 {
		t.Errorf("status.device.warnings %q", w)
	}
	// Accepted: the database goes on to its format Job and StatefulSet.
	passFormat(t, db)
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{})
}
