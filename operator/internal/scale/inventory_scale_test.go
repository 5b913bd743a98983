//go:build scale

package scale

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/inventoryagent"
)

// TestInventoryScale measures the device inventory of a fleet against a real kube-apiserver and etcd (envtest):
// ZNS_SCALE_NODES Nodes (default 200) with ZNS_SCALE_DEVICES_PER_NODE zoned devices each (default 4), every node
// a sysfs tree under a temporary directory (inventory_fleet_test.go) read by the real agent (inventoryagent's
// Sync, the body of its Run loop), one client per agent, all of them counted apart from the operator's manager
// (startManager, wired as cmd/manager). The agents' clients share the process's HTTP transport (client-go caches
// it by TLS config), where a real fleet has a connection per node. It prints, on lines starting INVENTORY-SCALE:
// the time to publish every device from cold and the agents' requests for it; the same for a rescan where
// nothing changed (asserted: no write) and one where one device per node changed (asserted: one write per
// node); then, for ZNS_SCALE_PLACED
// ZNSDatabases (default 100) created at once that ask by requirements, the time until each has its binding
// and what the operator wrote for it; reconcile p50/p99 per controller; the operator's writes while idle for
// ZNS_SCALE_IDLE seconds (default 60; reported, as TestScale does); memory.
//
// There is no kubelet: nodes run nothing and nothing is formatted. The binding (status.deviceBinding and the
// device's claimRef) comes before the preflight, so the test plays no other part: the preflight Jobs of the
// bound databases are created and never run. It asserts the behaviour: no device given to two databases,
// every binding meets its requirements and ZenFS's floors, and a database that no free device fits reports
// NoDeviceFits.
func TestInventoryScale(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs KUBEBUILDER_ASSETS (make bench-scale sets it from hack/envtest-assets.sh)")
	}
	nNodes, perNode := envInt(t, "ZNS_SCALE_NODES", 200), envInt(t, "ZNS_SCALE_DEVICES_PER_NODE", 4)
	nPlaced := envInt(t, "ZNS_SCALE_PLACED", 100)
	idle := time.Duration(envInt(t, "ZNS_SCALE_IDLE", 60)) * time.Second
	settleBy := time.Duration(envInt(t, "ZNS_SCALE_CONVERGE", 15)) * time.Minute
	report := func(format string, args ...any) { t.Helper(); t.Logf("INVENTORY-SCALE "+format, args...) }

	cfg, scheme, k8s := startEnvtest(t)
	opCounter, agentCounter := NewRequestCounter(), NewRequestCounter()
	t.Cleanup(startManager(t, cfg, scheme, opCounter))
	memBefore, _ := ReadMemory()
	h0 := reconcileHists(t, invControllers, nil)
	ctx := context.Background()

	// The fleet: Nodes, their sysfs trees, and one agent each with its own client, throttled as `manager
	// inventory` is (ctrl.GetConfig: 20 QPS, burst 30).
	agentCfg := rest.CopyConfig(cfg)
	agentCfg.QPS, agentCfg.Burst = 20, 30
	agentCfg.WrapTransport = agentCounter.Wrap
	root := t.TempDir()
	agentLog := logr.Discard()
	if os.Getenv("ZNS_TEST_VERBOSE") != "" {
		agentLog = logf.Log.WithName("inventory")
	}
	agents := make([]*inventoryagent.Agent, nNodes)
	for n := range nNodes {
		name := fleetNodeName(n)
		if err := k8s.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: fleetNodeLabels(n)}}); err != nil {
			t.Fatal(err)
		}
		sys := filepath.Join(root, name, "sys")
		for d := range perNode {
			if err := writeSysfs(sys, fleetDevice(n, d)); err != nil {
				t.Fatal(err)
			}
		}
		c, err := client.New(agentCfg, client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		agents[n] = &inventoryagent.Agent{Client: c, NodeName: name, SysRoot: sys, Log: agentLog.WithValues("node", name)}
	}
	report("fleet: %d nodes x %d devices = %d zoned devices, simulated (sysfs trees, no kubelet); envtest on %d CPUs",
		nNodes, perNode, nNodes*perNode, goruntime.NumCPU())

	opCounter.Reset()
	cold := scanFleet(t, ctx, agents, agentCounter)
	if present, gone := countDevices(t, ctx, k8s); present != nNodes*perNode || gone != 0 {
		t.Fatalf("after the first scan: %d devices Present and %d Gone, want %d and 0", present, gone, nNodes*perNode)
	}
	report("publish from cold, %d ZonedDevices: %s", nNodes*perNode, cold)
	report("  agents' requests for it:\n%s", Format(cold.requests))

	same := scanFleet(t, ctx, agents, agentCounter)
	report("rescan, nothing changed: %s", same)
	if w := Writes(same.requests); w != 0 {
		t.Errorf("a rescan where nothing changed wrote %d times:\n%s", w, Format(same.requests))
	}

	for n, a := range agents {
		if err := changeOneDevice(a.SysRoot, n, perNode); err != nil {
			t.Fatal(err)
		}
	}
	changed := scanFleet(t, ctx, agents, agentCounter)
	present, gone := countDevices(t, ctx, k8s)
	report("rescan, one device per node changed (%d removed: Gone; %d switched to the scheduler none): %s", gone, nNodes-gone, changed)
	if w, wantGone := Writes(changed.requests), (nNodes+1)/2; w != nNodes || gone != wantGone || present != nNodes*perNode-wantGone {
		t.Errorf("the scan that changed one device per node: %d writes (want %d), %d Present and %d Gone (want %d and %d):\n%s",
			w, nNodes, present, gone, nNodes*perNode-wantGone, wantGone, Format(changed.requests))
	}
	again := scanFleet(t, ctx, agents, agentCounter)
	report("rescan after the change, nothing changed: %s", again)
	if w := Writes(again.requests); w != 0 {
		t.Errorf("a rescan after the change wrote %d times:\n%s", w, Format(again.requests))
	}

	// The agents' clients (each with its own discovery and REST mapper) are a fleet's, not the operator's: their
	// memory is read now, and then let go, so that the last figure is the manager's.
	memAgents, err := ReadMemory()
	if err != nil {
		t.Fatal(err)
	}
	report("memory of the test process with the manager and %d agents' clients: heap in use %.1f MiB (%.1f MiB before the fleet), RSS %.1f MiB, peak RSS %.1f MiB",
		nNodes, mib(memAgents.HeapInuse), mib(memBefore.HeapInuse), mib(uint64(memAgents.RSS)), mib(uint64(memAgents.PeakRSS)))
	agents = nil

	// The operator saw every event of those scans; a moment lets the last reconciles of them pass.
	time.Sleep(3 * time.Second)
	opInventory, h1 := opCounter.Snapshot(), reconcileHists(t, invControllers, nil)
	report("operator during the 4 scans: %d API requests, %d writes", total(opInventory), Writes(opInventory))
	reportReconciles(report, subHists(h1, h0))

	// Placement: databases created at once, each timed from its create to its binding (or NoDeviceFits) as a
	// watch sees it.
	nNS := (nPlaced + 9) / 10
	for i := range nNS {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("placed-%02d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	t.Cleanup(stopWatch)
	seen := watchBindings(t, watchCtx, k8s)
	opCounter.Reset()
	start := time.Now()
	dbs := make([]*v1alpha1.ZNSDatabase, nPlaced)
	fitsNone := make([]bool, nPlaced)
	created := make([]time.Time, nPlaced)
	errs := make([]error, nPlaced)
	var wg sync.WaitGroup
	for i := range nPlaced {
		var req v1alpha1.DeviceRequirements
		req, fitsNone[i] = placedRequirements(i)
		dbs[i] = placedDatabase(fmt.Sprintf("placed-%02d", i/10), fmt.Sprintf("db-%03d", i), req)
		wg.Go(func() { created[i] = time.Now(); errs[i] = k8s.Create(ctx, dbs[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	createWall := time.Since(start)
	for next := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		n := seen.settled(dbs)
		if n == nPlaced {
			break
		}
		if time.Since(start) > settleBy {
			t.Fatalf("after %s (ZNS_SCALE_CONVERGE minutes) %d of %d databases have a binding or NoDeviceFits:\n%s",
				time.Since(start).Round(time.Second), n, nPlaced, Format(opCounter.Snapshot()))
		}
		if time.Now().After(next) {
			report("  %s: %d of %d databases bound or NoDeviceFits", time.Since(start).Round(time.Second), n, nPlaced)
			next = time.Now().Add(30 * time.Second)
		}
	}
	settled := time.Since(start)
	opPlacement, h2 := opCounter.Snapshot(), reconcileHists(t, invControllers, nil)
	var toBind, toNoFit []time.Duration
	for i, db := range dbs {
		if at, ok := seen.boundAt(db); ok {
			toBind = append(toBind, at.Sub(created[i]))
		} else if at, ok := seen.noFitAt(db); ok {
			toNoFit = append(toNoFit, at.Sub(created[i]))
		}
	}
	report("placement: %d ZNSDatabases by requirements in %d namespaces, created in %s; all bound or NoDeviceFits %s after the first create",
		nPlaced, nNS, createWall.Round(time.Millisecond), settled.Round(time.Millisecond))
	report("  create -> status.deviceBinding, %d databases: %s", len(toBind), quantiles(toBind))
	report("  create -> NoDeviceFits, %d databases: %s", len(toNoFit), quantiles(toNoFit))
	report("  operator until then: %d API requests, %d writes (%.1f writes per database)\n%s", total(opPlacement), Writes(opPlacement),
		float64(Writes(opPlacement))/float64(nPlaced), Format(opPlacement))
	reportReconciles(report, subHists(h2, h1))
	checkPlacement(t, ctx, k8s, dbs, fitsNone, nNodes)

	// Idle: nothing changes; per minute, so that a tail of the placement tells from a steady cause.
	time.Sleep(5 * time.Second)
	opCounter.Reset()
	h3 := reconcileHists(t, invControllers, nil)
	prev := 0
	eachMinute(idle, func(elapsed, step time.Duration) {
		w := Writes(opCounter.Snapshot())
		report("  idle %s: %d operator writes in the last %s", elapsed, w-prev, step)
		prev = w
	})
	quiet, h4 := opCounter.Snapshot(), reconcileHists(t, invControllers, nil)
	report("operator idle %s (%d bound databases waiting for their preflight, %d waiting for a device): %.1f writes/min, %.1f requests/min",
		idle, len(toBind), len(toNoFit), float64(Writes(quiet))/idle.Minutes(), float64(total(quiet))/idle.Minutes())
	report("  requests while idle:\n%s", Format(quiet))
	reportReconciles(report, subHists(h4, h3))
	// Read at the end: the event recorder writes behind the reconciles, and had not written them all when the
	// last binding was seen.
	report("Events on the databases, by reason: %s", eventReasons(t, ctx, k8s))

	mem, _ := ReadMemory() // its error was reported above
	report("memory of the test process at the end (manager and the test's client; the agents' clients let go): heap in use %.1f MiB (%d objects), Go sys %.1f MiB, RSS %.1f MiB, peak RSS %.1f MiB",
		mib(mem.HeapInuse), mem.HeapObjects, mib(mem.Sys), mib(uint64(mem.RSS)), mib(uint64(mem.PeakRSS)))
}

// invControllers are the controllers the inventory and placement exercise (no Benchmark exists here).
var invControllers = []string{"znsdatabase", "zoneddevice-holder"}

func subHists(after, before map[string]Histogram) map[string]Histogram {
	out := map[string]Histogram{}
	for c, h := range after {
		out[c] = h.Sub(before[c])
	}
	return out
}

func reportReconciles(report func(string, ...any), hists map[string]Histogram) {
	for _, c := range invControllers {
		if h := hists[c]; h.Count > 0 {
			report("  %-18s %6d reconciles  p50 %7.1f ms  p99 %7.1f ms", c, h.Count, h.Quantile(0.5)*1000, h.Quantile(0.99)*1000)
		} else {
			report("  %-18s %6d reconciles", c, 0)
		}
	}
}

// fleetScan is one scan of every node: how long it took in all and per agent, and the agents' requests.
type fleetScan struct {
	wall     time.Duration
	each     []time.Duration
	requests map[string]int
}

func (s fleetScan) String() string {
	return fmt.Sprintf("%s in all, per agent %s; agents' API requests %d, writes %d", s.wall.Round(time.Millisecond),
		quantiles(s.each), total(s.requests), Writes(s.requests))
}

// scanFleet runs every agent's Sync at once, as a fleet's agents do after a rollout (their periodic scans are
// spread over the interval, which only makes it lighter), and counts what they asked of the API server.
func scanFleet(t *testing.T, ctx context.Context, agents []*inventoryagent.Agent, counter *RequestCounter) fleetScan {
	t.Helper()
	counter.Reset()
	s := fleetScan{each: make([]time.Duration, len(agents))}
	errs := make([]error, len(agents))
	start := time.Now()
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() { began := time.Now(); errs[i] = a.Sync(ctx); s.each[i] = time.Since(began) })
	}
	wg.Wait()
	s.wall, s.requests = time.Since(start), counter.Snapshot()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return s
}

func countDevices(t *testing.T, ctx context.Context, k8s client.Client) (present, gone int) {
	t.Helper()
	list := &v1alpha1.ZonedDeviceList{}
	if err := k8s.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	for _, d := range list.Items {
		switch d.Status.State {
		case v1alpha1.ZonedDevicePresent:
			present++
		case v1alpha1.ZonedDeviceGone:
			gone++
		}
	}
	return present, gone
}

// quantiles is "p50 X, p99 Y, max Z" of durations (nearest rank).
func quantiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Sorted(slices.Values(ds))
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("p50 %s, p99 %s, max %s", r(at(0.5)), r(at(0.99)), r(s[len(s)-1]))
}

// bindingWatch records when a watch first saw each database bound, and first saw it refused with NoDeviceFits.
type bindingWatch struct {
	mu           sync.Mutex
	bound, noFit map[string]time.Time
}

func key(db *v1alpha1.ZNSDatabase) string { return db.Namespace + "/" + db.Name }

// watchBindings opens the watch before it returns, so that no create is missed; it reopens it if the API server
// ends it, until ctx ends.
func watchBindings(t *testing.T, ctx context.Context, c client.WithWatch) *bindingWatch {
	t.Helper()
	b := &bindingWatch{bound: map[string]time.Time{}, noFit: map[string]time.Time{}}
	w, err := c.Watch(ctx, &v1alpha1.ZNSDatabaseList{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			for ev := range w.ResultChan() {
				db, ok := ev.Object.(*v1alpha1.ZNSDatabase)
				if !ok {
					continue
				}
				now, k := time.Now(), key(db)
				cond := meta.FindStatusCondition(db.Status.Conditions, v1alpha1.ConditionDeviceReady)
				b.mu.Lock()
				if _, done := b.bound[k]; !done && db.Status.DeviceBinding != nil {
					b.bound[k] = now
				}
				if _, done := b.noFit[k]; !done && cond != nil && cond.Reason == v1alpha1.ReasonNoDeviceFits {
					b.noFit[k] = now
				}
				b.mu.Unlock()
			}
			w.Stop()
			if ctx.Err() != nil {
				return
			}
			if w, err = c.Watch(ctx, &v1alpha1.ZNSDatabaseList{}); err != nil {
				return
			}
		}
	}()
	return b
}

func (b *bindingWatch) settled(dbs []*v1alpha1.ZNSDatabase) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, db := range dbs {
		_, bound := b.bound[key(db)]
		_, noFit := b.noFit[key(db)]
		if bound || noFit {
			n++
		}
	}
	return n
}

func (b *bindingWatch) boundAt(db *v1alpha1.ZNSDatabase) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	at, ok := b.bound[key(db)]
	return at, ok
}

func (b *bindingWatch) noFitAt(db *v1alpha1.ZNSDatabase) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	at, ok := b.noFit[key(db)]
	return at, ok
}

// eventReasons counts the Events on ZNSDatabases by reason, with the recorder's aggregated counts.
func eventReasons(t *testing.T, ctx context.Context, k8s client.Client) string {
	t.Helper()
	list := &corev1.EventList{}
	if err := k8s.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "ZNSDatabase" {
			count[e.Reason] += int(max(e.Count, 1))
		}
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%s %d", r, count[r]))
	}
	return strings.Join(parts, ", ")
}
