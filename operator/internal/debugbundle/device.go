package debugbundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
	"github.com/zns-mysql/zns-mysql/operator/internal/resources"
	"github.com/zns-mysql/zns-mysql/operator/internal/zbd"
	"github.com/zns-mysql/zns-mysql/operator/internal/zenfs"
)

// SysfsFiles are the files of /sys/block/<dev>/ that describe a zoned device, beside the preflight's own
// judgement: what ZenFS reads (zoned, scheduler), the limits it hits (open and active zones), the geometry,
// and stat, the device's I/O counters at the time of the bundle.
var SysfsFiles = []string{
	"queue/zoned", "queue/nr_zones", "queue/max_open_zones", "queue/max_active_zones", "queue/chunk_sectors",
	"queue/zone_append_max_bytes", "queue/scheduler", "queue/logical_block_size", "queue/physical_block_size",
	"stat",
}

// DefaultExecTimeout bounds one command in a container when Options.ExecTimeout is zero. zenfs df takes a few
// seconds on a big drive (the readiness probe gives it 10).
const DefaultExecTimeout = 30 * time.Second

// myCnf writes the generated my.cnf of each of the database's config ConfigMaps as a plain file: the one in
// status is my.cnf, any other (an older one not yet collected) my.cnf.<ConfigMap>.
func (c *collector) myCnf(db *v1alpha1.ZNSDatabase, cms []corev1.ConfigMap) {
	found := false
	for _, cm := range cms {
		cnf, ok := cm.Data[v1alpha1.ConfigFileName]
		if !ok {
			continue
		}
		found = true
		name := v1alpha1.ConfigFileName
		if cm.Name != db.Status.ConfigMapName && !(db.Status.ConfigMapName == "" && len(cms) == 1) {
			name += "." + cm.Name
		}
		c.w.Add(DatabasePath(db.Name, name), "the generated my.cnf (ConfigMap "+cm.Name+")", []byte(cnf))
	}
	if !found {
		c.w.Fail("my.cnf of znsdatabase "+db.Name, "no ConfigMap of the database holds "+v1alpha1.ConfigFileName)
	}
}

// reports writes the preflight and format reports: the JSON those containers leave as termination message,
// current and previous run, as the operator reads them (containerReport, formatTermination).
func (c *collector) reports(db *v1alpha1.ZNSDatabase, pods []corev1.Pod) {
	got := map[string]bool{}
	for _, pod := range pods {
		statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
		for _, cs := range statuses {
			if cs.Name != resources.PreflightContainer && cs.Name != resources.FormatContainer {
				continue
			}
			for _, run := range []struct {
				term   *corev1.ContainerStateTerminated
				suffix string
			}{{cs.State.Terminated, ""}, {cs.LastTerminationState.Terminated, ".previous"}} {
				if run.term == nil {
					continue
				}
				got[cs.Name] = true
				name, raw := reportFile(pod.Name+"."+cs.Name+run.suffix, run.term)
				c.w.Add(DatabasePath(db.Name, "reports", name), cs.Name+" report (termination message)", raw)
			}
		}
	}
	if !db.HasBlockDevice() {
		return
	}
	// A database with a device always has a preflight Job and a format Job: say when there is no report to
	// read, since the reader will look for it.
	for _, container := range []string{resources.PreflightContainer, resources.FormatContainer} {
		if !got[container] {
			c.w.Fail(fmt.Sprintf("%s report of znsdatabase %s", container, db.Name),
				"no terminated "+container+" container in the database's pods (not run yet, still running, or its pod is gone)")
		}
	}
}

// reportFile is a termination message as a file: indented JSON when it is a report, else the text (the last
// log lines, with FallbackToLogsOnError) after the exit code.
func reportFile(base string, term *corev1.ContainerStateTerminated) (string, []byte) {
	var out bytes.Buffer
	if json.Valid([]byte(term.Message)) && json.Indent(&out, []byte(term.Message), "", "  ") == nil {
		out.WriteByte('\n')
		return base + ".json", out.Bytes()
	}
	fmt.Fprintf(&out, "exit code %d (%s), finished %s\n\n%s\n", term.ExitCode, term.Reason,
		term.FinishedAt.UTC().Format(time.RFC3339), term.Message)
	return base + ".txt", out.Bytes()
}

