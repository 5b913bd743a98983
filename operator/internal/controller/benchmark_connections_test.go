package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/mycnf"
)

// TestCnfMaxConnectionsReadsTheGenerator: the reader finds in the generator's own output what the generator
// sized from memory or took from spec.config, whatever spelling the user chose; and it reads mysqld's rules
// (last setting wins, size suffixes) on hand-written files.
func TestCnfMaxConnectionsReadsTheGenerator(t *testing.T) {
	for _, tc := range []struct {
		name   string
		memory string
		config map[string]string
		want   int64
	}{
		{name: "no memory limit: MySQL's default", want: 151},
		{name: "4Gi: an eighth of memory at 2 MiB each", memory: "4Gi", want: 256},
		{name: "64Gi: the seed's 4096", memory: "64Gi", want: 4096},
		{name: "override with dashes", config: map[string]string{"max-connections": "40"}, want: 40},
		{name: "override, loose", config: map[string]string{"loose_max_connections": "5000"}, want: 5000},
		{name: "override with a suffix", config: map[string]string{"max_connections": "2K"}, want: 2048},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := volumeTarget()
			db.Spec.Engine, db.Spec.Flavor, db.Spec.Profile = v1alpha1.EngineRocksDB, v1alpha1.FlavorPercona, v1alpha1.ProfileWorkload
			db.Spec.Storage.Volume.Size = resource.MustParse("20Gi")
			if tc.memory != "" {
				db.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(tc.memory)}
			}
			db.Spec.Config = tc.config
			cnf, err := mycnf.Generate(MyCnfInput(db, v1alpha1.ProfileWorkload))
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := cnfMaxConnections(cnf); !ok || got != tc.want {
				t.Errorf("read %d (%v), want %d from:\n%s", got, ok, tc.want, cnf)
			}
		})
	}
	for cnf, want := range map[string]int64{
		"[mysqld]\nmax_connections=151\nmax-connections = 300\n": 300,
		"[mysqld]\nmax_connections=\"1k\"\n":                     1024,
		"[mysqld]\n# max_connections=9999\nmax_connections=20\n": 20,
		"[mysqld]\nmaximum-max_connections=10\n":                 0,
		"[mysqld]\nmax_connections=lots\n":                       0,
		"[mysqld]\nmax_connections\n":                            0,
		"":                                                       0,
	} {
		got, ok := cnfMaxConnections(cnf)
		if ok != (want > 0) || got != want {
			t.Errorf("%q: read %d (%v), want %d", cnf, got, ok, want)
		}
	}
}
