package controller_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/dbinit"
	"github.com/zns-mysql/zns-mysql/operator/internal/fsformat"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zonedfs"
)

// deviceDB is InnoDB on MariaDB on ext4 over a whole conventional device, preconditioned with two passes and up
// to five random rounds, confirmed by a reformat token.
func deviceDB(ns, name, node, device string) *v1alpha1.ZNSDatabase {
	db := volumeDB(ns, name, v1alpha1.EngineInnoDB, v1alpha1.FlavorMariaDB)
	db.Spec.Storage = v1alpha1.StorageSpec{Device: &v1alpha1.DeviceSource{NodeName: node, DeviceName: device,
		Precondition: &v1alpha1.DevicePreconditionSpec{RandomRounds: 5, RoundSeconds: 5,
			SteadyState: &v1alpha1.PreconditionSteadyStateSpec{Window: 3}}}}
	db.Spec.Format.ReformatToken = "2026-11-27"
	return db
}

// conventionalDevice is what the preflight reads in sysfs of a 4 GiB conventional NVMe namespace.
func conventionalDevice(name string, size int64) *zbd.Device {
	return &zbd.Device{Name: name, Model: zbd.ModelNone, Scheduler: "none", AvailableSchedulers: []string{"none", "mq-deadline"},
		CapacityBytes: size, LogicalBlockSize: 4096}
}

// conventionalPreflight is `znsdb preflight --filesystem ext4` on such a device: the helper's own judgement.
func conventionalPreflight(t *testing.T, d *zbd.Device) (string, bool) {
	t.Helper()
	problems := zonedfs.JudgeConventional(zonedfs.Ext4, *d)
	b, err := dbinit.Report{Device: d, Problems: problems}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b), len(problems) == 0
}