// device reads the database's device as the running mysqld container sees it: the preflight's judgement (znsdb
// preflight, read-only: sysfs and a zone report), the raw sysfs, and for ZenFS `zenfs df`. Nothing here
// writes: preflight gets an empty --termination-log so that it does not overwrite mysqld's termination message.
func (c *collector) device(ctx context.Context, db *v1alpha1.ZNSDatabase, pods []corev1.Pod) {
	if !db.HasBlockDevice() {
		return
	}
	dev := db.DeviceName()
	item := "device " + dev + " of znsdatabase " + db.Name + " (exec in " + db.PodName() + ")"
	if err := zbd.ValidateName(dev); err != nil {
		c.w.Failf(err, "%s", item)
		return
	}
	var pod *corev1.Pod
	for i := range pods {
		if pods[i].Name == db.PodName() {
			pod = &pods[i]
		}
	}
	if pod == nil {
		c.w.Fail(item, "pod "+db.PodName()+" not found")
		return
	}
	if why := notRunning(pod); why != "" {
		c.w.Fail(item, why)
		return
	}
	preflight := []string{"znsdb", "preflight", "--device", dev, "--termination-log="}
	if db.MountsFormattedFilesystem() {
		// mysqld has no device node there (the kubelet mounts the file system): sysfs is all it can judge.
		preflight = append(preflight, "--sysfs-only", "--filesystem", db.FormattedFilesystem())
	}
	c.exec(ctx, pod, db.Name, "preflight.txt", "zone report and judgement of the device (znsdb preflight)", preflight)
	sysfs := []string{"grep", "-H", "."}
	for _, f := range SysfsFiles {
		sysfs = append(sysfs, "/sys/block/"+dev+"/"+f)
	}
	c.exec(ctx, pod, db.Name, "sysfs.txt", "the device's sysfs attributes and I/O counters", sysfs)
	if db.UsesZenFS() {
		args, err := zenfs.DfArgs(dev)
		if err != nil {
			c.w.Failf(err, "zenfs df of %s", db.Name)
			return
		}
		c.exec(ctx, pod, db.Name, "zenfs-df.txt", "ZenFS space (zenfs df)", append([]string{zenfs.DefaultBinary}, args...))
	}
}

// notRunning says why a pod's mysqld cannot be exec'd into, "" when it can.
func notRunning(pod *corev1.Pod) string {
	if pod.Status.Phase != corev1.PodRunning {
		phase := string(pod.Status.Phase)
		if phase == "" {
			phase = "unknown: no kubelet has reported it"
		}
		return "pod not running (phase " + phase + ")"
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == resources.MySQLContainer && cs.State.Running == nil {
			return "container " + cs.Name + " not running"
		}
	}
	return ""
}

// exec runs one read-only command in mysqld and writes its output, with the command and exit status, to
// databases/<db>/device/<file>. A command that ran and failed is output like any other; a missing command
// (126, 127) and an exec that did not happen are failures.
func (c *collector) exec(ctx context.Context, pod *corev1.Pod, db, file, what string, cmd []string) {
	timeout := c.opts.ExecTimeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	item := fmt.Sprintf("exec %q in %s/%s", strings.Join(cmd, " "), pod.Name, resources.MySQLContainer)
	stdout, stderr, err := c.src.Exec(ctx, pod.Namespace, pod.Name, resources.MySQLContainer, cmd)
	status := 0
	var exit interface{ ExitStatus() int }
	switch {
	case errors.As(err, &exit):
		status = exit.ExitStatus()
		if status == 126 || status == 127 {
			c.w.Fail(item, fmt.Sprintf("exit status %d: the command is missing from the image: %s", status, stderr))
		}
	case err != nil:
		c.w.Failf(err, "%s", item)
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "$ %s\n# in pod %s container %s, exit status %d\n--- stdout\n%s", strings.Join(cmd, " "), pod.Name,
		resources.MySQLContainer, status, stdout)
	fmt.Fprintf(&b, "--- stderr\n%s", stderr)
	c.w.Add(DatabasePath(db, "device", file), what, b.Bytes())
}
