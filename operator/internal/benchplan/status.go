package benchplan

import (
	"fmt"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/benchresult"
)

// NotRequired says why a target need not be in steady state: the methodology ages conventional drives only.
const NotRequired = "zoned target: a ZNS drive has no garbage collection to age, so the methodology runs no write-only phase on it"

// MarkSteadyState records, for a Benchmark without the write-only phase, which targets start their runs
// without it: their results carry the mark.
func MarkSteadyState(b *v1alpha1.Benchmark, ts *v1alpha1.TargetStatus, db *v1alpha1.ZNSDatabase) {
	if ts.SteadyState != nil || b.Spec.SteadyState != nil {
		return
	}
	st := &v1alpha1.SteadyStateStatus{Required: SteadyRequired(b, db), Skipped: NotRequired}
	if st.Required {
		st.Skipped = "no write-only phase ran (spec.steadyState is not set)"
	}
	ts.SteadyState = st
}

// RecordPrepareSize keeps the database size the runner read with the row check, after the prepare.
func RecordPrepareSize(ts *v1alpha1.TargetStatus, sum benchresult.Summary) {
	if sum.DataBytes > 0 {
		ts.Size = &v1alpha1.DataSize{Source: sum.DataBytesSource, AfterPrepareBytes: sum.DataBytes}
	}
}

// RunLabel names a run in progress messages: "run 2/3", in a sweep "run 2/6 (4 threads)", with several
// workloads "run 2/6 (oltp_read_only)", measuring interference "run 2/6 (tenant1 alone)" or "(together)".
func RunLabel(b *v1alpha1.Benchmark, it int32) string {
	l := fmt.Sprintf("run %d/%d", it, b.Spec.Runs())
	switch {
	case len(b.Spec.ThreadSweep) > 0:
		th, _ := b.Spec.RunThreads(it)
		l += fmt.Sprintf(" (%d threads)", th)
	case len(b.Spec.Workloads) > 0:
		l += " (" + b.Spec.RunWorkload(it) + ")"
	case b.Spec.MeasureInterference:
		if alone := b.Spec.RunAlone(it); alone != "" {
			l += " (" + alone + " alone)"
		} else {
			l += " (together)"
		}
	}
	return l
}
