// Package clitest builds the fake Claude Code and Codex CLIs of
// testdata/fakecli for tests of the CLI backends: a real program that
// prints the event streams the real CLIs print, so the backends run it as
// they run the real ones (a subprocess, its stdin, stdout, stderr, exit
// status and process group).
package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// Build compiles the fake into a temporary directory (go build's cache
// makes repeats quick).
func Build(tb testing.TB) *Fake {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "testdata", "fakecli")
	dir := tb.TempDir()
	claude := filepath.Join(dir, "claude")
	cmd := exec.Command("go", "build", "-o", claude, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building the fake CLI: %v\n%s", err, out)
	}
	codex := filepath.Join(dir, "codex")
	if err := os.Symlink(claude, codex); err != nil {
		tb.Fatalf("linking the fake codex: %v", err)
	}
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		tb.Fatal(err)
	}
	return &Fake{Claude: claude, Codex: codex, State: state, Log: filepath.Join(dir, "calls.jsonl")}
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
