package main

import (
	"reflect"
	"testing"
)

// TestCleanupsRunOnceLastFirst: a cleanup run early (the cluster after stage 7) does not run again at the end;
// the others run once, the last added first, however often the end comes (an interrupt, then the exit).
func TestCleanupsRunOnceLastFirst(t *testing.T) {
	var cs cleanups
	var ran []string
	add := func(name string) *cleanupFunc { return cs.add(name, func() { ran = append(ran, name) }) }
	add("loop file")
	add("loop device")
	cluster := add("cluster")
	add("zoned node")
	cluster.runOne()
	cluster.runOne()
	cs.runAll()
	cs.runAll()
	if want := []string{"cluster", "zoned node", "loop device", "loop file"}; !reflect.DeepEqual(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
}
