package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun/stageruntest"
)

// TestGroupEndedBeforeTheWait: a background build that ended long before anyone waits for it gives its status at
// once (the bash builder's `wait PID` could block for ever on such a job).
func TestGroupEndedBeforeTheWait(t *testing.T) {
	repo := fakeRepo(t)
	b, _, _ := fakeBuilder(t, repo, nil)
	g, err := b.startGroup("quick", exec.Command("sh", "-c", "exit 3"), false)
	if err != nil {
		t.Fatal(err)
	}
	stageruntest.WaitFor(t, "the group reaped", func() bool { return syscall.Kill(-g.pid, 0) != nil })
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- g.wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "quick: exit status 3") {
			t.Errorf("status: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait for an ended group blocks")
	}
}

// TestStopGroupsKillsWhatIgnoresTERM: stopping ends each group whole, KILLing after the grace time what ignored
// TERM, and nothing starts in a group of its own afterwards.
func TestStopGroupsKillsWhatIgnoresTERM(t *testing.T) {
	repo := fakeRepo(t)
	b, _, _ := fakeBuilder(t, repo, nil)
	b.KillGrace = 200 * time.Millisecond
	stubborn, err := b.startGroup("stubborn", exec.Command("sh", "-c", `trap "" TERM; sleep 300 & wait`), false)
	if err != nil {
		t.Fatal(err)
	}
	polite, err := b.startGroup("polite", exec.Command("sh", "-c", "sleep 300 & wait"), false)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the sleeps started
	b.stopGroups()
	for _, g := range []*group{stubborn, polite} {
		stageruntest.WaitFor(t, g.name+"'s group gone", func() bool { return syscall.Kill(-g.pid, 0) != nil })
	}
	started := make(chan struct{})
	go func() {
		_, _ = b.startGroup("late", exec.Command("true"), false)
		close(started)
	}()
	select {
	case <-started:
		t.Error("a group started after the stop")
	case <-time.After(200 * time.Millisecond):
	}
}
