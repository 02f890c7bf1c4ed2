// Package clitest builds the fake Claude Code and Codex CLIs of
// testdata/fakecli for tests of the CLI backends: a real program that
// prints the event streams the real CLIs print, so the backends run it as
// they run the real ones (a subprocess, its stdin, stdout, stderr, exit
// status and process group).
package clitest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Fake is a built fake CLI.
type Fake struct {
	// Claude and Codex are the program's paths under each name; the name
	// picks the dialect.
	Claude, Codex string
	// State is the directory where it keeps its sessions; Log is the file
	// where it records each call (see Calls).
	State, Log string
}

// Build returns the fake, compiled once per version of its source: the
// program is kept in the user's cache directory (as go keeps its build
// cache), keyed by a hash of its source, go.mod and the Go version, so
// repeated tests do not pay for a build. Each call gets a fresh state
// directory and log.
func Build(tb testing.TB) *Fake {
	tb.Helper()
	bin, err := build()
	if err != nil {
		tb.Fatalf("building the fake CLI: %v", err)
	}
	dir := tb.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		tb.Fatal(err)
	}
	return &Fake{Claude: filepath.Join(bin, "claude"), Codex: filepath.Join(bin, "codex"), State: state, Log: filepath.Join(dir, "calls.jsonl")}
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// build compiles the fake into its cache directory unless it is there, and
// returns the directory (with claude, and codex linked to it).
func build() (string, error) {
	buildOnce.Do(func() { buildDir, buildErr = buildCached() })
	return buildDir, buildErr
}

func buildCached() (string, error) {
	here, err := packageDir()
	if err != nil {
		return "", err
	}
	src := filepath.Join(here, "testdata", "fakecli")
	h := sha256.New()
	for _, p := range []string{filepath.Join(src, "main.go"), filepath.Join(here, "..", "..", "go.mod")} {
		raw, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		h.Write(raw)
	}
	h.Write([]byte(runtime.Version()))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "switchboard-fakecli", hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "codex")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	// Built aside and renamed into place, so a concurrent test process
	// never runs half a program.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "build", "-o", filepath.Join(tmp, "claude"), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	if err := os.Symlink("claude", filepath.Join(tmp, "codex")); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "codex")); serr == nil {
			return dir, nil // another process won the race
		}
		return "", err
	}
	return dir, nil
}

// packageDir is this package's source folder: from the file name the
// compiler recorded, or, when the test was built with -trimpath (CI's
// build cache is shared across clones that way) and that name is the
// import path's, from go list, which the test's working folder (inside the
// module) resolves.
func packageDir() (string, error) {
	_, file, _, _ := runtime.Caller(0)
	if filepath.IsAbs(file) {
		return filepath.Dir(file), nil
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/switchboardhq/switchboard/internal/clitest").Output()
	if err != nil {
		return "", fmt.Errorf("finding the clitest package's folder (built with -trimpath): go list: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Env is the environment that runs the fake with scenario (see
// testdata/fakecli), keeping its state and log here.
func (f *Fake) Env(scenario string) []string {
	return []string{"FAKECLI_SCENARIO=" + scenario, "FAKECLI_STATE=" + f.State, "FAKECLI_LOG=" + f.Log, "PATH=" + os.Getenv("PATH")}
}

// Call is one run of the fake, as it recorded it.
type Call struct {
	Args        []string `json:"args"`
	Stdin       string   `json:"stdin"`
	Dir         string   `json:"dir"`
	Resume      string   `json:"resume"`
	MCPTokenSet bool     `json:"mcp_token_set"`
	EnvCount    int      `json:"env_count"`
}

// Calls reads the calls recorded so far.
func (f *Fake) Calls(tb testing.TB) []Call {
	tb.Helper()
	raw, err := os.ReadFile(f.Log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	var calls []Call
	for _, line := range splitLines(raw) {
		var c Call
		if err := jsonUnmarshal(line, &c); err != nil {
			tb.Fatalf("reading the fake's log: %v", err)
		}
		calls = append(calls, c)
	}
	return calls
}
