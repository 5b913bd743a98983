//go:build !linux

package mysqltest

import "os/exec"

func isTmpfs(string) bool { return false }

func setDeathSignal(*exec.Cmd) {}
