package controller

import (
	"context"
	"fmt"
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
	var err error
	obs.MaxConnections, err = r.maxConnectionsOf(ctx, obs.Databases)
	return obs, err
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

// carryOut applies a decision: its status, then its actions, then its Events. An action that fails leaves the
// status as it was, and the next reconcile decides again from what then exists; nothing it said is announced.
func (r *BenchmarkReconciler) carryOut(ctx context.Context, b *v1alpha1.Benchmark, plan benchplan.Plan) (ctrl.Result, error) {
	before := b.Status.DeepCopy()
	b.Status = plan.Status
	for _, a := range plan.Actions {
		if err := r.act(ctx, b, a); err != nil {
			b.Status = *before
			return ctrl.Result{}, err
		}
	}
	for _, e := range plan.Events {
		e.Event.Emit(b, r.Recorder, e.Args...)
	}
	switch {
	case plan.Requeue:
		return requeue, nil
	case plan.RequeueAfter > 0:
		return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
	}
	return ctrl.Result{}, nil
}

// act carries out one action of a decision.
func (r *BenchmarkReconciler) act(ctx context.Context, b *v1alpha1.Benchmark, a benchplan.Action) error {
	switch a.Kind {
	case benchplan.ReleaseAll:
		return r.releaseAll(ctx, b)
	case benchplan.Settle:
		return r.settle(ctx, b)
	case benchplan.StopJobs:
		return r.stopJobs(ctx, b, a.Target)
	case benchplan.KeepSeries:
		return r.writeSeries(ctx, b, a)
	case benchplan.SetLeaseProfile, benchplan.CreateJob:
		db, err := r.getDB(ctx, b, a.Target)
		if err != nil || db == nil { // gone since it was read: the next decision fails the target
			return err
		}
		if a.Kind == benchplan.SetLeaseProfile {
			return r.setLeaseProfile(ctx, b, db, a.Profile)
		}
		return r.createJob(ctx, b, a.Phase, a.Iteration, a.StartAt, db)
	}
	return fmt.Errorf("internal error: action %s is not carried out here", a)
}

func targetStatus(b *v1alpha1.Benchmark, name string) *v1alpha1.TargetStatus {
	return benchplan.TargetStatus(&b.Status, name)
}
