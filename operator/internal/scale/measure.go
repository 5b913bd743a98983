// Package scale measures the operator with many objects (make bench-scale): what it asks of the API server,
// how long its reconciles take, and what memory it holds. The measurement itself lives behind the build tag
// `scale` (scale_test.go), so that go test ./... does not run it; the helpers here are plain and tested.
package scale

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// RequestCounter counts the HTTP requests a client makes to the API server, by verb and resource: wrap a
// rest.Config's transport with it (WrapTransport) and everything built from that config is counted — the
// manager's client and informers, the event recorder, the pod log reader.
type RequestCounter struct {
	mu     sync.Mutex
	counts map[string]map[string]int // namespace ("" for cluster-wide) -> "verb resource" -> count
}

// NewRequestCounter returns an empty counter.
func NewRequestCounter() *RequestCounter { return &RequestCounter{counts: map[string]map[string]int{}} }

// Wrap is a rest.Config WrapTransport function.
func (c *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		verb, resource := Classify(req)
		ns := Namespace(req)
		c.mu.Lock()
		if c.counts[ns] == nil {
			c.counts[ns] = map[string]int{}
		}
		c.counts[ns][verb+" "+resource]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Reset forgets what was counted.
func (c *RequestCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = map[string]map[string]int{}
}

// Snapshot is a copy of the counts over every namespace, keyed "verb resource".
func (c *RequestCounter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for _, m := range c.counts {
		for k, v := range m {
			out[k] += v
		}
	}
	return out
}

// SnapshotIn is a copy of the counts of requests to objects in one namespace.
func (c *RequestCounter) SnapshotIn(namespace string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.counts[namespace] {
		out[k] = v
	}
	return out
}

// Namespace is the namespace a request's path names, "" for cluster-wide requests.
func Namespace(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "namespaces" && (parts[0] == "api" || parts[0] == "apis") {
			return parts[i+1]
		}
	}
	return ""
}

// Writes sums the requests that change something (create, update, patch, delete) in a snapshot.
func Writes(counts map[string]int) int {
	n := 0
	for k, v := range counts {
		if IsWrite(k) {
			n += v
		}
	}
	return n
}

// IsWrite tells whether a snapshot key is a write.
func IsWrite(key string) bool {
	verb, _, _ := strings.Cut(key, " ")
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Format lists a snapshot's keys, writes first, largest first.
func Format(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if IsWrite(keys[i]) != IsWrite(keys[j]) {
			return IsWrite(keys[i])
		}
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %6d  %s\n", counts[k], k)
	}
	return b.String()
}

// Classify names a request to the API server the way the server's audit log does: a verb (get, list, watch,
// create, update, patch, delete, deletecollection) and the resource with its subresource ("pods/log",
// "znsdatabases/status"). Requests outside /api and /apis (discovery, /version) are "get" of their path.
func Classify(req *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:] // api/v1/...
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:] // apis/group/version/...
	default:
		return strings.ToLower(req.Method), req.URL.Path
	}
	if len(rest) >= 2 && rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:] // namespaces/NS/resource/...
	}
	named := len(rest) >= 2
	switch len(rest) {
	case 0:
		resource = "(discovery)"
	case 1, 2:
		resource = rest[0]
	default:
		resource = rest[0] + "/" + rest[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case len(rest) == 0:
			verb = "get"
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb, resource
}

// Histogram is the cumulative buckets of one Prometheus histogram.
type Histogram struct {
	Count   uint64
	Sum     float64
	Uppers  []float64 // bucket upper bounds, ascending, without +Inf
	Cumul   []uint64  // cumulative counts per bound
	Metrics int       // how many series were summed into it
}

// GatherHistogram sums the histogram series of name whose labels include match (e.g. controller=benchmark).
func GatherHistogram(g prometheus.Gatherer, name string, match map[string]string) (Histogram, error) {
	families, err := g.Gather()
	if err != nil {
		return Histogram{}, err
	}
	var h Histogram
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !labelsMatch(m, match) || m.GetHistogram() == nil {
				continue
			}
			hist := m.GetHistogram()
			if h.Metrics == 0 {
				for _, b := range hist.GetBucket() {
					h.Uppers = append(h.Uppers, b.GetUpperBound())
					h.Cumul = append(h.Cumul, 0)
				}
			}
			if len(hist.GetBucket()) != len(h.Uppers) {
				return Histogram{}, fmt.Errorf("%s: series with different buckets", name)
			}
			for i, b := range hist.GetBucket() {
				h.Cumul[i] += b.GetCumulativeCount()
			}
			h.Count += hist.GetSampleCount()
			h.Sum += hist.GetSampleSum()
			h.Metrics++
		}
	}
	return h, nil
}

func labelsMatch(m *dto.Metric, match map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := match[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			found++
		}
	}
	return found == len(match)
}

// Sub is the histogram of what was observed between before and h (both of the same series).
func (h Histogram) Sub(before Histogram) Histogram {
	if before.Metrics == 0 {
		return h
	}
	out := Histogram{Count: h.Count - before.Count, Sum: h.Sum - before.Sum, Uppers: h.Uppers, Metrics: h.Metrics,
		Cumul: make([]uint64, len(h.Cumul))}
	for i := range h.Cumul {
		out.Cumul[i] = h.Cumul[i] - before.Cumul[i]
	}
	return out
}

// Quantile estimates the q-quantile as Prometheus's histogram_quantile does: linear within the bucket that holds
// it, with the lowest bucket starting at 0. Beyond the highest bound it returns that bound. NaN when empty.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 || len(h.Uppers) == 0 {
		return math.NaN()
	}
	rank := q * float64(h.Count)
	lower, below := 0.0, uint64(0)
	for i, upper := range h.Uppers {
		if float64(h.Cumul[i]) >= rank {
			inBucket := h.Cumul[i] - below
			if inBucket == 0 {
				return upper
			}
			return lower + (upper-lower)*(rank-float64(below))/float64(inBucket)
		}
		lower, below = upper, h.Cumul[i]
	}
	return h.Uppers[len(h.Uppers)-1]
}

// Memory is the process's memory: the Go heap after a collection, and the resident set from /proc.
type Memory struct {
	HeapInuse, HeapObjects, Sys uint64
	RSS, PeakRSS                int64 // bytes; VmRSS and VmHWM
}

// ReadMemory collects garbage first, so that the heap figure is what is live, then reads both.
func ReadMemory() (Memory, error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := Memory{HeapInuse: ms.HeapInuse, HeapObjects: ms.HeapObjects, Sys: ms.Sys}
	var err error
	m.RSS, m.PeakRSS, err = ReadProcStatus("/proc/self/status")
	return m, err
}

// ReadProcStatus reads VmRSS and VmHWM (in bytes) from a /proc/<pid>/status text.
func ReadProcStatus(path string) (rss, hwm int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, 0, fmt.Errorf("%s: %s: %q", path, k, v)
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %s: %v", path, k, err)
		}
		if k == "VmRSS" {
			rss = n * 1024
		} else {
			hwm = n * 1024
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("%s: no VmRSS", path)
	}
	return rss, hwm, nil
}
