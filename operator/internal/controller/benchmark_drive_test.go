package controller

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/zns-mysql/zns-mysql/operator/internal/drivereport"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

func podWithSidecar(state corev1.ContainerState) *corev1.Pod {
	grace := int64(600)
	return &corev1.Pod{
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace},
		Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{
			{Name: resources.DriveContainer, State: state},
		}},
	}
}

func TestSidecarReport(t *testing.T) {
	done := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	good, err := drivereport.Report{Phase: "run", Device: "nvme1n1"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		pod        *corev1.Pod
		now        time.Time
		pending    bool
		missingHas string
		wantDevice string
	}{
		{"report", podWithSidecar(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: string(good)}}), done, false, "", "nvme1n1"},
		{"still finishing", podWithSidecar(corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}), done.Add(5 * time.Minute), true, "", ""},
		{"past its grace", podWithSidecar(corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}), done.Add(12 * time.Minute), false, "did not report within 11m0s", ""},
		{"no message", podWithSidecar(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}), done, false, "exit 137, OOMKilled", ""},
		{"garbage", podWithSidecar(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "panic: boom"}}), done, false, "unreadable", ""},
		{"pod gone", nil, done, false, "pod is gone", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, pending, missing := sidecarReport(c.pod, done, c.now)
			if pending != c.pending {
				t.Fatalf("pending = %v", pending)
			}
			if c.missingHas == "" && missing != "" || !strings.Contains(missing, c.missingHas) {
				t.Fatalf("missing = %q, want it to contain %q", missing, c.missingHas)
			}
			if rep.Device != c.wantDevice {
				t.Fatalf("device = %q", rep.Device)
			}
		})
	}
}
