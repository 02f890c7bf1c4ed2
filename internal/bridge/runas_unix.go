//go:build unix

package bridge

import (
	"fmt"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// runAs makes cmd run as the OS user name ("" leaves it as it is).
func runAs(cmd *exec.Cmd, name string) error {
	if name == "" {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("user %s: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("user %s: %w", name, ErrUserSwitch)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Env = append(cmd.Env, "HOME="+u.HomeDir, "USER="+u.Username)
	return nil
}
