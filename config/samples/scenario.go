package samples

// A scenario is read from the manifests and placed on a cluster: the demo, the e2e flows and a user's
// `kubectl apply -k` all start from the same objects, so a change to a scenario is made once. Placing changes
// only what differs between clusters and runs (namespace, node, image flavour, sizes, time scale, run length);
// everything else is the sample's.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// Scenario is the databases and Benchmarks of one directory of manifests, in file order.
type Scenario struct {
	Databases  []*v1alpha1.ZNSDatabase
	Benchmarks []*v1alpha1.Benchmark
	// Files maps each object's name to the file it came from, for errors that point at the manifest to edit.
	Files map[string]string
}

// Load reads the scenario in dir of FS (Lab, ZonedNode).
func Load(dir string) (*Scenario, error) { return LoadFS(FS, dir) }

// LoadFS reads every *.yaml file of dir in fsys (not its subdirectories; kustomization.yaml is kustomize's).
// Decoding is strict: a field the API does not have is an error naming the file, as the API server would
// refuse it too.
func LoadFS(fsys fs.FS, dir string) (*Scenario, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	s := &Scenario{Files: map[string]string{}}
	for _, name := range names {
		if path.Base(name) == "kustomization.yaml" {
			continue
		}
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		for i, doc := range splitDocuments(raw) {
			if err := s.add(name, i, doc); err != nil {
				return nil, err
			}
		}
	}
	if len(s.Databases)+len(s.Benchmarks) == 0 {
		return nil, fmt.Errorf("scenario %s: no ZNSDatabase or Benchmark in its *.yaml files", dir)
	}
	return s, nil
}

