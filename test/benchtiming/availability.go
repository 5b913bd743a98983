package benchtiming

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// Recorder notes when databases were not Available, by polling them: the cluster keeps only the last
// transition of a condition, so the stretches of a run's restarts must be seen while they happen.
type Recorder struct {
	mu     sync.Mutex
	open   map[string]time.Time
	closed []Interval
	cancel context.CancelFunc
	done   chan struct{}
}

// RecordAvailability polls the named databases of a namespace every interval until Stop. A database counts
// as unavailable while its Available condition is not True; one that cannot be read is not counted.
func RecordAvailability(ctx context.Context, c client.Reader, namespace string, names []string, every time.Duration) *Recorder {
	ctx, cancel := context.WithCancel(ctx)
	r := &Recorder{open: map[string]time.Time{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			for _, name := range names {
				db := &v1alpha1.ZNSDatabase{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, db); err != nil {
					continue
				}
				r.observe(name, time.Now(), meta.IsStatusConditionPresentAndEqual(db.Status.Conditions, v1alpha1.ConditionAvailable, metav1.ConditionTrue))
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(every):
			}
		}
	}()
	return r
}

func (r *Recorder) observe(name string, now time.Time, available bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	since, down := r.open[name]
	switch {
	case !available && !down:
		r.open[name] = now
	case available && down:
		r.closed = append(r.closed, Interval{What: name + " not Available", From: since, To: now})
		delete(r.open, name)
	}
}

// Stop ends the polling and returns the stretches seen; one still open ends now.
func (r *Recorder) Stop() []Interval {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	out := append([]Interval(nil), r.closed...)
	for name, since := range r.open {
		out = append(out, Interval{What: name + " not Available", From: since, To: now})
	}
	return out
}
