package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseArgsTakesEveryOption(t *testing.T) {
	c, err := parseArgs([]string{"--share", "/s", "--nullblk", "--count 2", "--nullblk", "--first 2", "--zns", "default",
		"--nvme", "ocp=off", "--disk", "a.img", "--disk", "b.img,snapshot", "--env", "A=1", "--mem", "2048", "--smp", "2",
		"--accel", "kvm", "--timeout", "60", "--console", "c.log", "--monitor", "/t/m.sock", "--guest-dir", "/g", "--kernel", "6.1", "--append", "x=y",
		"--hostfwd", "16443:6443", "--userland", "--", "echo", "--mem", "hi"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Share: "/s", Nullblk: []string{"--count 2", "--first 2"}, Disks: []Disk{{"a.img", false}, {"b.img", true}},
		Env: []string{"A=1"}, MemMiB: 2048, SMP: 2, Accel: "kvm", TimeoutS: 60, Console: "c.log", Monitor: "/t/m.sock", GuestDir: "/g",
		Kernel: "6.1", Append: "x=y", HostFwd: []PortForward{{16443, 6443}}, Userland: true, Command: []string{"echo", "--mem", "hi"}}
	want.Namespaces = c.Namespaces
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if len(c.Namespaces) != 2 || !c.Namespaces[0].Zoned || c.Namespaces[1].Zoned || c.Namespaces[1].OCP {
		t.Errorf("namespaces %+v", c.Namespaces)
	}
	if d, _ := parseArgs([]string{"--", "true"}); d.MemMiB != 1024 || d.SMP != 1 || d.Accel != "tcg" || d.TimeoutS != 300 {
		t.Errorf("defaults %+v", d)
	}
}

func TestParseArgsSaysWhatAnOptionTakes(t *testing.T) {
	for want, args := range map[string][]string{
		"no command: hack/qemu/run.sh [options] -- CMD":         {"--mem", "1"},
		"unknown option '--memory' (CMD goes after --":          {"--memory", "1", "--", "true"},
		"--mem, --smp and --timeout take whole numbers":         {"--mem", "1G", "--", "true"},
		"--timeout needs a value":                               {"--timeout"},
		"--accel takes tcg or kvm":                              {"--accel", "hvf", "--", "true"},
		"--kernel takes current or 6.1":                         {"--kernel", "7.3", "--", "true"},
		"--hostfwd needs HOSTPORT:GUESTPORT":                    {"--hostfwd", "6443", "--", "true"},
		"--guestfwd needs 10.0.2.N:PORT=COMMAND":                {"--guestfwd", "192.168.1.1:443=nc", "--", "true"},
		"--env needs NAME=VALUE":                                {"--env", "A", "--", "true"},
		"--disk 'a,b': a file name without commas":              {"--disk", "a,b", "--", "true"},
		"--zns needs a spec (or default)":                       {"--zns", "", "--", "true"},
		"--zns 'size': 'size' is not key=value":                 {"--zns", "size", "--", "true"},
		"--zns 'ocp=on': unknown key 'ocp' (zone_size":          {"--zns", "ocp=on", "--", "true"},
		"controller=previous needs a --zns on a controller":     {"--nvme", "default", "--zns", "controller=previous", "--", "true"},
		"--zns 'controller=next': controller takes own or prev": {"--zns", "controller=next", "--", "true"},
		"--nvme 'size=1.5G': size takes a whole number":         {"--nvme", "size=1.5G", "--", "true"},
		"--nvme 'lbs=1024': lbs takes 512 or 4096":              {"--nvme", "lbs=1024", "--", "true"},
		"--nvme 'fdp=yes': fdp takes on or off":                 {"--nvme", "fdp=yes", "--", "true"},
		"at most 26 --disk":                                     append(strings.Split(strings.Repeat("--disk x ", 27), " ")[:54], "--", "true"),
	} {
		if _, err := parseArgs(args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", args, err, want)
		}
	}
	if _, err := parseArgs([]string{"--help"}); err != errHelp {
		t.Errorf("--help: %v", err)
	}
}
