//go:build !unix

package bridge

import (
	"fmt"
	"os/exec"
)

func runAs(cmd *exec.Cmd, name string) error {
	if name == "" {
		return nil
	}
	return fmt.Errorf("user %s: %w", name, ErrUserSwitch)
}
