package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// RequireBwrap skips the test when bubblewrap (bwrap) is not on PATH,
// unless CI=true makes that a failure (.ci/run installs it).
func RequireBwrap(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("bubblewrap is not installed (apt-get install bubblewrap; .ci/run installs it)")
		}
		tb.Skip("bubblewrap is not installed")
	}
}
