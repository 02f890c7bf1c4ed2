//go:build !unix

package model

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// killGroup kills the CLI; without process groups its children may outlive
// it.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