// conventionalFormatReport is what `znsdb format --filesystem ext4 --precondition` reports: the decision of
// fsformat.Decide for in, and the precondition's figures when it ran.
func conventionalFormatReport(t *testing.T, in fsformat.Input, p *dbinit.PreconditionState) string {
	t.Helper()
	dec := fsformat.Decide(in)
	fs := &dbinit.FilesystemState{Type: in.Want.Name(), Found: in.Found.Probe.Type, Label: in.Found.Probe.Label,
		Action: dec.Action, Reason: dec.Reason}
	if dec.Action == fsformat.ActionFormat {
		fs.UUID, fs.Label = "5c1e0d3a-ext4", zonedfs.Label(in.Token)
	}
	if dec.NotPreconditioned != "" {
		p = &dbinit.PreconditionState{Note: dec.NotPreconditioned}
	}
	b, err := dbinit.Report{Device: conventionalDevice("vdb", 4<<30), Filesystem: fs, Precondition: p}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// preconditioned is a precondition of two passes over 4 GiB and rounds of the given write IOPS.
func preconditioned(steady bool, iops ...float64) *dbinit.PreconditionState {
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	p := &dbinit.PreconditionState{Complete: true, StartedAt: start, FinishedAt: start.Add(5 * time.Minute),
		RoundsAsked: 5, SteadyState: steady,
		Passes: []dbinit.PassFigures{{Bytes: 4 << 30, Seconds: 1.718, MBps: 2500}, {Bytes: 4 << 30, Seconds: 1.75, MBps: 2454.3}}}
	for _, x := range iops {
		p.Rounds = append(p.Rounds, dbinit.RoundFigures{WriteIOPS: x, Bytes: int64(x * 4096 * 5), Seconds: 5})
	}
	if steady {
		p.SteadyReason = "steady over rounds 1-3: range 2.0% (limit 20%), excursion 1.0% (limit 10%) of the average, 1000 write IOPS"
	} else {
		p.SteadyReason = "not steady after 5 rounds: rounds 3-5: range 45.0% of the average, limit 20%"
	}
	return p
}

func TestDeviceDatabaseLifecycle(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := deviceDB(ns, "inno-dev", "dev-node", "vdb")
	create(t, db)

	// A read-only preflight pinned to the node, judging the device for ext4 from sysfs; nothing else yet.
	pj := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.PreflightJobName()}, pj)
	ps := pj.Spec.Template.Spec
	if got := strings.Join(ps.Containers[0].Command, " "); got != "znsdb preflight --device vdb --sysfs-only --filesystem ext4" {
		t.Errorf("preflight command %q", got)
	}
	if len(ps.Volumes) != 0 || len(ps.Containers[0].VolumeDevices) != 0 {
		t.Errorf("the preflight reaches the device: volumes %+v", ps.Volumes)
	}
	assertPinnedTo(t, ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, "dev-node")
	devPV := v1alpha1.DevicePVName("dev-node", "vdb")
	if err := absent(client.ObjectKey{Name: devPV}, &corev1.PersistentVolume{}); err != nil {
		t.Errorf("before the preflight passed: %v", err)
	}
	report, ok := conventionalPreflight(t, conventionalDevice("vdb", 4<<30))
	if !ok {
		t.Fatalf("a fit device refused: %s", report)
	}
	finishPreflight(t, db, report, true)
	cond := waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, "PreflightPassed")
	if !strings.Contains(cond.Message, "conventional device of 4Gi") {
		t.Errorf("DeviceReady says %q", cond.Message)
	}
	cur := get(t, db)
	if d := cur.Status.Device; d == nil || d.Node != "dev-node" || d.Path != "/dev/vdb" || d.Model != "none" ||
		d.Capacity == nil || d.Capacity.Value() != 4<<30 || cur.Status.Storage != "device" {
		t.Errorf("status.device %+v, storage %q", d, cur.Status.Storage)
	}

	// The Block PV and claim, then the format Job with the precondition and the token.
	pv := &corev1.PersistentVolume{}
	waitObject(t, client.ObjectKey{Name: devPV}, pv)
	if *pv.Spec.VolumeMode != corev1.PersistentVolumeBlock || pv.Spec.Local.Path != "/dev/vdb" ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Spec.ClaimRef.Name != db.DeviceClaimName() {
		t.Errorf("device PV %+v", pv.Spec)
	}
	assertPinnedTo(t, pv.Spec.NodeAffinity.Required, "dev-node")
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.DeviceClaimName()}, &corev1.PersistentVolumeClaim{})
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, job)
	ownedBy(t, job, db)
	c := job.Spec.Template.Spec.Containers[0]
	want := "znsdb format --device vdb --filesystem ext4 --policy IfNeeded --precondition --precondition-passes=2 " +
		"--precondition-block-size=131072 --precondition-rounds=5 --precondition-round-seconds=5 --steady-window=3 " +
		"--steady-max-range-percent=20 --steady-max-excursion-percent=10"
	if got := strings.Join(c.Command, " "); got != want {
		t.Errorf("format command\n%s\nwant\n%s", got, want)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "ZNS_REFORMAT_TOKEN" || c.Env[0].Value != "2026-11-27" {
		t.Errorf("format env %+v: want the token", c.Env)
	}
	if !claimsDevice(job.Spec.Template.Spec.Volumes, db.DeviceClaimName()) || len(c.VolumeDevices) != 1 || c.VolumeDevices[0].DevicePath != "/dev/vdb" {
		t.Errorf("format Job volumes %+v devices %+v", job.Spec.Template.Spec.Volumes, c.VolumeDevices)
	}
	cond = waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "Formatting")
	if !strings.Contains(cond.Message, "preconditioning") {
		t.Errorf("Formatting says %q; want it to say the device may be preconditioned first", cond.Message)
	}
	fsPV := v1alpha1.FilesystemPVName("dev-node", "vdb")
	consistently(t, "no mount and no mysqld before the format Job reported", time.Second, func() error {
		return errors.Join(
			absent(client.ObjectKey{Name: fsPV}, &corev1.PersistentVolume{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.FilesystemClaimName()}, &corev1.PersistentVolumeClaim{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}))
	})

	finishJob(t, db, db.FormatJobName(), "format", conventionalFormatReport(t, fsformat.Input{
		Want: fsformat.Labelled{FS: zonedfs.Ext4}, Policy: fsformat.PolicyIfNeeded, Token: "2026-11-27", Found: fsformat.Observed{Empty: true}, Precondition: true,
	}, preconditioned(true, 1000, 1010, 990)), true)
	msg := waitEvent(t, db, "DevicePreconditioned")
	for _, s := range []string{"/dev/vdb", "wrote 8.65 GB", "2 sequential pass(es)", "2500.0, 2454.3 MB/s", "steady state reached"} {
		if !strings.Contains(msg, s) {
			t.Errorf("the DevicePreconditioned event %q does not say %q", msg, s)
		}
	}
	waitEvent(t, db, "Formatted")
	eventually(t, "status.precondition from the format report", func() error {
		p := get(t, db).Status.Precondition
		if p == nil || !p.Preconditioned || !p.SteadyState || len(p.Passes) != 2 || len(p.Rounds) != 3 ||
			p.Passes[1].MBPerSecond != "2454.3" || p.Passes[0].Seconds != "1.718" || p.Rounds[2].WriteIOPS != "990" ||
			p.Rounds[2].Round != 3 || p.WrittenBytes != 8<<30+3000*4096*5 || p.StartedAt == nil || p.FinishedAt == nil {
			return fmt.Errorf("status.precondition %+v", p)
		}
		return nil
	})

	// A Filesystem-mode PV with fsType ext4 over the device, the claim mysqld mounts as its datadir.
	fpv := &corev1.PersistentVolume{}
	waitObject(t, client.ObjectKey{Name: fsPV}, fpv)
	if l := fpv.Spec.Local; l == nil || l.Path != "/dev/vdb" || l.FSType == nil || *l.FSType != "ext4" ||
		*fpv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("filesystem PV %+v", fpv.Spec)
	}
	assertPinnedTo(t, fpv.Spec.NodeAffinity.Required, "dev-node")
	pvc := &corev1.PersistentVolumeClaim{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FilesystemClaimName()}, pvc)
	if pvc.Spec.VolumeName != fsPV || db.FilesystemClaimName() != "inno-dev-fs" {
		t.Errorf("datadir claim %s bound to %q", pvc.Name, pvc.Spec.VolumeName)
	}
	sts := &appsv1.StatefulSet{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, sts)
	spec := sts.Spec.Template.Spec
	if len(spec.InitContainers) != 0 || len(spec.Containers[0].VolumeDevices) != 0 || len(sts.Spec.VolumeClaimTemplates) != 0 ||
		!claimsDevice(spec.Volumes, db.FilesystemClaimName()) {
		t.Errorf("StatefulSet init %d, devices %+v, templates %d, volumes %+v", len(spec.InitContainers),
			spec.Containers[0].VolumeDevices, len(sts.Spec.VolumeClaimTemplates), spec.Volumes)
	}
	// The metrics sidecar counts the device's writes (no zones there).
	for _, ct := range spec.Containers {
		if ct.Name != "mysqld" && strings.Contains(strings.Join(ct.Command, " "), "znsdb metrics") &&
			!strings.Contains(strings.Join(ct.Command, " "), "--device vdb") {
			t.Errorf("metrics sidecar %q does not read the device", ct.Command)
		}
	}
	markReady(t, db)
	waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionTrue, "MySQLReady")

	if err := k8s.Delete(ctx, db); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the database and its volumes released", func() error {
		return errors.Join(
			absent(client.ObjectKey{Namespace: ns, Name: db.Name}, &v1alpha1.ZNSDatabase{}),
			absent(client.ObjectKey{Name: fsPV}, &corev1.PersistentVolume{}),
			absent(client.ObjectKey{Name: devPV}, &corev1.PersistentVolume{}))
	})
	waitEvent(t, db, "DeviceReleased")
}

