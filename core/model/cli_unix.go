//go:build unix

package model

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the CLI in a process group of its own, so that
// killGroup reaches every process it started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// killGroup kills the CLI's whole process group at once: a cancelled call
// must not leave a shell or a build behind.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
