package samples

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

func load(t *testing.T, dir string) *Scenario {
	t.Helper()
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every scenario loads, each Benchmark's targets are databases of its scenario (or raw devices), and no two
// databases of a scenario ask for one device: the demo and the e2e flows apply them together.
func TestScenariosHangTogether(t *testing.T) {
	for _, dir := range []string{Lab, ZonedNode} {
		s := load(t, dir)
		devices := map[string]string{}
		for _, db := range s.Databases {
			var node, dev string
			switch st := db.Spec.Storage; {
			case st.ZonedDevice != nil:
				node, dev = st.ZonedDevice.NodeName, st.ZonedDevice.DeviceName
			case st.Device != nil:
				node, dev = st.Device.NodeName, st.Device.DeviceName
			default:
				continue
			}
			if other, taken := devices[node+"/"+dev]; taken {
				t.Errorf("%s: %s and %s both on %s/%s", dir, other, db.Name, node, dev)
			}
			devices[node+"/"+dev] = db.Name
		}
		for _, b := range s.Benchmarks {
			for _, target := range b.Spec.Targets {
				if db := targetDatabase(target); db != "" {
					if _, err := s.Database(db); err != nil {
						t.Errorf("%s: Benchmark %s: target %s: %v", dir, b.Name, target.Name, err)
					}
				}
			}
		}
	}
	if s := load(t, ZonedNode); len(s.Databases) < 7 || len(s.Benchmarks) != 1 {
		t.Errorf("zoned-node: %d databases, %d Benchmarks; want the 7 the demo and the e2e flow use, and their Benchmark", len(s.Databases), len(s.Benchmarks))
	}
}

func TestLoadRefusesWhatTheAPIServerWould(t *testing.T) {
	db := func(name, extra string) string {
		return "apiVersion: zns-mysql.dev/v1alpha1\nkind: ZNSDatabase\nmetadata:\n  name: " + name +
			"\nspec:\n  engine: innodb\n  storage:\n    volume:\n      size: 1Gi\n" + extra
	}
	for _, c := range []struct {
		name  string
		files fstest.MapFS
		want  string
	}{
		{"an unknown field", fstest.MapFS{"s/a.yaml": {Data: []byte(db("a", "  engin: rocksdb\n"))}}, `a.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "engin"`},
		{"one name twice", fstest.MapFS{"s/a.yaml": {Data: []byte(db("a", ""))}, "s/b.yaml": {Data: []byte(db("a", ""))}}, "s/b.yaml: a is also the name of an object in s/a.yaml"},
		{"another kind", fstest.MapFS{"s/a.yaml": {Data: []byte("apiVersion: zns-mysql.dev/v1alpha1\nkind: ConfigMap\nmetadata: {name: a}\n")}}, `kind "ConfigMap"`},
		{"another version", fstest.MapFS{"s/a.yaml": {Data: []byte(strings.Replace(db("a", ""), "v1alpha1", "v1", 1))}}, `apiVersion "zns-mysql.dev/v1"`},
		{"no name", fstest.MapFS{"s/a.yaml": {Data: []byte(db("", ""))}}, "without metadata.name"},
		{"nothing", fstest.MapFS{"s/kustomization.yaml": {Data: []byte("resources: []\n")}}, "no ZNSDatabase or Benchmark"},
	} {
		if _, err := LoadFS(c.files, "s"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	two := fstest.MapFS{"s/a.yaml": {Data: []byte("# a comment\n---\n" + db("a", "") + "---\n# only a comment\n---\n" + db("b", ""))}}
	if s, err := LoadFS(two, "s"); err != nil || len(s.Databases) != 2 || s.Files["b"] != "s/a.yaml" {
		t.Errorf("two documents among comments: %v, %+v", err, s)
	}
}

func TestSelectKeepsTargetsAmongTheSelection(t *testing.T) {
	lab := load(t, Lab)
	s, err := lab.Select("tenant1", "innodb-baseline", "compare", "fio-zns")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range s.Benchmarks {
		for _, target := range b.Spec.Targets {
			got = append(got, b.Name+":"+target.Name)
		}
	}
	// fio's raw device target stays; its database target stays only with its database
	if want := []string{"compare:tenant1", "compare:innodb-baseline", "fio-zns:nullb1", "fio-zns:tenant1-device"}; !reflect.DeepEqual(got, want) {
		t.Errorf("targets %v, want %v", got, want)
	}
	if len(s.Databases) != 2 || s.Databases[0].Name != "tenant1" {
		t.Errorf("databases %v", s.objectNames())
	}
	for args, want := range map[string]string{
		"tenant1,nosuch":               `no ZNSDatabase or Benchmark "nosuch" in the scenario (it has innodb-baseline, myrocks-xfs,`,
		"tenant1,compare":              "its baseline innodb-baseline is not among the selected tenant1, compare",
		"myrocks-xfs,ycsb-study":       "Benchmark ycsb-study (benchmark-ycsb.yaml) has no target among myrocks-xfs, ycsb-study",
		"innodb-baseline,tenant1-none": `"tenant1-none"`,
	} {
		if _, err := lab.Select(strings.Split(args, ",")...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Select(%s): %v, want %q", args, err, want)
		}
	}
	// a selection is a copy: the loaded scenario is unchanged
	s.Databases[0].Spec.Engine = v1alpha1.EngineInnoDB
	if db, _ := lab.Database("tenant1"); db.Spec.Engine != v1alpha1.EngineRocksDB {
		t.Errorf("changing a selection changed the scenario: %s", db.Spec.Engine)
	}
}

func TestPlaceChangesOnlyWhatItNames(t *testing.T) {
	zoned := load(t, ZonedNode)
	sample, _ := zoned.Database("innodb-zxfs")
	zoned.Place(Placement{Namespace: "ns1", Node: "node-7", Devices: map[string]string{"myrocks-zoned": "nullb9"},
		Flavor: v1alpha1.FlavorPercona, Memory: ptr.To(resource.MustParse("3Gi")), VolumeSize: ptr.To(resource.MustParse("7Gi")),
		StorageClass: "fast", ReformatToken: "t-ns1", TimeScale: 4,
		Run: Run{Workload: "oltp_read_only", TableSize: 123, Threads: 9, DurationSeconds: 33}})
	for _, db := range zoned.Databases {
		st := db.Spec.Storage
		if db.Namespace != "ns1" || db.Spec.Flavor != v1alpha1.FlavorPercona || db.Spec.Resources.Limits.Memory().String() != "3Gi" {
			t.Errorf("%s: namespace %q flavor %q memory %s", db.Name, db.Namespace, db.Spec.Flavor, db.Spec.Resources.Limits.Memory())
		}
		switch {
		case st.ZonedDevice != nil && st.ZonedDevice.NodeName != "node-7", st.Device != nil && st.Device.NodeName != "node-7":
			t.Errorf("%s: not on node-7: %+v", db.Name, st)
		case st.Volume != nil && (st.Volume.Size.String() != "7Gi" || ptr.Deref(st.Volume.StorageClassName, "") != "fast"):
			t.Errorf("%s: volume %+v", db.Name, st.Volume)
		}
		// only the databases whose sample formats over the device get the namespace's token
		if want := map[string]string{"innodb-baseline": "t-ns1"}[db.Name]; db.Spec.Format.ReformatToken != want {
			t.Errorf("%s: reformat token %q, want %q", db.Name, db.Spec.Format.ReformatToken, want)
		}
	}
	if db, _ := zoned.Database("myrocks-zoned"); db.Spec.Storage.ZonedDevice.DeviceName != "nullb9" {
		t.Errorf("myrocks-zoned on %s, want nullb9", db.Spec.Storage.ZonedDevice.DeviceName)
	}
	if db, _ := zoned.Database("innodb-zxfs"); !db.Spec.Format.CapSysAdmin || db.Spec.Storage.ZonedDevice.DeviceName != sample.Spec.Storage.ZonedDevice.DeviceName {
		t.Errorf("innodb-zxfs lost what Place does not name: %+v", db.Spec)
	}
	b := zoned.Benchmarks[0].Spec
	if b.StartDelaySeconds != 4*15 || b.TargetTimeoutSeconds != 4*600 || b.Workload != "oltp_read_only" || b.TableSize != 123 ||
		b.Threads != 9 || b.DurationSeconds != 33 || b.Tables != 1 || b.Iterations != 1 || b.ReportIntervalSeconds != 2 {
		t.Errorf("Benchmark spec after Place: %+v", b)
	}
}

// The manifest YAML writes is the scenario again: what the demo applies is what the e2e flow creates.
func TestYAMLIsTheScenarioAgain(t *testing.T) {
	for _, dir := range []string{Lab, ZonedNode} {
		s := load(t, dir)
		s.Place(Placement{Namespace: "ns2", TimeScale: 2})
		raw, err := s.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "{}") {
			t.Errorf("%s: an empty object in the manifest:\n%s", dir, raw)
		}
		again, err := LoadFS(fstest.MapFS{"x/all.yaml": {Data: raw}}, "x")
		if err != nil {
			t.Fatalf("%s: %v\n%s", dir, err, raw)
		}
		if !reflect.DeepEqual(again.Databases, s.Databases) || !reflect.DeepEqual(again.Benchmarks, s.Benchmarks) {
			t.Errorf("%s: the manifest reads back as other objects:\n%s", dir, raw)
		}
	}
}