func splitDocuments(raw []byte) [][]byte {
	var docs [][]byte
	for _, doc := range bytes.Split(append([]byte("\n"), raw...), []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
	return docs
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

func (s *Scenario) add(file string, index int, doc []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return fmt.Errorf("%s, document %d: %w", file, index+1, err)
	}
	if want := v1alpha1.GroupVersion.String(); head.APIVersion != want {
		return fmt.Errorf("%s, document %d: apiVersion %q, want %s", file, index+1, head.APIVersion, want)
	}
	if head.Metadata.Name == "" {
		return fmt.Errorf("%s, document %d: %s without metadata.name", file, index+1, head.Kind)
	}
	if prev, ok := s.Files[head.Metadata.Name]; ok {
		return fmt.Errorf("%s: %s is also the name of an object in %s: names are unique in a scenario", file, head.Metadata.Name, prev)
	}
	switch head.Kind {
	case "ZNSDatabase":
		db := &v1alpha1.ZNSDatabase{}
		if err := yaml.UnmarshalStrict(doc, db); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		s.Databases = append(s.Databases, db)
	case "Benchmark":
		b := &v1alpha1.Benchmark{}
		if err := yaml.UnmarshalStrict(doc, b); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		s.Benchmarks = append(s.Benchmarks, b)
	default:
		return fmt.Errorf("%s, document %d: kind %q: a scenario holds ZNSDatabases and Benchmarks", file, index+1, head.Kind)
	}
	s.Files[head.Metadata.Name] = file
	return nil
}

// Database is a copy of the database named name, to change freely.
func (s *Scenario) Database(name string) (*v1alpha1.ZNSDatabase, error) {
	for _, db := range s.Databases {
		if db.Name == name {
			return db.DeepCopy(), nil
		}
	}
	return nil, fmt.Errorf("no ZNSDatabase %q in the scenario (it has %s)", name, strings.Join(s.databaseNames(), ", "))
}

// Benchmark is a copy of the Benchmark named name.
func (s *Scenario) Benchmark(name string) (*v1alpha1.Benchmark, error) {
	for _, b := range s.Benchmarks {
		if b.Name == name {
			return b.DeepCopy(), nil
		}
	}
	var names []string
	for _, b := range s.Benchmarks {
		names = append(names, b.Name)
	}
	return nil, fmt.Errorf("no Benchmark %q in the scenario (it has %s)", name, strings.Join(names, ", "))
}

func (s *Scenario) databaseNames() []string {
	var names []string
	for _, db := range s.Databases {
		names = append(names, db.Name)
	}
	return names
}

// Select keeps the named databases and Benchmarks: part of a scenario (the demo on a machine without zoned
// devices, an e2e flow that creates some databases later). A kept Benchmark keeps its targets on kept databases
// and on devices. A name the scenario lacks is an error, and so is a Benchmark whose baseline is left out or
// that would be left without targets.
func (s *Scenario) Select(names ...string) (*Scenario, error) {
	out := &Scenario{Files: s.Files}
	for _, name := range names {
		if db, err := s.Database(name); err == nil {
			out.Databases = append(out.Databases, db)
		} else if b, err := s.Benchmark(name); err == nil {
			out.Benchmarks = append(out.Benchmarks, b)
		} else {
			return nil, fmt.Errorf("no ZNSDatabase or Benchmark %q in the scenario (it has %s)", name, strings.Join(s.objectNames(), ", "))
		}
	}
	for _, b := range out.Benchmarks {
		var kept []v1alpha1.BenchmarkTarget
		for _, t := range b.Spec.Targets {
			if db := targetDatabase(t); db == "" || slices.Contains(names, db) {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("Benchmark %s (%s) has no target among %s", b.Name, s.Files[b.Name], strings.Join(names, ", "))
		}
		if b.Spec.Baseline != "" && !slices.ContainsFunc(kept, func(t v1alpha1.BenchmarkTarget) bool { return t.Name == b.Spec.Baseline }) {
			return nil, fmt.Errorf("Benchmark %s (%s): its baseline %s is not among the selected %s", b.Name, s.Files[b.Name], b.Spec.Baseline, strings.Join(names, ", "))
		}
		b.Spec.Targets = kept
	}
	return out, nil
}

// targetDatabase is the database a Benchmark target runs against, or "" for a raw device (fio).
func targetDatabase(t v1alpha1.BenchmarkTarget) string {
	switch {
	case t.Device != nil:
		return ""
	case t.Database != "":
		return t.Database
	}
	return t.Name
}

func (s *Scenario) objectNames() []string {
	names := s.databaseNames()
	for _, b := range s.Benchmarks {
		names = append(names, b.Name)
	}
	return names
}

// Placement is what differs between the clusters and runs a scenario is used on. A zero field keeps the
// sample's value.
type Placement struct {
	Namespace string
	// Node replaces the node of every database on a node's device (zonedDevice, device).
	Node string
	// Devices replaces the device of the databases it names (database name to kernel name): the devices a
	// machine made, where the sample names the usual ones.
	Devices map[string]string
	// Flavor replaces every database's flavour: mariadb where the Percona image cannot be built.
	Flavor v1alpha1.Flavor
	// Memory replaces every database's memory limit.
	Memory *resource.Quantity
	// VolumeSize and StorageClass replace those of every database on a volume.
	VolumeSize   *resource.Quantity
	StorageClass string
	// ReformatToken replaces the token of every database whose sample sets one (those the scenario means to
	// format over what is on the device): a new namespace then confirms the format anew.
	ReformatToken string
	// TimeScale multiplies every Benchmark's start delay and target timeout: emulated nodes start pods slower.
	TimeScale int32
	// Run replaces the Benchmarks' run parameters that are set in it.
	Run Run
}

// Run is a Benchmark's run length and size, the parameters a demo or a test picks for its time budget.
type Run struct {
	Workload                                            string
	Tables, Threads, DurationSeconds, Iterations, Every int32
	TableSize                                           int64
}

// Place applies p to every object of the scenario, in place.
func (s *Scenario) Place(p Placement) {
	for _, db := range s.Databases {
		placeDatabase(db, p)
	}
	for _, b := range s.Benchmarks {
		placeBenchmark(b, p)
	}
}

func placeDatabase(db *v1alpha1.ZNSDatabase, p Placement) {
	if p.Namespace != "" {
		db.Namespace = p.Namespace
	}
	st := &db.Spec.Storage
	// A database placed by requirements names no node or device: the operator chooses them.
	if p.Node != "" && !db.PlacedByRequirements() {
		if st.ZonedDevice != nil {
			st.ZonedDevice.NodeName = p.Node
		}
		if st.Device != nil {
			st.Device.NodeName = p.Node
		}
	}
	if dev := p.Devices[db.Name]; dev != "" && !db.PlacedByRequirements() {
		switch {
		case st.ZonedDevice != nil:
			st.ZonedDevice.DeviceName = dev
		case st.Device != nil:
			st.Device.DeviceName = dev
		}
	}
	if st.Volume != nil {
		if p.VolumeSize != nil {
			st.Volume.Size = p.VolumeSize.DeepCopy()
		}
		if p.StorageClass != "" {
			st.Volume.StorageClassName = &p.StorageClass
		}
	}
	if p.Flavor != "" {
		db.Spec.Flavor = p.Flavor
	}
	if p.Memory != nil {
		if db.Spec.Resources.Limits == nil {
			db.Spec.Resources.Limits = corev1.ResourceList{}
		}
		db.Spec.Resources.Limits[corev1.ResourceMemory] = p.Memory.DeepCopy()
	}
	if p.ReformatToken != "" && db.Spec.Format.ReformatToken != "" {
		db.Spec.Format.ReformatToken = p.ReformatToken
	}
}

func placeBenchmark(b *v1alpha1.Benchmark, p Placement) {
	if p.Namespace != "" {
		b.Namespace = p.Namespace
	}
	for i := range b.Spec.Targets {
		if d := b.Spec.Targets[i].Device; d != nil && p.Node != "" {
			d.NodeName = p.Node
		}
	}
	if p.TimeScale > 1 {
		b.Spec.StartDelaySeconds *= p.TimeScale
		b.Spec.TargetTimeoutSeconds *= p.TimeScale
	}
	r, spec := p.Run, &b.Spec
	if r.Workload != "" {
		spec.Workload, spec.Workloads = r.Workload, nil
	}
	for _, f := range []struct{ to, from *int32 }{{&spec.Tables, &r.Tables},
		{&spec.Threads, &r.Threads}, {&spec.DurationSeconds, &r.DurationSeconds}, {&spec.Iterations, &r.Iterations},
		{&spec.ReportIntervalSeconds, &r.Every}} {
		if *f.from != 0 {
			*f.to = *f.from
		}
	}
	if r.TableSize != 0 {
		spec.TableSize = r.TableSize
	}
}

// YAML is the scenario as one multi-document manifest for kubectl apply: databases first, then Benchmarks,
// each without the fields the API server fills.
func (s *Scenario) YAML() ([]byte, error) {
	var out bytes.Buffer
	write := func(kind string, meta map[string]any, spec any) error {
		pruned, err := withoutEmptyObjects(spec)
		if err != nil {
			return err
		}
		raw, err := yaml.Marshal(map[string]any{"apiVersion": v1alpha1.GroupVersion.String(), "kind": kind,
			"metadata": meta, "spec": pruned})
		if err != nil {
			return err
		}
		out.WriteString("---\n")
		out.Write(raw)
		return nil
	}
	for _, db := range s.Databases {
		if err := write("ZNSDatabase", metadata(db.Name, db.Namespace, db.ObjectMeta.Labels), db.Spec); err != nil {
			return nil, err
		}
	}
	for _, b := range s.Benchmarks {
		if err := write("Benchmark", metadata(b.Name, b.Namespace, b.ObjectMeta.Labels), b.Spec); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// withoutEmptyObjects is v as JSON values without the empty objects its struct fields marshal to (a spec's
// unset dataVolume, metrics, format), so that the manifest reads like the sample.
func withoutEmptyObjects(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	return prune(tree), nil
}

func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if m, ok := prune(child).(map[string]any); ok && len(m) == 0 {
				delete(t, k)
			}
		}
	case []any:
		for i := range t {
			t[i] = prune(t[i])
		}
	}
	return v
}

func metadata(name, namespace string, labels map[string]string) map[string]any {
	m := map[string]any{"name": name}
	if namespace != "" {
		m["namespace"] = namespace
	}
	if len(labels) > 0 {
		m["labels"] = labels
	}
	return m
}
