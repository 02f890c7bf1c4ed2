//go:build unix && !linux

package model

import "syscall"

// dieWithParent does nothing where the kernel has no parent-death
// signal: a CLI outlives a killed service until its own timeout.
func dieWithParent(*syscall.SysProcAttr) {}