// TestDeviceFormatRefused: a device holding someone's ext4, and no token: the format Job refuses, the database
// says why and how to go on, and nothing mounts the device.
func TestDeviceFormatRefused(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := deviceDB(ns, "foreign-ext4", "node-r", "vdb")
	db.Spec.Format.ReformatToken = ""
	create(t, db)
	report, _ := conventionalPreflight(t, conventionalDevice("vdb", 4<<30))
	finishPreflight(t, db, report, true)
	finishJob(t, db, db.FormatJobName(), "format", conventionalFormatReport(t, fsformat.Input{
		Want: fsformat.Labelled{FS: zonedfs.Ext4}, Policy: fsformat.PolicyIfNeeded, Found: fsformat.Observed{Probe: zonedfs.Probe{Type: "ext4", Label: "home"}}, Precondition: true,
	}, nil), false)
	cond := waitCondition(t, db, v1alpha1.ConditionAvailable, metav1.ConditionFalse, "FormatRefused")
	for _, s := range []string{"/dev/vdb", `ext4 (label "home") not made by zns-mysql`, "reformatToken"} {
		if !strings.Contains(cond.Message, s) {
			t.Errorf("the refusal %q does not say %q", cond.Message, s)
		}
	}
	if msg := waitEvent(t, db, "FormatRefused"); !strings.Contains(msg, "reformatToken") {
		t.Errorf("FormatRefused event %q", msg)
	}
	consistently(t, "nothing mounts a refused device", time.Second, func() error {
		return errors.Join(
			absent(client.ObjectKey{Name: v1alpha1.FilesystemPVName("node-r", "vdb")}, &corev1.PersistentVolume{}),
			absent(client.ObjectKey{Namespace: ns, Name: db.StatefulSetName()}, &appsv1.StatefulSet{}))
	})
	if p := get(t, db).Status.Precondition; p != nil {
		t.Errorf("a refused device has a precondition status %+v", p)
	}
}

