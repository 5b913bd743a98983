package controller

import (
	"context"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchplan"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/failreason"
)

// A database serves one Benchmark at a time: two would flip its profile against each other and drop each
// other's tables. The holder is written on the database (annotations AnnotationBenchmark and
// AnnotationBenchmarkUID), where kubectl shows it, with optimistic concurrency, so that two Benchmarks cannot
// both take it even when the operator's cache lags. A Benchmark takes all of its targets, in name order, or
// none. The lease also carries the profile the database runs while held (AnnotationBenchmarkProfile: bulkload
// for the prepare, workload otherwise); the database's spec.profile is the user's and is never written. When
// the lease ends the database returns to its own profile, whoever ends it: the Benchmark when it finishes or
// is deleted, or the ZNSDatabase reconciler when the Benchmark is gone (znsdatabase_lease.go).

func leaseOf(db *v1alpha1.ZNSDatabase) (name, uid string) {
	a := db.GetAnnotations()
	return a[v1alpha1.AnnotationBenchmark], a[v1alpha1.AnnotationBenchmarkUID]
}

func holds(b *v1alpha1.Benchmark, db *v1alpha1.ZNSDatabase) bool {
	_, uid := leaseOf(db)
	return uid != "" && uid == string(b.UID)
}

// heldByOther names the live Benchmark other than b that holds db, "" when db is free for b. A lease whose
// Benchmark is gone (deleted without its finalizer, or re-created under the same name) is free.
func (r *BenchmarkReconciler) heldByOther(ctx context.Context, b *v1alpha1.Benchmark, db *v1alpha1.ZNSDatabase) (string, error) {
	name, uid := leaseOf(db)
	if uid == "" || uid == string(b.UID) {
		return "", nil
	}
	live, err := leaseHolderLive(ctx, uncached(r.APIReader, r.Client), db)
	if err != nil || !live {
		return "", err
	}
	return name, nil
}

// leaseHolderLive tells whether the Benchmark a lease on db names still exists (the same one: its UID). It is
// read from the API server, not the cache, so that a Benchmark created a moment ago is not taken for gone.
func leaseHolderLive(ctx context.Context, reader client.Reader, db *v1alpha1.ZNSDatabase) (bool, error) {
	name, uid := leaseOf(db)
	holder := &v1alpha1.Benchmark{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: db.Namespace, Name: name}, holder)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return string(holder.UID) == uid, nil
}

// uncached is the reader past the cache where one was given (the manager's API reader), else the client.
func uncached(api client.Reader, c client.Client) client.Reader {
	if api != nil {
		return api
	}
	return c
}

// acquire takes every database for b, in name order (a global order: no two Benchmarks can each wait for what
// the other took). When another Benchmark gets one first, b gives back what it took in this call and reports
// false: a waiting Benchmark holds nothing.
func (r *BenchmarkReconciler) acquire(ctx context.Context, b *v1alpha1.Benchmark, dbs []*v1alpha1.ZNSDatabase) (bool, error) {
	sorted := append([]*v1alpha1.ZNSDatabase(nil), dbs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var taken []*v1alpha1.ZNSDatabase
	for _, db := range sorted {
		if holds(b, db) {
			continue
		}
		patch := client.MergeFromWithOptions(db.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if db.Annotations == nil {
			db.Annotations = map[string]string{}
		}
		db.Annotations[v1alpha1.AnnotationBenchmark] = b.Name
		db.Annotations[v1alpha1.AnnotationBenchmarkUID] = string(b.UID)
		db.Annotations[v1alpha1.AnnotationBenchmarkProfile] = string(v1alpha1.ProfileWorkload)
		err := r.Patch(ctx, db, patch)
		if apierrors.IsConflict(err) {
			for _, t := range taken {
				if rerr := r.release(ctx, b, t); rerr != nil {
					return false, rerr
				}
			}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		taken = append(taken, db)
	}
	return true, nil
}

// release gives db back if b holds it.
func (r *BenchmarkReconciler) release(ctx context.Context, b *v1alpha1.Benchmark, db *v1alpha1.ZNSDatabase) error {
	if !holds(b, db) {
		return nil
	}
	patch := client.MergeFromWithOptions(db.DeepCopy(), client.MergeFromWithOptimisticLock{})
	dropLease(db)
	return r.Patch(ctx, db, patch)
}

// releaseAll gives back every target b holds; each returns to its own profile (spec.profile) with the lease.
func (r *BenchmarkReconciler) releaseAll(ctx context.Context, b *v1alpha1.Benchmark) error {
	for _, tg := range b.Spec.Targets {
		db, err := r.getDB(ctx, b, tg.Name)
		if err != nil {
			return err
		}
		ts := targetStatus(b, tg.Name)
		if db == nil {
			if ts != nil {
				ts.ProfileSwitched = false
			}
			continue
		}
		switched := holds(b, db) && db.LeaseProfile() != db.Spec.Profile
		if err := r.release(ctx, b, db); err != nil {
			return err
		}
		if ts != nil && ts.ProfileSwitched {
			ts.ProfileSwitched = false
		}
		if switched {
			event.ProfileSwitched.Emit(b, r.Recorder, db.Name, db.Spec.Profile, "the lease ended: the database's own profile")
		}
	}
	return nil
}

// setLeaseProfile has a held database run profile p (the ZNSDatabase reconciler then rolls its pod). A
// database b does not hold is left alone: its profile is its owner's business.
func (r *BenchmarkReconciler) setLeaseProfile(ctx context.Context, b *v1alpha1.Benchmark, db *v1alpha1.ZNSDatabase, p v1alpha1.Profile) error {
	if !holds(b, db) || db.Annotations[v1alpha1.AnnotationBenchmarkProfile] == string(p) {
		return nil
	}
	patch := client.MergeFromWithOptions(db.DeepCopy(), client.MergeFromWithOptimisticLock{})
	db.Annotations[v1alpha1.AnnotationBenchmarkProfile] = string(p)
	return r.Patch(ctx, db, patch)
}

// keepsProfile fails a target whose lease no longer names the workload profile (benchplan.KeepsProfile says
// when and why) and stops its Jobs.
func (r *BenchmarkReconciler) keepsProfile(ctx context.Context, b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase) (bool, error) {
	ok, msg := benchplan.KeepsProfile(ts, db)
	if ok {
		return true, nil
	}
	ts.ProfileSwitched = true
	r.failTarget(b, ts, event.ProfileChanged, failreason.ProfileChanged, msg)
	return false, r.stopJobs(ctx, b, ts.Name)
}

// noticeProfiles runs keepsProfile on the targets that were past their prepare when the Benchmark ended or was
// deleted, so that a switch made while the operator was down is handed back too. Only databases the Benchmark
// still holds are looked at: once released, a database's profile is its owner's business again.
func (r *BenchmarkReconciler) noticeProfiles(ctx context.Context, b *v1alpha1.Benchmark) error {
	for _, ts := range active(b) {
		if ts.State != v1alpha1.TargetVerified {
			continue
		}
		db, err := r.getDB(ctx, b, ts.Name)
		if err != nil {
			return err
		}
		if db == nil || !holds(b, db) {
			continue
		}
		if _, err := r.keepsProfile(ctx, b, ts, db); err != nil {
			return err
		}
	}
	return nil
}
