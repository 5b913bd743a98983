// Command zonednode is hack/qemu/zoned-node.sh: a Kubernetes node with zoned block devices in the QEMU guest,
// booted, described, and stopped. hack/qemu/zoned-node.sh builds it and hands its command line over (--help
// lists the commands and every knob). It prepares what the guest reads (the guest, the Kubernetes binaries, the
// node's parts, the images and their disk, node.sh, a token), starts QEMU through hack/qemu/run.sh in a process
// group of its own whose leader it records, and follows the guest's log until the node is Ready. The guest's own
// side, hack/qemu/guest-node/node.sh, stays shell: it is the guest's init.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the command; it returns the exit status: 2 for a wrong command line or knob, 1 when the command failed.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "up", "down", "env", "status", "kubectl":
	case "serve", "pipe":
		// the node's own processes (up starts serve, QEMU's guest forward pipe), not commands for a person
		if len(args) != 2 {
			fmt.Fprintf(stderr, "zoned-node: %s takes one argument\n", cmd)
			return 2
		}
		if cmd == "serve" {
			return serveMain(args[1], stdout)
		}
		return pipeMain(args[1])
	default:
		fmt.Fprint(stderr, usage)
		return 2
	}
	cfg, err := parseConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "zoned-node: %v\n", err)
		return 2
	}
	root, err := os.Getwd()
	if err == nil {
		err = os.MkdirAll(filepath.Join(cfg.CacheRoot, "zoned-node"), 0o755)
	}
	if err != nil {
		fmt.Fprintf(stderr, "zoned-node: ERROR: %v\n", err)
		return 1
	}
	n := newNode(cfg, root, os.Environ(), stdout, stderr)
	switch cmd {
	case "up":
		err = n.up()
	case "down":
		err = n.down()
	case "env":
		err = n.env()
	case "status":
		n.status()
	case "kubectl":
		err = n.kubectl(args[1:])
	}
	if err != nil {
		n.Logf("ERROR: %v", err)
		return 1
	}
	return 0
}

// env prints the settings for the e2e suite and the demo.
func (n *node) env() error {
	if !n.running() || !n.ready() {
		return errors.New("the node is not up: hack/qemu/zoned-node.sh up")
	}
	_, err := io.WriteString(n.result, envLine(n.read("accel"), n.kubeconfig, n.read("tag")))
	return err
}

func (n *node) status() {
	if !n.running() {
		n.Logf("not running")
		return
	}
	ready := ""
	if n.ready() {
		ready = ", Ready"
	}
	n.Logf("running (pid %d, %s)%s", n.pid(), n.read("accel"), ready)
}

// kubectl becomes the node's kubectl on its cluster (the one hack/kubernetes.sh built), with args.
func (n *node) kubectl(args []string) error {
	paths := n.read("paths")
	if paths == "" {
		return errors.New("the node was never brought up: hack/qemu/zoned-node.sh up")
	}
	if _, err := os.Stat(n.kubeconfig); err != nil {
		return errors.New("the node was never brought up: hack/qemu/zoned-node.sh up")
	}
	assets, _, _ := strings.Cut(paths, "\n")
	bin := filepath.Join(assets, "kubectl")
	return syscall.Exec(bin, append([]string{bin, "--kubeconfig", n.kubeconfig}, args...), os.Environ())
}
