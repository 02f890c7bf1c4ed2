package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"time"
)

// ProbeState is what a capability probe found.
type ProbeState string

// Probe states.
const (
	// ProbeReady: the CLI runs and is logged in (or the backend needs no
	// local program).
	ProbeReady ProbeState = "ready"
	// ProbeNeedsAuth: the CLI runs but is not logged in.
	ProbeNeedsAuth ProbeState = "needs_auth"
	// ProbeUnreachable: the CLI cannot be run (not installed, not on PATH).
	ProbeUnreachable ProbeState = "unreachable"
)

// ProbeResult is the outcome of Probe.
type ProbeResult struct {
	Provider string     `json:"provider"`
	State    ProbeState `json:"state"`
	// Program is the program probed ("" for HTTP backends).
	Program string `json:"program,omitempty"`
	// Version is what the CLI's --version printed.
	Version string `json:"version,omitempty"`
	// Detail says why, and what to do about it, in a sentence.
	Detail string `json:"detail,omitempty"`
}

// probeTimeout bounds each command a probe runs.
const probeTimeout = 20 * time.Second

// Probe checks that the backend of spec can run here: for the CLI backends,
// that the program runs (`--version`) and is logged in (`claude auth status
// --json`, `codex login status`). It needs no model call and costs nothing.
// opts gives the program, the environment and the directory (the zero
// value: the program on PATH, with the process's environment). Backends
// that call an HTTP API have no local program and report ready; their keys
// are checked when they are built.
func Probe(ctx context.Context, spec Spec, opts CLIOptions) ProbeResult {
	res := ProbeResult{Provider: spec.Provider, State: ProbeReady}
	var d cliDialect
	switch spec.Provider {
	case ProviderClaudeCode:
		d = claudeCode{}
	case ProviderCodex:
		d = codex{}
	default:
		res.Detail = "no local program to probe"
		return res
	}
	res.Program = opts.Path
	if res.Program == "" {
		res.Program = d.program()
	}
	run := func(args ...string) (string, int, error) {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, res.Program, args...)
		cmd.Env, cmd.Dir = opts.Env, opts.Dir
		setProcessGroup(cmd)
		cmd.Cancel = func() error { killGroup(cmd); return nil }
		cmd.WaitDelay = cliKillGrace
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code, err = exit.ExitCode(), nil
		}
		return strings.TrimSpace(out.String() + "\n" + errOut.String()), code, err
	}

	out, code, err := run("--version")
	if err != nil || code != 0 {
		res.State = ProbeUnreachable
		why := fmt.Sprintf("exit status %d: %s", code, lastLines(out, 2))
		if err != nil {
			why = err.Error()
			if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
				why = "not found"
			}
		}
		res.Detail = fmt.Sprintf("cannot run %s (%s): install it (%s) or set %s", res.Program, why, installHint(spec.Provider), pathSetting(spec.Provider))
		return res
	}
	res.Version = firstLine(out)

	if spec.Provider == ProviderClaudeCode {
		out, code, err = run("auth", "status", "--json")
		var st struct {
			LoggedIn   bool   `json:"loggedIn"`
			AuthMethod string `json:"authMethod"`
		}
		if err == nil && json.Unmarshal([]byte(jsonObject(out)), &st) == nil {
			if st.LoggedIn {
				res.Detail = "logged in (" + st.AuthMethod + ")"
				return res
			}
			res.State, res.Detail = ProbeNeedsAuth, "not logged in: "+loginHint(spec.Provider)
			return res
		}
	} else {
		out, code, err = run("login", "status")
		if err == nil && code == 0 {
			res.Detail = firstLine(out)
			return res
		}
		if err == nil {
			res.State, res.Detail = ProbeNeedsAuth, "not logged in: "+loginHint(spec.Provider)
			return res
		}
	}
	// The program runs but its login could not be read.
	res.State = ProbeNeedsAuth
	res.Detail = fmt.Sprintf("could not read the login status (exit status %d: %s): %s", code, lastLines(out, 2), loginHint(spec.Provider))
	if err != nil {
		res.Detail = fmt.Sprintf("could not read the login status (%v): %s", err, loginHint(spec.Provider))
	}
	return res
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "WARNING:") {
			return truncate(l, 200)
		}
	}
	return ""
}

// jsonObject is the first {...} span of s, skipping warnings printed
// around it.
func jsonObject(s string) string {
	i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if i < 0 || j < i {
		return ""
	}
	return s[i : j+1]
}
