package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/zns-mysql/zns-mysql/operator/internal/blocktrace"
	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
)

// phaseWithCache is one phase's model set over a 64 MiB device, on the node's cache at root: what it logged
// and what it reports for the same scattered writes.
func phaseWithCache(t *testing.T, root string) ([]drivereport.Modelled, string) {
	t.Helper()
	const dev = 64 << 20
	s := newModelSet(dev, []int{7, 28})
	var why string
	if s.cache, why = openModelCache(root); s.cache == nil {
		t.Fatalf("no cache: %s", why)
	}
	var mu sync.Mutex
	var log strings.Builder
	s.precondition(func(f string, a ...any) { mu.Lock(); fmt.Fprintf(&log, f+"\n", a...); mu.Unlock() })
	for i := uint64(0); i < 4096; i++ {
		s.feed(blocktrace.Event{Op: blocktrace.OpWrite, Sector: (i * 104729 % 16384) * 8, Sectors: 8})
	}
	res, err := s.results()
	if err != nil {
		t.Fatal(err)
	}
	return res, log.String()
}

// TestModelCacheSettlesOnce: the first phase settles its models and keeps them; the next reads them and
// reports exactly what a phase that settled its own would (the same modelled bytes, rounds and verdict); a
// damaged entry is settled anew, and an older build's entries go once this build keeps one.
func TestModelCacheSettlesOnce(t *testing.T) {
	root := t.TempDir()
	older := filepath.Join(root, "0123456789abcdef")
	if err := os.MkdirAll(older, 0o755); err != nil {
		t.Fatal(err)
	}
	notOurs := filepath.Join(root, "lost+found")
	if err := os.MkdirAll(notOurs, 0o755); err != nil {
		t.Fatal(err)
	}
	first, log1 := phaseWithCache(t, root)
	if strings.Count(log1, "random rounds, steady state") != 2 || strings.Contains(log1, "cache") {
		t.Errorf("the first phase did not settle both models itself:\n%s", log1)
	}
	if _, err := os.Stat(older); !os.IsNotExist(err) {
		t.Errorf("an older build's entries are still there (%v)", err)
	}
	if _, err := os.Stat(notOurs); err != nil {
		t.Errorf("a directory the cache did not make was removed: %v", err)
	}
	second, log2 := phaseWithCache(t, root)
	if strings.Count(log2, "read from its cache") != 2 {
		t.Errorf("the second phase settled its models again:\n%s", log2)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("from the cache: %+v\nsettled: %+v", second, first)
	}

	entries, err := filepath.Glob(filepath.Join(root, "*", "ftl-*op7-*.model"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("the OP 7%% entry: %v (%v)", entries, err)
	}
	b, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-40] ^= 0xff
	if err := os.WriteFile(entries[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	third, log3 := phaseWithCache(t, root)
	if !strings.Contains(log3, "model at OP 7%: the node's cache entry is not used, the model settles anew") ||
		strings.Count(log3, "read from its cache") != 1 || !reflect.DeepEqual(first, third) {
		t.Errorf("after damaging the OP 7%% entry: %+v\n%s", third, log3)
	}
}
