// Package stagerun is what the project's runners in Go share: hack/testrun (make test) and hack/demorun
// (make demo), which replaced bash scripts that ran the same shell commands. It holds the pieces the bash had
// in hack/lib: the commands' environment (export and unset in one place instead of the process's), running a
// command in the repository as bash would and taking its status as bash gives it, background jobs tracked by
// their process group, the "still running" progress lines of a long step, and what ends a run (its jobs
// killed, its cleanups run once, on exit, failure or SIGINT/SIGTERM).
package stagerun

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Env is the environment of the commands a run starts: the runner's own at the start, with what the
// stages export and unset (bash's export and unset), in one place instead of the process's.
type Env struct {
	mu sync.Mutex
	m  map[string]string
}

// NewEnv takes an environment as os.Environ gives it.
func NewEnv(list []string) *Env {
	e := &Env{m: map[string]string{}}
	for _, kv := range list {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e.m[k] = v
		}
	}
	return e
}

// Get is the value of k, "" when unset.
func (e *Env) Get(k string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m[k]
}

// Set takes names and values in turn: Set("A", "1", "B", "2").
func (e *Env) Set(kv ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := 0; i+1 < len(kv); i += 2 {
		e.m[kv[i]] = kv[i+1]
	}
}

// SetList takes NAME=VALUE entries, as EvalExports returns them.
func (e *Env) SetList(list []string) {
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		e.Set(k, v)
	}
}

// Unset leaves out the names ks from now on.
func (e *Env) Unset(ks ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range ks {
		delete(e.m, k)
	}
}

// List is the environment as exec takes it, with extra (NAME=VALUE, as bash's `NAME=VALUE cmd`) over it and
// the names in unset left out.
func (e *Env) List(extra []string, unset ...string) []string {
	e.mu.Lock()
	m := make(map[string]string, len(e.m)+len(extra))
	for k, v := range e.m {
		m[k] = v
	}
	e.mu.Unlock()
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for _, k := range unset {
		delete(m, k)
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// CacheRoot is hack/lib/tool-common.sh's cache_root: it survives between runs on one machine.
func CacheRoot(getenv func(string) string) (string, error) {
	switch {
	case getenv("ZNS_CACHE_DIR") != "":
		return getenv("ZNS_CACHE_DIR"), nil
	case getenv("XDG_CACHE_HOME") != "":
		return getenv("XDG_CACHE_HOME") + "/zns-mysql", nil
	case getenv("HOME") != "":
		return filepath.Join(getenv("HOME"), ".cache", "zns-mysql"), nil
	}
	return "", errors.New("no cache directory: set ZNS_CACHE_DIR, XDG_CACHE_HOME or HOME")
}

// OrDefault is bash's ${VAR:-def}.
func OrDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// ProgressEvery is ZNS_PROGRESS_EVERY, hack/lib/progress.sh's interval of the "still running" lines: seconds,
// fractions allowed (tests set it lower), 30 when unset.
func ProgressEvery(getenv func(string) string) (time.Duration, error) {
	v := getenv("ZNS_PROGRESS_EVERY")
	if v == "" {
		return 30 * time.Second, nil
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || s <= 0 || s > 86400 {
		return 0, fmt.Errorf("ZNS_PROGRESS_EVERY=%s: give the seconds between two progress lines (30)", v)
	}
	return time.Duration(s * float64(time.Second)), nil
}

// UndescribedKnobs checks a runner's --help against its configuration: config is a struct whose every field
// names its variable in an env tag, and usage must describe each at the start of a line ("  NAME ..." or
// "  NAME=..."). It returns what is wrong, one line each; none when usage lists every knob.
func UndescribedKnobs(config any, usage string) []string {
	var wrong []string
	ty := reflect.TypeOf(config)
	for i := 0; i < ty.NumField(); i++ {
		name := ty.Field(i).Tag.Get("env")
		if name == "" {
			wrong = append(wrong, fmt.Sprintf("Config.%s has no env tag", ty.Field(i).Name))
			continue
		}
		if !strings.Contains(usage, "\n  "+name+" ") && !strings.Contains(usage, "\n  "+name+"=") {
			wrong = append(wrong, fmt.Sprintf("--help does not describe %s (Config.%s)", name, ty.Field(i).Name))
		}
	}
	return wrong
}
