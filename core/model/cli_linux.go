//go:build linux

package model

import "syscall"

// dieWithParent has the kernel kill the CLI when the service dies
// (SIGKILL, an OOM kill): a CLI left running would go on editing a
// coding step's worktree while another instance takes the step over.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
