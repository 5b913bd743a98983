package controller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/event"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
)

// podSecurityEnforceLabel is Pod Security Admission's namespace label for the level it enforces.
const podSecurityEnforceLabel = "pod-security.kubernetes.io/enforce"

// formatCapabilities names what of the format Job needs CAP_SYS_ADMIN ("" when nothing does).
func formatCapabilities(db *v1alpha1.ZNSDatabase) string {
	var why []string
	if db.FormatsWithCapSysAdmin() {
		why = append(why, "mkfs.xfs (spec.format.capSysAdmin: it sets the device's block size with BLKBSZSET)")
	}
	if resources.FormatDriveCounters(db) {
		why = append(why, "the drive sidecar (storage.device.precondition.driveCounters: NVMe Get Log Page)")
	}
	return strings.Join(why, " and ")
}

// formatPodSecurityRefused stops before a format Job whose pod the namespace's Pod Security level would refuse.
// Admission refuses such a pod only when the Job controller creates it, which shows in the Job's events alone
// while the database would say "Formatting" forever; the namespace's label says it beforehand. Namespaces are
// not watched (get is all the operator may do with them), so a relabelled namespace is seen at the next retry.
// A cluster-wide default level is not visible here; docs/data-safety.md says where its refusal shows.
func (r *ZNSDatabaseReconciler) formatPodSecurityRefused(ctx context.Context, db *v1alpha1.ZNSDatabase) (*ctrl.Result, error) {
	needs := formatCapabilities(db)
	if needs == "" {
		return nil, nil
	}
	ns := &corev1.Namespace{}
	if err := uncached(r.APIReader, r.Client).Get(ctx, client.ObjectKey{Name: db.Namespace}, ns); err != nil {
		return nil, fmt.Errorf("reading namespace %s for its Pod Security level: %w", db.Namespace, err)
	}
	level := ns.Labels[podSecurityEnforceLabel]
	if level != "baseline" && level != "restricted" {
		return nil, nil
	}
	msg := fmt.Sprintf("the format Job for %s needs CAP_SYS_ADMIN for %s, which namespace %s refuses (label %s=%s; "+
		"both baseline and restricted forbid that capability). Label the namespace %s=privileged, or put the database "+
		"in a namespace that is; retried every %s", describeDevice(db), needs, db.Namespace, podSecurityEnforceLabel, level,
		podSecurityEnforceLabel, r.PreflightRetry)
	if !isBlockedBy(db, v1alpha1.ReasonPodSecurityRefused) {
		event.PodSecurityRefused.Emit(db, r.Recorder, msg)
	}
	blocked(db, v1alpha1.ReasonPodSecurityRefused, msg)
	return &ctrl.Result{RequeueAfter: r.PreflightRetry}, nil
}