// TestDeviceNotPreconditionedWithoutToken: an empty device and no token: formatted, not preconditioned, and the
// status and a Warning say why.
func TestDeviceNotPreconditionedWithoutToken(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := deviceDB(ns, "no-token", "node-n", "vdb")
	db.Spec.Format.ReformatToken = ""
	create(t, db)
	report, _ := conventionalPreflight(t, conventionalDevice("vdb", 4<<30))
	finishPreflight(t, db, report, true)
	finishJob(t, db, db.FormatJobName(), "format", conventionalFormatReport(t, fsformat.Input{
		Want: fsformat.Labelled{FS: zonedfs.Ext4}, Policy: fsformat.PolicyIfNeeded, Found: fsformat.Observed{Empty: true}, Precondition: true,
	}, nil), true)
	msg := waitEvent(t, db, "DeviceNotPreconditioned")
	if !strings.Contains(msg, "not preconditioned: preconditioning destroys the device's contents, so it runs only with a new reformatToken") {
		t.Errorf("DeviceNotPreconditioned event %q", msg)
	}
	// The Event goes out before the status write that carries the same news: wait for the status too.
	eventually(t, "status.precondition says why it did not run", func() error {
		if p := get(t, db).Status.Precondition; p == nil || p.Preconditioned || !strings.HasPrefix(p.Message, "not preconditioned") {
			return fmt.Errorf("status.precondition %+v", p)
		}
		return nil
	})
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FilesystemClaimName()}, &corev1.PersistentVolumeClaim{})
}

// TestDevicePreconditionNotSteadyWarns: every round ran and the rule never held: a Warning with the verdict.
func TestDevicePreconditionNotSteadyWarns(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := deviceDB(ns, "unsteady", "node-u", "vdb")
	create(t, db)
	report, _ := conventionalPreflight(t, conventionalDevice("vdb", 4<<30))
	finishPreflight(t, db, report, true)
	finishJob(t, db, db.FormatJobName(), "format", conventionalFormatReport(t, fsformat.Input{
		Want: fsformat.Labelled{FS: zonedfs.Ext4}, Policy: fsformat.PolicyIfNeeded, Token: "2026-11-27", Found: fsformat.Observed{Empty: true}, Precondition: true,
	}, preconditioned(false, 500, 900, 700, 1200, 800)), true)
	msg := waitEvent(t, db, "DevicePreconditionNotSteady")
	if !strings.Contains(msg, "not steady after 5 rounds") {
		t.Errorf("DevicePreconditionNotSteady event %q", msg)
	}
	eventually(t, "status.precondition with the rounds and no steady state", func() error {
		if p := get(t, db).Status.Precondition; p == nil || !p.Preconditioned || p.SteadyState || len(p.Rounds) != 5 {
			return fmt.Errorf("status.precondition %+v", p)
		}
		return nil
	})
}

