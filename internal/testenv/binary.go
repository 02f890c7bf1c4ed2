package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// MainWithBinary is a TestMain for packages that run the switchboard binary
// as users do: it builds cmd/switchboard into a new temporary folder, sets
// *binary to its path, runs the tests, removes the folder and exits with
// the tests' code. name tells the folder apart ("switchboard-<name>-").
func MainWithBinary(m *testing.M, name string, binary *string) {
	dir, err := os.MkdirTemp("", "switchboard-"+name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*binary = filepath.Join(dir, "switchboard")
	if out, err := BuildSwitchboard(*binary); err != nil {
		fmt.Fprintf(os.Stderr, "building switchboard: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// BuildSwitchboard builds cmd/switchboard, the binary people run, to path,
// and returns what go build printed. It builds with -trimpath, as the
// upgrade test builds the previous release: the packages that did not
// change since then come from the build cache.
func BuildSwitchboard(path string) ([]byte, error) {
	return exec.Command("go", "build", "-trimpath", "-o", path, "github.com/switchboardhq/switchboard/cmd/switchboard").CombinedOutput()
}
