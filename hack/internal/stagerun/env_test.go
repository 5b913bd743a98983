package stagerun

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func getenv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnvList(t *testing.T) {
	e := NewEnv([]string{"A=1", "B=2", "C=x=y"})
	e.Set("D", "4")
	e.SetList([]string{"F=6", "G=a=b"})
	e.Unset("B")
	got := e.List([]string{"A=9", "E=5"}, "C")
	if want := []string{"A=9", "D=4", "E=5", "F=6", "G=a=b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if e.Get("C") != "x=y" {
		t.Errorf("C: %q", e.Get("C"))
	}
}

func TestCacheRootFollowsToolCommon(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"ZNS_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/c"},
		{map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/zns-mysql"},
		{map[string]string{"HOME": "/h"}, "/h/.cache/zns-mysql"},
	} {
		if got, err := CacheRoot(getenv(tc.env)); err != nil || got != tc.want {
			t.Errorf("%v: got %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
	if _, err := CacheRoot(getenv(nil)); err == nil || !strings.Contains(err.Error(), "set ZNS_CACHE_DIR, XDG_CACHE_HOME or HOME") {
		t.Errorf("no cache directory: got %v", err)
	}
}

func TestProgressEvery(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 30 * time.Second, "0.5": 500 * time.Millisecond, "60": time.Minute} {
		if got, err := ProgressEvery(getenv(map[string]string{"ZNS_PROGRESS_EVERY": v})); got != want || err != nil {
			t.Errorf("ZNS_PROGRESS_EVERY=%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"0", "-1", "soon", "86401"} {
		_, err := ProgressEvery(getenv(map[string]string{"ZNS_PROGRESS_EVERY": v}))
		if err == nil || err.Error() != "ZNS_PROGRESS_EVERY="+v+": give the seconds between two progress lines (30)" {
			t.Errorf("ZNS_PROGRESS_EVERY=%s: %v", v, err)
		}
	}
}

func TestUndescribedKnobs(t *testing.T) {
	type config struct {
		A string `env:"KNOB_A"`
		B bool   `env:"KNOB_B"`
		C int    `env:"KNOB_C"`
		D string
	}
	usage := "Environment:\n  KNOB_A  the first\n  KNOB_B=1  the second\n  later KNOB_C is only mentioned\n"
	want := []string{"--help does not describe KNOB_C (Config.C)", "Config.D has no env tag"}
	if got := UndescribedKnobs(config{}, usage); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
