package applymemo

import (
	"testing"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

func configMap(data string) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap("cnf", "ns").WithLabels(map[string]string{"b": "2", "a": "1"}).WithData(map[string]string{"my.cnf": data})
}

func digest(t *testing.T, cfg Config) Digest {
	t.Helper()
	d, err := DigestOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestKeyOf(t *testing.T) {
	if got, want := KeyOf(configMap("x")), (Key{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cnf"}); got != want {
		t.Errorf("KeyOf = %+v, want %+v", got, want)
	}
	if got := KeyOf(corev1ac.PersistentVolume("pv-1")); got.Namespace != "" || got.Name != "pv-1" || got.Kind != "PersistentVolume" {
		t.Errorf("a cluster-scoped object: %+v", got)
	}
}

func TestDigestFollowsContentNotMapOrder(t *testing.T) {
	if a, b := digest(t, configMap("a=1")), digest(t, configMap("a=1")); a != b {
		t.Error("two equal configurations differ")
	}
	if digest(t, configMap("a=1")) == digest(t, configMap("a=2")) {
		t.Error("two configurations with other data have one digest")
	}
}

func TestUnchangedOnlyAtTheVersionItsApplyProduced(t *testing.T) {
	var m Memo
	k, d := KeyOf(configMap("a=1")), digest(t, configMap("a=1"))
	if m.Unchanged(k, d, "7") {
		t.Error("an object never applied counts as unchanged")
	}
	m.Record(k, d, "7")
	cases := []struct {
		name    string
		digest  Digest
		version string
		want    bool
	}{
		{"same configuration, same version", d, "7", true},
		{"someone changed it since", d, "8", false},
		{"the cache has no object (deleted)", d, "", false},
		{"another configuration", digest(t, configMap("a=2")), "7", false},
	}
	for _, c := range cases {
		if got := m.Unchanged(k, c.digest, c.version); got != c.want {
			t.Errorf("%s: Unchanged = %v, want %v", c.name, got, c.want)
		}
	}
	other := k
	other.Namespace = "elsewhere"
	if m.Unchanged(other, d, "7") {
		t.Error("another object shares the memo's entry")
	}
	m.Forget(k)
	if m.Unchanged(k, d, "7") {
		t.Error("unchanged after Forget")
	}
	m.Record(k, d, "9")
	m.Record(k, d, "")
	if m.Unchanged(k, d, "9") || m.Len() != 0 {
		t.Errorf("an apply without a version left an entry (%d)", m.Len())
	}
}

func TestResourceVersionFromTheAnswer(t *testing.T) {
	cfg := configMap("a=1")
	if v := ResourceVersion(cfg); v != "" {
		t.Errorf("before the apply: %q", v)
	}
	cfg.WithResourceVersion("4242") // what the client's Apply unmarshals from the server's answer
	if v := ResourceVersion(cfg); v != "4242" {
		t.Errorf("after the apply: %q, want 4242", v)
	}
}

func TestMemoIsBounded(t *testing.T) {
	var m Memo
	d := digest(t, configMap("a=1"))
	for i := range MaxEntries + 1 {
		m.Record(Key{Kind: "ConfigMap", Name: string(rune('a'+i%26)) + string(rune(i))}, d, "1")
	}
	if n := m.Len(); n > MaxEntries || n == 0 {
		t.Errorf("%d entries after %d records, want between 1 and %d", n, MaxEntries+1, MaxEntries)
	}
}
