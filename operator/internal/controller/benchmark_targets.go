package controller

import (
	"context"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/deviceid"
)

// getDB reads a target's ZNSDatabase; nil when it does not exist.
func (r *BenchmarkReconciler) getDB(ctx context.Context, b *v1alpha1.Benchmark, name string) (*v1alpha1.ZNSDatabase, error) {
	db := &v1alpha1.ZNSDatabase{}
	err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, db)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return db, err
}

// waitForTargets gathers what the WaitingForTargets decision needs (benchplan.Targets), has it decided, and
// carries the decision out. Taking the leases is the one action whose outcome the decision depends on: once
// they are taken (the databases then carry them), the same observation is decided again, so that a Benchmark
// whose targets are ready moves on in the reconcile that took them.
func (r *BenchmarkReconciler) waitForTargets(ctx context.Context, b *v1alpha1.Benchmark) (ctrl.Result, error) {
	obs, err := r.observeTargets(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	plan := benchplan.Targets(obs)
	if plan.Has(benchplan.Acquire) {
		var dbs []*v1alpha1.ZNSDatabase
		for _, db := range obs.Databases {
			dbs = append(dbs, db)
		}
		if ok, err := r.acquire(ctx, b, dbs); err != nil {
			return ctrl.Result{}, err
		} else if !ok { // another Benchmark took one first: look again, it will show as busy
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		plan = benchplan.Targets(obs)
	}
	return r.carryOut(ctx, b, plan)
}

// observeTargets reads the targets' databases, the devices under them, which other live Benchmark holds each,
// and their max_connections.
func (r *BenchmarkReconciler) observeTargets(ctx context.Context, b *v1alpha1.Benchmark) (benchplan.TargetsObserved, error) {
	obs := benchplan.TargetsObserved{Benchmark: b, Databases: map[string]*v1alpha1.ZNSDatabase{},
		HeldByOther: map[string]string{}, Devices: map[string]deviceid.ID{}, Now: r.now()}
	for _, tg := range b.Spec.Targets {
		db, err := r.getDB(ctx, b, tg.Name)
		if err != nil {
			return obs, err
		}
		if db == nil {
			continue
		}
		obs.Databases[tg.Name] = db
		if obs.Devices[tg.Name], err = r.deviceOf(ctx, db); err != nil {
			return obs, err
		}
		holder, err := r.heldByOther(ctx, b, db)
		if err != nil {
			return obs, err
		}
		if holder != "" {
			obs.HeldByOther[tg.Name] = holder
		}
	}
	if !allAvailable(b, obs.Databases) {
		// The decision reads max_connections only once every target exists and is Available; until then a
		// waiting Benchmark polls every few seconds, and reading each target's ConfigMap past the cache then
		// was most of an idle operator's requests (make bench-scale: 480 reads a minute for 20 waiting ones).
		return obs, nil
	}
	var err error
	obs.MaxConnections, err = r.maxConnectionsOf(ctx, obs.Databases)
	return obs, err
}

// allAvailable: every target of b was found and is Available in the workload profile.
func allAvailable(b *v1alpha1.Benchmark, dbs map[string]*v1alpha1.ZNSDatabase) bool {
	if len(dbs) != len(b.Spec.Targets) {
		return false
	}
	for _, db := range dbs {
		if !benchplan.AvailableWith(db, v1alpha1.ProfileWorkload) {
			return false
		}
	}
	return true
}

// deviceOf is the device under a database: a zoned or raw device as its preflight saw it, or the local device
// of a volume's PersistentVolume; zero when not known.
func (r *BenchmarkReconciler) deviceOf(ctx context.Context, db *v1alpha1.ZNSDatabase) (deviceid.ID, error) {
	if d := db.Status.Device; d != nil && d.Path != "" {
		return deviceid.ID{Node: d.Node, Device: strings.TrimPrefix(d.Path, "/dev/")}, nil
	}
	if db.Spec.Storage.Volume != nil {
		return r.volumeDevice(ctx, db)
	}
	return deviceid.ID{}, nil
}

func targetStatus(b *v1alpha1.Benchmark, name string) *v1alpha1.TargetStatus {
	return benchplan.TargetStatus(&b.Status, name)
}
