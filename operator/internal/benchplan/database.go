package benchplan

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// AvailableWith reports whether db is Available with its current spec in the given profile: its configuration
// is in that profile (status.profile, which a lease sets) and its Available condition was set for the
// database's current generation (a change of profile withdraws it in the same status write).
func AvailableWith(db *v1alpha1.ZNSDatabase, profile v1alpha1.Profile) bool {
	c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionAvailable)
	return db.Status.Profile == profile && c != nil && c.Status == metav1.ConditionTrue &&
		c.ObservedGeneration == db.Generation && db.Status.ObservedGeneration == db.Generation
}

// AvailableMessage says why db is or is not Available, from its condition.
func AvailableMessage(db *v1alpha1.ZNSDatabase) string {
	c := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionAvailable)
	switch {
	case c == nil:
		return "no Available condition yet"
	case c.Status == metav1.ConditionTrue && db.Status.Profile != "":
		return fmt.Sprintf("%s in the %s profile (%s)", c.Reason, db.Status.Profile, c.Message)
	}
	return fmt.Sprintf("%s (%s)", c.Reason, c.Message)
}

// ZoneGeometry is the zone geometry of a zoned database's device from its status (nil for a conventional one,
// or before its preflight read the device).
func ZoneGeometry(db *v1alpha1.ZNSDatabase) *v1alpha1.ZoneGeometry {
	d := db.Status.Device
	if !db.IsZoned() || d == nil || d.Zones == 0 {
		return nil
	}
	g := &v1alpha1.ZoneGeometry{Device: strings.TrimPrefix(d.Path, "/dev/"), Count: d.Zones, MaxOpen: d.MaxOpenZones,
		MaxActive: d.MaxActiveZones}
	if d.Node != "" {
		g.Device = d.Node + "/" + g.Device
	}
	if d.ZoneSize != nil {
		q := d.ZoneSize.DeepCopy()
		g.Size = &q
	}
	if d.ZoneCapacity != nil {
		q := d.ZoneCapacity.DeepCopy()
		g.Capacity = &q
	}
	return g
}

// SteadyRequired tells whether the methodology wants the target in steady state before its runs.
func SteadyRequired(b *v1alpha1.Benchmark, db *v1alpha1.ZNSDatabase) bool {
	return !db.IsZoned() || b.Spec.SteadyState != nil && b.Spec.SteadyState.AllTargets
}

// RunnerConnections is what the count adds to sysbench's threads: the runner's own connection (the row check,
// the size, dropping old tables). It comes before and after sysbench, not during; counting it anyway leaves one
// connection for whoever else connects meanwhile (a person with mysql, the metrics sidecar).
const RunnerConnections = 1

// ConnectionDemand is the most connections a Benchmark opens against one target, and the spec field that sets it.
type ConnectionDemand struct {
	Field   string
	Threads int32
}

// Total counts the runner's own connection too.
func (d ConnectionDemand) Total() int64 { return int64(d.Threads) + RunnerConnections }

// ConnectionsNeeded is the largest thread count the Benchmark runs against db: the runs' (threads, or the
// largest of a sweep), the write-only rounds' when db takes part in them, and the prepare's when there is one.
func ConnectionsNeeded(b *v1alpha1.Benchmark, db *v1alpha1.ZNSDatabase) ConnectionDemand {
	s := &b.Spec
	d := ConnectionDemand{Field: "threads", Threads: s.Threads}
	if len(s.ThreadSweep) > 0 {
		d = ConnectionDemand{Field: "threadSweep", Threads: slices.Max(s.ThreadSweep)}
	}
	if st := s.SteadyState; st != nil && st.Threads > d.Threads && SteadyRequired(b, db) {
		d = ConnectionDemand{Field: "steadyState.threads", Threads: st.Threads}
	}
	switch load := int32(ycsbLoadThreads(b, db)); {
	case s.Prepare != nil && !*s.Prepare:
	case IsYCSB(b) && load > d.Threads:
		d = ConnectionDemand{Field: "ycsb.loadThreads", Threads: load}
	case !IsYCSB(b) && s.PrepareThreads > d.Threads:
		d = ConnectionDemand{Field: "prepareThreads", Threads: s.PrepareThreads}
	}
	return d
}
