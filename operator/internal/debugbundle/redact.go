package debugbundle

import (
	"fmt"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Redacted replaces a value that looks like a credential.
const Redacted = "<redacted>"

// lastApplied is kubectl apply's copy of the whole object as the user wrote it: a literal password there would
// escape the env scrub, and the bundle has the object itself anyway.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// sensitiveName matches names of environment variables and flags that carry credentials. "passw" and not
// "pass", so that sysbench's and fio's --passes stay readable. Too wide costs a value in a bug report; too
// narrow leaks a password, so it errs wide.
var sensitiveName = regexp.MustCompile(`(?i)passw|passwd|pwd|token|secret|credential|api[-_]?key|private[-_]?key`)

// SensitiveName reports whether an env var or flag with this name is treated as a credential.
func SensitiveName(name string) bool { return sensitiveName.MatchString(name) }

// Scrub prepares an object for the bundle, in place: managedFields and kubectl's last-applied annotation go,
// and in pod specs (of Pods, Jobs, StatefulSets, Deployments) literal env values and flag values whose names
// look like credentials become Redacted. References to Secrets (secretKeyRef, envFrom, volumes) are names,
// not values, and are kept: they say which Secret a pod expects. It returns what it redacted, for the index.
func Scrub(obj client.Object) []string {
	obj.SetManagedFields(nil)
	if a := obj.GetAnnotations(); a[lastApplied] != "" {
		delete(a, lastApplied)
		obj.SetAnnotations(a)
	}
	where := obj.GetName()
	switch o := obj.(type) {
	case *corev1.Pod:
		return scrubPodSpec(&o.Spec, "pod/"+where)
	case *batchv1.Job:
		return scrubPodSpec(&o.Spec.Template.Spec, "job/"+where)
	case *appsv1.StatefulSet:
		return scrubPodSpec(&o.Spec.Template.Spec, "statefulset/"+where)
	case *appsv1.Deployment:
		return scrubPodSpec(&o.Spec.Template.Spec, "deployment/"+where)
	}
	return nil
}

func scrubPodSpec(spec *corev1.PodSpec, where string) []string {
	var done []string
	scrub := func(c *corev1.Container) {
		for i := range c.Env {
			e := &c.Env[i]
			if e.Value != "" && SensitiveName(e.Name) {
				e.Value = Redacted
				done = append(done, fmt.Sprintf("%s container %s env %s", where, c.Name, e.Name))
			}
		}
		for _, args := range []*[]string{&c.Command, &c.Args} {
			for _, flag := range scrubArgs(*args) {
				done = append(done, fmt.Sprintf("%s container %s flag %s", where, c.Name, flag))
			}
		}
	}
	for i := range spec.InitContainers {
		scrub(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		scrub(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		scrub((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	return done
}

// scrubArgs redacts the values of credential-like flags in a command line, in place: "--password=x" and
// "--password x". It returns the flags it redacted.
func scrubArgs(args []string) []string {
	var done []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !SensitiveName(name) {
			continue
		}
		switch {
		case hasValue && value != "":
			args[i] = a[:len(a)-len(value)] + Redacted
			done = append(done, name)
		case !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			args[i+1] = Redacted
			done = append(done, name)
			i++
		}
	}
	return done
}
