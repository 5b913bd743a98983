package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zns-mysql/zns-mysql/hack/internal/stagerun"
)

func TestEveryKnobIsDescribed(t *testing.T) {
	for _, name := range stagerun.UndescribedKnobs(Config{}, usage) {
		t.Errorf("%s is a knob of Config but --help does not describe it", name)
	}
}

func TestConfigRefusesWhatWouldFailLater(t *testing.T) {
	for knob, value := range map[string]string{"ZNS_NODE_ACCEL": "hvf", "ZNS_NODE_MEM": "lots", "ZNS_NODE_BOOT_TIMEOUT": "-1",
		"ZNS_QEMU_KERNEL": "5.4", "ZNS_NODE_OWNER": "make", "ZNS_NODE_CONTROL_PLANE": "both"} {
		env := map[string]string{"ZNS_CACHE_DIR": "/c", knob: value}
		if _, err := parseConfig(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), knob+"="+value) {
			t.Errorf("%s=%s: %v, want a refusal that names it", knob, value, err)
		}
	}
	c, err := parseConfig(func(k string) string { return map[string]string{"ZNS_CACHE_DIR": "/c"}[k] })
	if err != nil || c.Accel != "auto" || c.MemMiB != 8192 || c.BootTimeout.Seconds() != 2700 || !c.ImageDisk || !c.ImageDiskOnHost || !c.HostControlPlane {
		t.Errorf("defaults: %+v, %v", c, err)
	}
}

func TestChooseAccel(t *testing.T) {
	for _, c := range []struct {
		want          string
		usable, pvm   bool
		accel, saying string
	}{
		{"auto", false, false, "tcg", ""},
		{"auto", true, false, "kvm", ""},
		{"auto", true, true, "tcg", "kvm_pvm"},
		{"kvm", false, false, "kvm", ""},
		{"tcg", true, false, "tcg", ""},
	} {
		accel, note := chooseAccel(c.want, c.usable, c.pvm)
		if accel != c.accel || (c.saying == "") != (note == "") || !strings.Contains(note, c.saying) {
			t.Errorf("%+v: %s, %q", c, accel, note)
		}
	}
}

func TestEnvLineIsWhatBashEvaluates(t *testing.T) {
	line := envLine("tcg", "/cache dir/zoned-node/kubeconfig", "c-1a2b")
	out, err := exec.Command("bash", "-c", strings.TrimSuffix(line, "\n")+`; printf '%s|%s|%s|%s' "$ZNS_E2E_KUBECONFIG" "$ZNS_E2E_TAG" "$ZNS_E2E_TIME_SCALE" "$ZNS_E2E_PROBE_PERIOD"`).Output()
	if err != nil || string(out) != "/cache dir/zoned-node/kubeconfig|c-1a2b|4|20" {
		t.Errorf("bash read %q (%v) from %q", out, err, line)
	}
	if kvm := envLine("kvm", "/k", "t"); !strings.Contains(kvm, "ZNS_E2E_TIME_SCALE=1 ZNS_E2E_PROBE_PERIOD=5") {
		t.Errorf("under KVM: %q", kvm)
	}
}

