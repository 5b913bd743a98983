package debugbundle

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// Source is everything the collection reads from a cluster. The objects come through the embedded
// client.Reader, which must refuse Secrets (wrap it with NoSecrets); the rest is what a reader cannot do.
type Source interface {
	client.Reader
	// Events lists the core Events of a namespace.
	Events(ctx context.Context, namespace string) ([]corev1.Event, error)
	// Logs is a container's log, its last tail lines; previous asks for the last terminated run's.
	Logs(ctx context.Context, namespace, pod, container string, previous bool, tail int64) ([]byte, error)
	// Exec runs command in a running container (pods/exec). A command that ran and exited non-zero returns an
	// error with an ExitStatus() int method, like client-go's exec.CodeExitError, and its output.
	Exec(ctx context.Context, namespace, pod, container string, command []string) (stdout, stderr []byte, err error)
	// ServerVersion is the API server's version, as discovery reports it.
	ServerVersion(ctx context.Context) (string, error)
}

// Options say what to collect.
type Options struct {
	Namespace string
	// Database selects one ZNSDatabase; Benchmark one Benchmark and the databases it targets. Neither: every
	// ZNSDatabase and Benchmark of the namespace.
	Database, Benchmark string
	// TailLines bounds every log.
	TailLines int64
	// ExecTimeout bounds each command run in a container.
	ExecTimeout time.Duration
	// PluginVersion and Command describe the run in versions.txt and README.txt.
	PluginVersion string
	Command       string
	Now           time.Time
}

// Result is the summary of a bundle.
type Result struct {
	Root     string
	Items    int
	Failures []Failure
}

// Scheme knows every kind the bundle holds; it turns typed objects into YAML with apiVersion and kind.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

type collector struct {
	src  Source
	opts Options
	w    *Writer
	// seen holds "Kind/name" of every object written, for de-duplication and to match events; uids too.
	seen      map[string]bool
	uids      map[types.UID]bool
	pods      []*corev1.Pod
	jobs      []string
	redacted  []string
	selection string
}

// Collect writes the bundle to out. It returns an error only when the bundle itself cannot be written; an item
// that cannot be collected is listed in errors.txt instead.
func Collect(ctx context.Context, src Source, opts Options, out io.Writer) (Result, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	root := RootDir(opts.Namespace, opts.Now)
	c := &collector{src: src, opts: opts, w: NewWriter(out, root, opts.Now), seen: map[string]bool{}, uids: map[types.UID]bool{}}
	dbs, benchmarks := c.selectTargets(ctx)
	for _, b := range benchmarks {
		c.benchmark(ctx, b)
	}
	for _, db := range dbs {
		c.database(ctx, db)
	}
	c.logs(ctx)
	c.events(ctx)
	c.versions(ctx)
	err := c.w.Close(c.header())
	return Result{Root: root, Items: c.w.Items(), Failures: c.w.Failures()}, err
}

func (c *collector) header() []string {
	h := []string{
		"zns-mysql debug bundle (kubectl zns debug)",
		"created:   " + c.opts.Now.UTC().Format(time.RFC3339),
		"command:   " + c.opts.Command,
		"namespace: " + c.opts.Namespace,
		"selection: " + c.selection,
		"",
		"Secrets are never read. Pod specs name the Secrets they use; literal env values and flag values",
		"whose names look like credentials are replaced by " + Redacted + ", and managedFields and kubectl's",
		"last-applied-configuration are left out.",
	}
	if len(c.redacted) > 0 {
		h = append(h, fmt.Sprintf("Redacted here (%d):", len(c.redacted)))
		for _, r := range c.redacted {
			h = append(h, "  "+r)
		}
	}
	return h
}

// selectTargets resolves the selection. A named ZNSDatabase that cannot be read is still collected by its
// labels: a deleted database's pods, claims and events are what a bug report about it needs.
func (c *collector) selectTargets(ctx context.Context) (dbs []*v1alpha1.ZNSDatabase, bs []*v1alpha1.Benchmark) {
	ns := c.opts.Namespace
	get := func(name string) *v1alpha1.ZNSDatabase {
		db := &v1alpha1.ZNSDatabase{}
		if err := c.src.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, db); err != nil {
			c.w.Failf(err, "znsdatabase %s/%s", ns, name)
			db = &v1alpha1.ZNSDatabase{}
			db.Namespace, db.Name = ns, name
		}
		return db
	}
	switch {
	case c.opts.Benchmark != "":
		b := &v1alpha1.Benchmark{}
		if err := c.src.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.opts.Benchmark}, b); err != nil {
			c.w.Failf(err, "benchmark %s/%s", ns, c.opts.Benchmark)
			b.Namespace, b.Name = ns, c.opts.Benchmark
		}
		bs = append(bs, b)
		var names []string
		for _, t := range b.Spec.Targets {
			dbs = append(dbs, get(t.Name))
			names = append(names, t.Name)
		}
		c.selection = fmt.Sprintf("benchmark %s and its targets [%s]", b.Name, strings.Join(names, " "))
	case c.opts.Database != "":
		dbs = append(dbs, get(c.opts.Database))
		c.selection = "znsdatabase " + c.opts.Database
	default:
		c.selection = "every ZNSDatabase and Benchmark of the namespace"
		dl := &v1alpha1.ZNSDatabaseList{}
		if err := c.src.List(ctx, dl, client.InNamespace(ns)); err != nil {
			c.w.Failf(err, "list znsdatabases in %s", ns)
		}
		for i := range dl.Items {
			dbs = append(dbs, &dl.Items[i])
		}
		bl := &v1alpha1.BenchmarkList{}
		if err := c.src.List(ctx, bl, client.InNamespace(ns)); err != nil {
			c.w.Failf(err, "list benchmarks in %s", ns)
		}
		for i := range bl.Items {
			bs = append(bs, &bl.Items[i])
		}
	}
	return dbs, bs
}

