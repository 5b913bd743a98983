package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
)

// A Benchmark that holds a database sets the profile it runs through its lease (benchmark_lease.go), never
// through spec.profile, which is the user's. This step turns the lease into the profile of the configuration:
// the lease's while its Benchmark exists, the database's own once it does not. A lease whose Benchmark is gone
// (its finalizer removed by hand, or deleted and re-created under the same name while the operator was down)
// is ended here, so that the database does not stay in bulkload for a Benchmark that will never hand it back.

// reconcileProfile records the profile in effect in status.profile and in st for the configuration.
func (r *ZNSDatabaseReconciler) reconcileProfile(ctx context.Context, st *state) (*ctrl.Result, error) {
	db := st.db
	st.profile = db.Spec.Profile
	if db.Leased() {
		live, err := leaseHolderLive(ctx, uncached(r.APIReader, r.Client), db)
		if err != nil {
			return nil, err
		}
		if live {
			st.profile, st.heldBy = db.LeaseProfile(), db.Annotations[v1alpha1.AnnotationBenchmark]
		} else if err := r.endStaleLease(ctx, db); err != nil {
			return nil, err
		}
	}
	if st.profile == "" { // a database created before the API server applied spec.profile's default
		st.profile = v1alpha1.ProfileWorkload
	}
	db.Status.Profile = st.profile
	return nil, nil
}

// endStaleLease removes a lease whose Benchmark is gone, with optimistic concurrency: a Benchmark taking the
// database at the same moment wins, and this reconcile starts again.
func (r *ZNSDatabaseReconciler) endStaleLease(ctx context.Context, db *v1alpha1.ZNSDatabase) error {
	holder := db.Annotations[v1alpha1.AnnotationBenchmark]
	patch := client.MergeFromWithOptions(db.DeepCopy(), client.MergeFromWithOptimisticLock{})
	dropLease(db)
	if err := r.Patch(ctx, db, patch); err != nil {
		return err
	}
	event.LeaseEnded.Emit(db, r.Recorder, holder, db.Spec.Profile)
	return nil
}

// dropLease removes the lease's annotations from db (in memory).
func dropLease(db *v1alpha1.ZNSDatabase) {
	delete(db.Annotations, v1alpha1.AnnotationBenchmark)
	delete(db.Annotations, v1alpha1.AnnotationBenchmarkUID)
	delete(db.Annotations, v1alpha1.AnnotationBenchmarkProfile)
}