// The image disk's key is the one the bash version computed, so that disks made before stay good.
func TestImageDiskKeyAsBashHadIt(t *testing.T) {
	dir := t.TempDir()
	pause := filepath.Join(dir, "pause.tar")
	if err := os.WriteFile(pause, []byte("a pause image\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", `{ printf 'image disk v1\n%s\n' c-1234; sha256sum <"$1"; echo containerd-v2.0.14; } | sha256sum | cut -c1-16`, "key", pause).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := imageDiskKey("c-1234", []byte("a pause image\n"), "containerd-v2.0.14"), strings.TrimSpace(string(out)); got != want {
		t.Errorf("key %s, bash's %s", got, want)
	}
}

func TestBootArgs(t *testing.T) {
	b := bootSpec{Accel: "tcg", GuestDir: "/g", Share: "/s", Monitor: "/m.sock", MemMiB: 8192, Port: 16443, Assets: "/a", Parts: "/p"}
	args := bootArgs(b)
	for _, want := range [][]string{{"--accel", "tcg"}, {"--smp", "2"}, {"--mem", "8192"}, {"--hostfwd", "16443:6443"},
		{"--monitor", "/m.sock"}, {"--timeout", "86400"}, {"--nvme", "default"}, {"--zns", "default"}} {
		if i := slices.Index(args, want[0]); i < 0 || args[i+1] != want[1] {
			t.Errorf("%s %s missing: %v", want[0], want[1], args)
		}
	}
	if n := strings.Count(strings.Join(args, " "), "--nullblk"); n != 4 {
		t.Errorf("%d null_blk sets, want 4 (nullb0-nullb4)", n)
	}
	if slices.Contains(args, "--disk") {
		t.Error("a disk without an image disk")
	}
	if tail := args[len(args)-6:]; !slices.Equal(tail, []string{"--", "bash", "/s/node.sh", "/a", "/p", "/s"}) {
		t.Errorf("command %v", tail)
	}
	b.Disk = "/i/k.img,snapshot"
	if args := bootArgs(b); slices.Index(args, "--disk") < 0 || args[slices.Index(args, "--disk")+1] != "/i/k.img,snapshot" || slices.Index(args, "--disk") > slices.Index(args, "--") {
		t.Errorf("with an image disk: %v", args)
	}
	// the control plane on the host: the kubelet forwarded to the host, the API server forwarded into the guest
	b.HostControlPlane, b.KubeletFwd, b.Self = true, 30004, "/c/bin/zoned node"
	args = bootArgs(b)
	if i := slices.Index(args, "--hostfwd"); i < 0 || args[i+1] != "30004:10250" || slices.Contains(args[i+2:], "--hostfwd") {
		t.Errorf("host forwards %v, want the kubelet's alone", args)
	}
	if i := slices.Index(args, "--guestfwd"); i < 0 || args[i+1] != "10.0.2.100:16443='/c/bin/zoned node' pipe 127.0.0.1:16443" {
		t.Errorf("guest forward %v", args)
	}
}

func TestGuestLines(t *testing.T) {
	log := "SeaBIOS\r\nBooting from ROM..zoned-node: start\r\n[    3.1] kernel\nzoned-node: ready after 97s (images 12)\r\nzoned-node: cpu since boot 10\n"
	if !guestSaid(log, "start") || guestSaid(log, "image disk written") {
		t.Error("guestSaid")
	}
	if got := lastGuestLine(log); got != "zoned-node: cpu since boot 10" {
		t.Errorf("last %q", got)
	}
	if got := firstGuestLine(log, "ready"); got != "zoned-node: ready after 97s (images 12)" {
		t.Errorf("ready line %q", got)
	}
	if lastGuestLine("SeaBIOS\n") != "" {
		t.Error("a guest line before the guest said anything")
	}
	if got := lastLineWith(log, "zoned-node: cpu since boot"); got != "zoned-node: cpu since boot 10" {
		t.Errorf("cpu line %q", got)
	}
}

func TestGuestVisible(t *testing.T) {
	for path, want := range map[string]bool{"/root/.cache/zns-mysql/kind/parts": true, "/tmp/c/kind/parts": false, "/run/x": false, "/var/tmp/x": true} {
		if guestVisible(path) != want {
			t.Errorf("%s: %v", path, !want)
		}
	}
}

func TestJudgeImageDisk(t *testing.T) {
	for _, c := range []struct {
		disk, log string
		want      imageDiskVerdict
	}{
		{"/i/k.img,snapshot", "zoned-node: ready", diskKept},
		{"/i/k.img,snapshot", "zoned-node: WARNING: cannot mount the image disk /dev/vda", diskDrop},
		{"/i/k.img,snapshot", "zoned-node: WARNING: the image disk lacks pause", diskDrop},
		{"/i/k.img.part", "zoned-node: image disk written (3 GiB)", diskPromote},
		{"/i/k.img.part", "zoned-node: ready", diskDrop},
	} {
		if got := judgeImageDisk(c.disk, c.log); got != c.want {
			t.Errorf("%s after %q: %d, want %d", c.disk, c.log, got, c.want)
		}
	}
}
