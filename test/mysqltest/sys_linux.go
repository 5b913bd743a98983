package mysqltest

import (
	"os/exec"
	"syscall"
)

const tmpfsMagic = 0x01021994

func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}

// setDeathSignal kills the server if the test binary dies first (a panic,
// a -timeout abort), so that no orphaned mariadbd outlives the run.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
