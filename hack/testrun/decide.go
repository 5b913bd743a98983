package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

// The run's decisions, as functions of what it found: what the e2e tier runs on, what stage 4 builds, whether
// the zoned node can run, what a finished background build means.

// e2eMode is what the e2e tier will run on.
type e2eMode string

const (
	e2eOwn   e2eMode = "own"   // a kind cluster of the run's own
	e2eGiven e2eMode = "given" // ZNS_E2E_KUBECONFIG's
	e2eNone  e2eMode = "none"  // none: the suite reports itself skipped, with why
)

// e2eModeFor decides the e2e tier's cluster, and why there is none; with ZNS_REQUIRE_E2E=1 and no Docker
// Engine the run stops at once (stage 0).
func e2eModeFor(c Config, dockerOK bool) (mode e2eMode, why string, err error) {
	switch {
	case c.E2EOff:
		return e2eNone, "ZNS_E2E=0", nil
	case c.E2EKubeconfig != "":
		return e2eGiven, "", nil
	case !dockerOK:
		why = "no usable Docker Engine (docker info failed)"
		if c.RequireE2E {
			return e2eNone, why, fail(0, "ZNS_REQUIRE_E2E=1 but "+why+": start the Docker Engine")
		}
		return e2eNone, why, nil
	}
	return e2eOwn, "", nil
}

// buildsName is stage 4's banner: what it builds.
func buildsName(mode e2eMode, dockerOK bool) string {
	kube := "envtest"
	if mode == e2eOwn {
		kube += " and the kind node image"
	}
	images := ""
	if dockerOK {
		images = ", the images"
	}
	return fmt.Sprintf("builds: Kubernetes (%s), helm, the QEMU guest%s", kube, images)
}

// kubeSet is what hack/kubernetes.sh builds in stage 4: the node set when the node image needs it too
// (whichever of the two calls gets the lock builds all of it).
func kubeSet(mode e2eMode) string {
	if mode == e2eOwn {
		return "node"
	}
	return "envtest"
}

// guestOutcome is what stage 5 says of the QEMU guest's build from its status and its log: exit 3 means a
// prerequisite it names is missing, and the guest tier skips (or, with ZNS_REQUIRE_QEMU=1, fails) saying so.
// show is what of the log goes to stderr first.
func guestOutcome(rc int, log string) (show, msg string, err error) {
	switch rc {
	case 0:
		return "", "qemu-guest: " + strings.TrimRight(stagerun.TailLines(log, 1), "\n"), nil
	case 3:
		return stagerun.TailLines(log, 5), "the QEMU guest cannot be built here (above); its tests will say what they need", nil
	}
	return stagerun.TailLines(log, 40), "", fail(5, "building the QEMU guest failed (above; hack/qemu/build-guest.sh alone shows it again)")
}

// zonedSkipWhy is why stage 8 cannot boot the zoned node, "" when it can.
func zonedSkipWhy(qemuRC int, dockerOK bool, c Config) string {
	switch {
	case qemuRC != 0:
		return "the QEMU guest cannot be built here (stage 5 said why)"
	case !dockerOK:
		return "no usable Docker Engine for the images"
	case c.E2EOff:
		return "ZNS_E2E=0"
	}
	return ""
}

var (
	zloopFailed = regexp.MustCompile(`^build-zloop-module: (ERROR|MISSING): `)
	zloopAbove  = regexp.MustCompile(` \(the log.s last lines above\)`)
	zloopRerun  = regexp.MustCompile(`: fix what it says and run again \(finished steps are kept\)$`)
)

// zloopSaid is what a build-zloop-module.sh that succeeded without a module says: its log's last line but
// the progress lines, without its prefix.
func zloopSaid(log string) string {
	last := ""
	for _, l := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		if !strings.Contains(l, "still running") {
			last = l
		}
	}
	return strings.TrimPrefix(last, "build-zloop-module: ")
}

// zloopWhy is why build-zloop-module.sh failed, from its last ERROR or MISSING line: what the QEMU tier's
// zloop tests say when they skip (ZNS_ZLOOP_MODULE_ERROR).
func zloopWhy(log string) string {
	why := ""
	for _, l := range strings.Split(log, "\n") {
		if loc := zloopFailed.FindStringIndex(l); loc != nil {
			why = l[loc[1]:]
		}
	}
	if loc := zloopAbove.FindStringIndex(why); loc != nil {
		why = why[:loc[0]] + why[loc[1]:]
	}
	return zloopRerun.ReplaceAllString(why, "")
}

// zloopError is ZNS_ZLOOP_MODULE_ERROR for a build that exited rc with log.
func zloopError(rc int, log, logPath string) string {
	why := zloopWhy(log)
	if why == "" {
		why = "no message"
	}
	return fmt.Sprintf("hack/qemu/build-zloop-module.sh exited %d: %s (its log: %s)", rc, why, logPath)
}

// readPin is hack/lib/tool-common.sh's read_pin: the value of the last `NAME := value` line of versions.mk.
func readPin(versions, name string) (string, error) {
	re := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(name) + `\s*[:?]?=\s*([^\s#]+)`)
	v := ""
	for _, l := range strings.Split(versions, "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			v = m[1]
		}
	}
	if v == "" {
		return "", fmt.Errorf("versions.mk has no '%s := <value>' line", name)
	}
	return v, nil
}

// ycsbBin is where hack/images/go-ycsb.sh keeps the bench image's go-ycsb.
func ycsbBin(cacheRoot, version, goarch string) string {
	return fmt.Sprintf("%s/tools/go-ycsb-%s-linux-%s/go-ycsb", cacheRoot, version, goarch)
}

// withoutPackage is go list's output without pkg (grep -vxF).
func withoutPackage(list, pkg string) []string {
	var out []string
	for _, l := range strings.Split(list, "\n") {
		if l != pkg && l != "" {
			out = append(out, l)
		}
	}
	return out
}
