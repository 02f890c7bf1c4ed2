package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/sandbox"
	"github.com/switchboardhq/switchboard/core/tool"
)

// sandboxCheckTimeout bounds the start's proof that the host can set a
// sandbox up (one short program).
const sandboxCheckTimeout = 30 * time.Second

// sandboxState is what became of the sandbox: section at start.
type sandboxState struct {
	configured bool
	err        error // why run_code is not offered; nil: it is
	languages  []sandbox.Language
	network    bool
}

// SandboxStatus is the sandbox's state as `switchboard doctor` reports it.
type SandboxStatus struct {
	// Configured: switchboard.yaml has a sandbox: section.
	Configured bool
	// Err says why run_code cannot be offered on this host; nil: it can.
	Err error
	// Languages are the languages it runs; Missing, the others and why.
	Languages []sandbox.Language
	Missing   map[sandbox.Language]string
	// Risk is run_code's declared risk with these settings.
	Risk tool.Risk
}

// sandboxOptions are the sandbox's options from the file's section.
func sandboxOptions(c *config.Sandbox, log *slog.Logger) sandbox.Options {
	return sandbox.Options{
		Bwrap: c.Bwrap, Network: c.Network, Timeout: c.Timeout, MemoryMB: c.MemoryMB, CPUSeconds: c.CPUSeconds,
		MaxProcesses: c.MaxProcesses, MaxOutputBytes: c.MaxOutputBytes, MaxFileBytes: c.MaxFileBytes,
		MaxFiles: c.MaxFiles, MaxRuns: c.MaxRuns, Logger: log,
	}
}

// checkSandbox builds the configured sandbox and proves the host can set
// it up; the status's Err says why not.
func checkSandbox(ctx context.Context, c *config.Sandbox, log *slog.Logger) (*sandbox.Sandbox, *SandboxStatus, error) {
	st := &SandboxStatus{Configured: c != nil}
	if c == nil {
		return nil, st, nil
	}
	sb, err := sandbox.New(sandboxOptions(c, log))
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	st.Languages, st.Missing, st.Risk = sb.Available(), sb.Missing(), sb.Risk()
	ctx, cancel := context.WithTimeout(ctx, sandboxCheckTimeout)
	defer cancel()
	st.Err = sb.Check(ctx)
	return sb, st, nil
}

// CheckSandbox proves, with the settings serve would use, that the host
// can run the sandbox: section's sandbox (for `switchboard doctor`).
func CheckSandbox(ctx context.Context, cfg Config) (*SandboxStatus, error) {
	cfg.defaults()
	agents, err := config.Load(cfg.ConfigPath, cfg.Env)
	if err != nil {
		return nil, err
	}
	_, st, err := checkSandbox(ctx, agents.Sandbox, cfg.Logger)
	return st, err
}

// buildSandbox offers run_code when switchboard.yaml has a sandbox:
// section and the host can set a sandbox up. When it cannot, the service
// runs without the tool: it logs why, /readyz says so, and agents naming
// it are not offered it.
func (a *App) buildSandbox(ctx context.Context, agents *config.Config, reg *tool.Registry) error {
	sb, st, err := checkSandbox(ctx, agents.Sandbox, a.log.With("part", "sandbox"))
	if err != nil {
		return fmt.Errorf("config %s: %w", a.cfg.ConfigPath, err)
	}
	a.sandbox = sandboxState{configured: st.Configured, err: st.Err, languages: st.Languages}
	if !st.Configured {
		return nil
	}
	a.sandbox.network = sb.Options().Network
	if st.Err != nil {
		a.log.WarnContext(ctx, "run_code is not offered: the sandbox cannot be set up on this host", "err", st.Err)
		reg.MarkUnavailable(sandbox.ToolRunCode, st.Err.Error())
		return nil
	}
	if err := sandbox.RegisterTool(reg, sb); err != nil {
		return fmt.Errorf("registering run_code: %w", err)
	}
	a.log.InfoContext(ctx, "run_code offered to the agents that name it", "languages", st.Languages, "network", a.sandbox.network, "risk", st.Risk)
	return nil
}

// readyz writes the sandbox's line. A sandbox the host cannot set up
// does not make the instance unready: the agents answer without run_code.
func (s sandboxState) readyz(w io.Writer) {
	switch {
	case !s.configured:
	case s.err != nil:
		fmt.Fprintf(w, "sandbox: unavailable, run_code not offered: %s\n", redact.String(s.err.Error()))
	default:
		net := "no network"
		if s.network {
			net = "network allowed"
		}
		langs := make([]string, len(s.languages))
		for i, l := range s.languages {
			langs[i] = string(l)
		}
		fmt.Fprintf(w, "sandbox: ready (%s; %s)\n", strings.Join(langs, ", "), net)
	}
}