// database writes a ZNSDatabase and what the operator made for it: everything carrying its selector labels
// (the StatefulSet, its pod, the preflight and format Jobs and their pods, claims, the Service, the my.cnf
// ConfigMaps), the PersistentVolumes its claims bind to, its reports, and the device as the pod sees it.
func (c *collector) database(ctx context.Context, db *v1alpha1.ZNSDatabase) {
	if db.UID != "" {
		c.add(db)
	}
	sel := []client.ListOption{client.InNamespace(db.Namespace), client.MatchingLabels(db.SelectorLabels())}
	what := "of znsdatabase " + db.Name
	c.list(ctx, &appsv1.StatefulSetList{}, "statefulsets "+what, sel...)
	c.list(ctx, &batchv1.JobList{}, "jobs "+what, sel...)
	var pvcs corev1.PersistentVolumeClaimList
	c.list(ctx, &pvcs, "persistentvolumeclaims "+what, sel...)
	c.list(ctx, &corev1.ServiceList{}, "services "+what, sel...)
	var cms corev1.ConfigMapList
	c.list(ctx, &cms, "configmaps "+what, sel...)
	var pods corev1.PodList
	c.list(ctx, &pods, "pods "+what, sel...)

	for _, pvc := range pvcs.Items {
		if pvc.Spec.VolumeName == "" || c.seen["PersistentVolume/"+pvc.Spec.VolumeName] {
			continue
		}
		pv := &corev1.PersistentVolume{}
		if err := c.src.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
			c.w.Failf(err, "persistentvolume %s (bound to claim %s)", pvc.Spec.VolumeName, pvc.Name)
			continue
		}
		c.add(pv)
	}
	c.myCnf(db, cms.Items)
	c.reports(db, pods.Items)
	c.device(ctx, db, pods.Items)
}

// benchmark writes a Benchmark, its runner Jobs and their pods, and its series ConfigMaps.
func (c *collector) benchmark(ctx context.Context, b *v1alpha1.Benchmark) {
	if b.UID != "" {
		c.add(b)
	}
	sel := []client.ListOption{client.InNamespace(b.Namespace), client.MatchingLabels{
		v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue, resources.LabelBenchmark: b.Name}}
	what := "of benchmark " + b.Name
	c.list(ctx, &batchv1.JobList{}, "jobs "+what, sel...)
	c.list(ctx, &corev1.PodList{}, "pods "+what, sel...)
	c.list(ctx, &corev1.ConfigMapList{}, "configmaps "+what, sel...)
}

// list lists one kind and adds every item; a refusal (forbidden, say) is recorded and the bundle goes on.
func (c *collector) list(ctx context.Context, list client.ObjectList, what string, opts ...client.ListOption) {
	if err := c.src.List(ctx, list, opts...); err != nil {
		c.w.Failf(err, "list %s", what)
		return
	}
	objs, err := meta(list)
	if err != nil {
		c.w.Failf(err, "list %s", what)
		return
	}
	for _, o := range objs {
		c.add(o)
	}
}

// add writes one object as YAML, once. Pods and Jobs are remembered for their logs and events.
func (c *collector) add(obj client.Object) {
	gvk, err := apiutil.GVKForObject(obj, Scheme)
	if err != nil {
		c.w.Failf(err, "%T %s", obj, obj.GetName())
		return
	}
	key := gvk.Kind + "/" + obj.GetName()
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	c.uids[obj.GetUID()] = true
	switch o := obj.(type) {
	case *corev1.Pod:
		c.pods = append(c.pods, o)
	case *batchv1.Job:
		c.jobs = append(c.jobs, o.Name)
	}
	out := obj.DeepCopyObject().(client.Object)
	out.GetObjectKind().SetGroupVersionKind(gvk)
	c.redacted = append(c.redacted, Scrub(out)...)
	raw, err := yaml.Marshal(out)
	if err != nil {
		c.w.Failf(err, "%s as YAML", key)
		return
	}
	c.w.Add(ObjectPath(gvk.Kind, obj.GetName()), gvk.Kind, raw)
}

// meta returns the items of a typed list as objects, by name.
func meta(list client.ObjectList) ([]client.Object, error) {
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, it := range items {
		o, ok := it.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T is not an object", it)
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}