// TestDeviceRefusedByPreflightAsZonedOrSmall: a zoned device named as storage.device, and one too small, are refused with
// what to do.
func TestDeviceRefusedByPreflightAsZonedOrSmall(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	zoned, _, err := zbd.Preflight(sysBlock(), "nullb0")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dev  *zbd.Device
		says string
	}{
		{"zoned-as-device", zoned, "use storage.zonedDevice"},
		{"small-device", conventionalDevice("vdb", 256<<20), "at least 512 MiB"},
	} {
		db := deviceDB(ns, c.name, "node-p", c.dev.Name)
		create(t, db)
		report, ok := conventionalPreflight(t, c.dev)
		if ok {
			t.Fatalf("%s: judged fit", c.name)
		}
		finishPreflight(t, db, report, false)
		cond := waitCondition(t, db, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "DeviceRefused")
		if !strings.Contains(strings.ToLower(cond.Message), strings.ToLower(c.says)) {
			t.Errorf("%s: DeviceReady says %q; want %q", c.name, cond.Message, c.says)
		}
		waitEvent(t, db, "DeviceRefused")
		if err := absent(client.ObjectKey{Name: v1alpha1.DevicePVName("node-p", c.dev.Name)}, &corev1.PersistentVolume{}); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestDeviceConflictWithZonedDatabase: storage.device naming a device that a zoned database already has, on the
// same node, from another namespace, is refused before anything touches it; so is a second device database.
func TestDeviceConflictWithZonedDatabase(t *testing.T) {
	requireEnv(t)
	ns1, ns2, ns3 := newNamespace(t), newNamespace(t), newNamespace(t)
	zoned := zonedDB(ns1, "zoned-owner", "shared-node", "nullb0")
	create(t, zoned)
	passPreflight(t, zoned, "nullb0")
	waitCondition(t, zoned, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, "PreflightPassed")
	for _, other := range []*v1alpha1.ZNSDatabase{deviceDB(ns2, "dev-intruder", "shared-node", "nullb0"),
		deviceDB(ns3, "dev-intruder2", "shared-node", "nullb0")} {
		create(t, other)
		cond := waitCondition(t, other, v1alpha1.ConditionDeviceReady, metav1.ConditionFalse, "DeviceConflict")
		if !strings.Contains(cond.Message, ns1+"/zoned-owner") {
			t.Errorf("%s: conflict message %q does not name the holder", other.Name, cond.Message)
		}
		waitEvent(t, other, "DeviceConflict")
		consistently(t, "the intruder creates nothing", time.Second, func() error {
			return errors.Join(
				absent(client.ObjectKey{Namespace: other.Namespace, Name: other.PreflightJobName()}, &batchv1.Job{}),
				absent(client.ObjectKey{Namespace: other.Namespace, Name: other.FormatJobName()}, &batchv1.Job{}))
		})
	}
	if c := waitCondition(t, zoned, v1alpha1.ConditionDeviceReady, metav1.ConditionTrue, "PreflightPassed"); c.Reason != "PreflightPassed" {
		t.Errorf("the holder lost its device: %+v", c)
	}
}

// TestDeviceAdmission: the precondition's rules at admission.
func TestDeviceAdmission(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	edit := func(name string, f func(*v1alpha1.DevicePreconditionSpec)) *v1alpha1.ZNSDatabase {
		db := deviceDB(ns, name, "n", "vd"+name[:1])
		f(db.Spec.Storage.Device.Precondition)
		return db
	}
	for _, c := range []struct {
		db   *v1alpha1.ZNSDatabase
		want string
	}{
		{edit("a-window", func(p *v1alpha1.DevicePreconditionSpec) { p.RandomRounds, p.SteadyState.Window = 3, 4 }),
			"steadyState.window (default 5) must be at most randomRounds"},
		{edit("b-default-window", func(p *v1alpha1.DevicePreconditionSpec) { p.RandomRounds, p.SteadyState = 3, nil }),
			"steadyState.window (default 5) must be at most randomRounds"},
		{edit("c-nothing", func(p *v1alpha1.DevicePreconditionSpec) { p.SequentialPasses, p.RandomRounds = ptr.To[int32](0), 0 }),
			"writes nothing"},
		{edit("d-small-block", func(p *v1alpha1.DevicePreconditionSpec) { p.SequentialBlockSize = qty("1Ki") }),
			"sequentialBlockSize must be a whole number of bytes from 4Ki to 16Mi"},
		{edit("e-odd-block", func(p *v1alpha1.DevicePreconditionSpec) { p.SequentialBlockSize = qty("6Ki") }),
			"a multiple of 4Ki"},
		{edit("f-big-block", func(p *v1alpha1.DevicePreconditionSpec) { p.SequentialBlockSize = qty("32Mi") }),
			"from 4Ki to 16Mi"},
		{edit("g-rounds", func(p *v1alpha1.DevicePreconditionSpec) { p.RandomRounds = 21 }), "randomRounds"},
		{edit("h-short", func(p *v1alpha1.DevicePreconditionSpec) { p.RoundSeconds = 4 }), "roundSeconds"},
		{edit("i-window1", func(p *v1alpha1.DevicePreconditionSpec) { p.SteadyState.Window = 1 }), "window"},
		{edit("j-range", func(p *v1alpha1.DevicePreconditionSpec) { p.SteadyState.MaxRangePercent = 101 }), "maxRangePercent"},
		{edit("k-passes", func(p *v1alpha1.DevicePreconditionSpec) { p.SequentialPasses = ptr.To[int32](11) }), "sequentialPasses"},
	} {
		err := k8s.Create(ctx, c.db)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a refusal saying %q", c.db.Name, err, c.want)
		}
	}
	both := deviceDB(ns, "both", "n", "vdb")
	both.Spec.Storage.ZonedDevice = &v1alpha1.ZonedDeviceSource{NodeName: "n", DeviceName: "nullb0"}
	if err := k8s.Create(ctx, both); err == nil || !strings.Contains(err.Error(), "exactly one of zonedDevice, zonedClaim, device or volume") {
		t.Errorf("device and zonedDevice: %v", err)
	}
	btrfs := deviceDB(ns, "btrfs", "n", "vdc")
	btrfs.Spec.Storage.Device.Filesystem = "btrfs"
	if err := k8s.Create(ctx, btrfs); err == nil || !strings.Contains(err.Error(), "spec.storage.device.filesystem") {
		t.Errorf("btrfs on a conventional device: %v", err)
	}

	// Accepted: no rounds with a window set; a block size of 1Mi; the defaults; RocksDB on Percona.
	ok := deviceDB(ns, "rounds-zero", "n", "vdd")
	ok.Spec.Storage.Device.Precondition = &v1alpha1.DevicePreconditionSpec{SequentialBlockSize: qty("1Mi"),
		SteadyState: &v1alpha1.PreconditionSteadyStateSpec{Window: 9}}
	create(t, ok)
	got := get(t, ok).Spec.Storage.Device
	if p := got.Precondition; got.Filesystem != v1alpha1.FilesystemExt4 || p.SequentialPasses == nil || *p.SequentialPasses != 2 ||
		p.RoundSeconds != 60 || p.SteadyState.MaxRangePercent != 20 || p.SteadyState.MaxSlopeExcursionPercent != 10 {
		t.Errorf("defaults not applied: %+v %+v", got, p)
	}
	rocks := deviceDB(ns, "rocks", "n", "vde")
	rocks.Spec.Engine, rocks.Spec.Flavor = v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona
	rocks.Spec.Storage.Device.Filesystem = v1alpha1.FilesystemXFS
	rocks.Spec.Format.CapSysAdmin = true // mkfs.xfs's BLKBSZSET
	rocks.Spec.Storage.Device.Precondition = nil
	create(t, rocks)

	// A zoned device is never preconditioned, and admission says why (also to a client that does not validate
	// fields strictly, which would otherwise drop the field without a word).
	for _, src := range []map[string]any{
		{"zonedDevice": map[string]any{"nodeName": "n", "deviceName": "nullb0", "precondition": map[string]any{"sequentialPasses": 2}}},
		{"zonedClaim": map[string]any{"claimName": "c", "deviceName": "nullb0", "precondition": map[string]any{"sequentialPasses": 2}}},
	} {
		u := map[string]any{"apiVersion": v1alpha1.GroupVersion.String(), "kind": "ZNSDatabase",
			"metadata": map[string]any{"name": "zoned-precond", "namespace": ns},
			"spec":     map[string]any{"storage": src}}
		if err := createStrict(u); err == nil || !strings.Contains(err.Error(), "a zoned device is never preconditioned: it has no FTL") {
			t.Errorf("a precondition under %v: %v", src, err)
		}
	}
}

