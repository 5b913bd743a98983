package debugbundle

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/zns-mysql/zns-mysql/operator/api/v1alpha1"
)

// OperatorNameLabel is the app.kubernetes.io/name value of the operator's Deployment (config/manager, the chart).
const OperatorNameLabel = "zns-mysql"

// logTimeout bounds one log request: a kubelet that does not answer must not hold up the whole bundle.
const logTimeout = 60 * time.Second

// logs writes every container's log of every pod collected, and the previous run's where a container has one.
func (c *collector) logs(ctx context.Context) {
	for _, pod := range c.pods {
		if pod.Spec.NodeName == "" {
			// The API server answers an empty log for a pod on no node: say so rather than write empty files.
			c.w.Fail("logs of pod "+pod.Name, "the pod is not scheduled to a node: no kubelet holds its logs")
			continue
		}
		last := map[string]bool{}
		for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			last[cs.Name] = cs.LastTerminationState.Terminated != nil
		}
		var names []string
		for _, cs := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			names = append(names, cs.Name)
		}
		for _, ec := range pod.Spec.EphemeralContainers {
			names = append(names, ec.Name)
		}
		for _, name := range names {
			c.log(ctx, pod, name, false)
			// Asking for a previous log that does not exist is an error from the API, not a missing item.
			if last[name] {
				c.log(ctx, pod, name, true)
			}
		}
	}
}

func (c *collector) log(ctx context.Context, pod *corev1.Pod, container string, previous bool) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	raw, err := c.src.Logs(ctx, pod.Namespace, pod.Name, container, previous, c.opts.TailLines)
	which := "log"
	if previous {
		which = "previous log"
	}
	if err != nil {
		c.w.Failf(err, "%s of pod %s container %s", which, pod.Name, container)
		return
	}
	if c.opts.TailLines >= 0 {
		which += fmt.Sprintf(", last %d lines", c.opts.TailLines)
	}
	c.w.Add(LogPath(pod.Name, container, previous), which, raw)
}

// events writes the namespace's Events about the objects in the bundle, oldest first: as a table to read and as
// YAML with every field. Pods of the Jobs that are gone (a retried preflight) still match by their Job's name.
func (c *collector) events(ctx context.Context) {
	all, err := c.src.Events(ctx, c.opts.Namespace)
	if err != nil {
		c.w.Failf(err, "list events in %s", c.opts.Namespace)
		return
	}
	var evs []corev1.Event
	for _, e := range all {
		if c.involves(e.InvolvedObject) {
			e.ManagedFields = nil
			evs = append(evs, e)
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTYPE\tREASON\tOBJECT\tCOUNT\tMESSAGE")
	for _, e := range evs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%d\t%s\n", eventTime(e).UTC().Format(time.RFC3339), e.Type, e.Reason,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, max(e.Count, 1), oneLine(e.Message))
	}
	_ = tw.Flush()
	c.w.Add(EventsPath, fmt.Sprintf("%d events about these objects, oldest first", len(evs)), []byte(b.String()))
	raw, err := yaml.Marshal(evs)
	if err != nil {
		c.w.Failf(err, "events as YAML")
		return
	}
	c.w.Add(EventsYAML, "the same events, every field", raw)
}

func (c *collector) involves(o corev1.ObjectReference) bool {
	if o.UID != "" && c.uids[o.UID] || c.seen[o.Kind+"/"+o.Name] {
		return true
	}
	if o.Kind == "Pod" {
		for _, job := range c.jobs {
			if strings.HasPrefix(o.Name, job+"-") {
				return true
			}
		}
	}
	return false
}

// eventTime is when an event last happened: events.k8s.io writers set eventTime, core writers lastTimestamp.
func eventTime(e corev1.Event) time.Time {
	for _, t := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return e.CreationTimestamp.Time
}

// versions writes what ran: the plugin, the API server, the operator's images and the images of the pods.
func (c *collector) versions(ctx context.Context) {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin: %s\n", c.opts.PluginVersion)
	if v, err := c.src.ServerVersion(ctx); err != nil {
		c.w.Failf(err, "server version (discovery)")
		b.WriteString("server: unknown (see errors.txt)\n")
	} else {
		fmt.Fprintf(&b, "server: %s\n", v)
	}
	deps, where := c.operatorDeployments(ctx)
	if len(deps) == 0 {
		fmt.Fprintf(&b, "operator: no Deployment labelled %s=%s %s\n", v1alpha1.LabelName, OperatorNameLabel, where)
	}
	for _, d := range deps {
		for _, ct := range d.Spec.Template.Spec.Containers {
			fmt.Fprintf(&b, "operator: deployment %s/%s container %s image %s (ready %d/%d)\n", d.Namespace, d.Name,
				ct.Name, ct.Image, d.Status.ReadyReplicas, d.Status.Replicas)
		}
	}
	for _, pod := range c.pods {
		ids := map[string]string{}
		for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			ids[cs.Name] = cs.ImageID
		}
		for _, ct := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			id := ids[ct.Name]
			if id == "" {
				id = "(none reported: the container has not run on a node, or its status is gone)"
			}
			fmt.Fprintf(&b, "pod %s container %s image %s imageID %s\n", pod.Name, ct.Name, ct.Image, id)
		}
	}
	c.w.Add(VersionsPath, "plugin, server, operator and pod images", []byte(b.String()))
}

// operatorDeployments finds the operator anywhere in the cluster; a user who may not list Deployments
// cluster-wide still finds one installed in their own namespace. where says what was searched.
func (c *collector) operatorDeployments(ctx context.Context) ([]appsv1.Deployment, string) {
	sel := client.MatchingLabels{v1alpha1.LabelName: OperatorNameLabel}
	l := &appsv1.DeploymentList{}
	err := c.src.List(ctx, l, sel)
	if err == nil {
		return l.Items, "in any namespace"
	}
	c.w.Failf(err, "list deployments of the operator in all namespaces")
	if err := c.src.List(ctx, l, sel, client.InNamespace(c.opts.Namespace)); err != nil {
		c.w.Failf(err, "list deployments of the operator in %s", c.opts.Namespace)
		return nil, "(the search failed, see errors.txt)"
	}
	return l.Items, "in namespace " + c.opts.Namespace + " (the only one searched)"
}