func qty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// createStrict creates obj with the API server's strict field validation, as kubectl apply does: a field the
// schema does not have is an error, not silently dropped.
func createStrict(obj map[string]any) error {
	return k8s.Create(ctx, &unstructured.Unstructured{Object: obj}, client.FieldValidation("Strict"))
}

// With precondition.driveCounters the format Job carries the drive sidecar (counters only, CAP_SYS_ADMIN alone,
// the device through the Block claim), the format waits at its gate, and the drive's own figures of the format's
// writes land in status.precondition.drive once the sidecar has reported.
func TestDevicePreconditionDriveCounters(t *testing.T) {
	requireEnv(t)
	ns := newNamespace(t)
	db := deviceDB(ns, "aged", "dev-node-dc", "nvme1n1")
	db.Spec.Storage.Device.Precondition.DriveCounters = true
	create(t, db)
	report, _ := conventionalPreflight(t, conventionalDevice("nvme1n1", 4<<30))
	finishPreflight(t, db, report, true)
	job := &batchv1.Job{}
	waitObject(t, client.ObjectKey{Namespace: ns, Name: db.FormatJobName()}, job)
	spec := job.Spec.Template.Spec
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].Name != resources.DriveContainer {
		t.Fatalf("format Job init containers %+v, want the drive sidecar", spec.InitContainers)
	}
	sc := spec.InitContainers[0]
	if cmd := strings.Join(sc.Command, " "); cmd != "znsbench drive --phase precondition --target aged --device nvme1n1 --dir /run/zns-drive --counters" ||
		sc.Image != benchTestImage {
		t.Errorf("sidecar %q from %s", cmd, sc.Image)
	}
	if caps := sc.SecurityContext.Capabilities; len(caps.Add) != 1 || caps.Add[0] != "SYS_ADMIN" || len(sc.VolumeDevices) != 1 {
		t.Errorf("sidecar capabilities %+v, devices %+v", caps, sc.VolumeDevices)
	}
	if c := spec.Containers[0]; !strings.HasSuffix(strings.Join(c.Command, " "), "--drive-dir /run/zns-drive") || len(c.SecurityContext.Capabilities.Add) != 0 {
		t.Errorf("format container %q %+v", c.Command, c.SecurityContext)
	}
	rep := recordedDriveReport(t, "qemu-prepare-nvme2n1-fdp.json")
	finishJobWith(t, db, db.FormatJobName(), "format", conventionalFormatReport(t, fsformat.Input{
		Want: fsformat.Labelled{FS: zonedfs.Ext4}, Policy: fsformat.PolicyIfNeeded, Token: "2026-11-27", Found: fsformat.Observed{Empty: true}, Precondition: true,
	}, preconditioned(true, 1000, 1010, 990)), true, &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: rep}})
	eventually(t, "status.precondition.drive from the sidecar", func() error {
		p := get(t, db).Status.Precondition
		if p == nil || p.Drive == nil || p.Drive.Counters == nil || p.Drive.Counters.MediaSource != "fdp" || p.Drive.Counters.MediaWrittenBytes != "8388608" {
			return fmt.Errorf("status.precondition %+v", p)
		}
		return nil
	})
}
