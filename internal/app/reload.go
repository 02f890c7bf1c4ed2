package app

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	discordbot "github.com/switchboardhq/switchboard/bots/discord"
	slackbot "github.com/switchboardhq/switchboard/bots/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/memory"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/scheduler"
)

// Hot reload. SIGHUP (see cmd/switchboard) or a change to switchboard.yaml
// or mcp-servers.json reloads the agents, the channels, the guard's
// policies and approvals, the access: block and the schedules without a
// restart. The files are read and checked whole first (the same checks as
// at start, the agents' keys and tools included); a file with any error
// is refused and the old configuration stays, the error logged and kept
// for GET /api/config/status and `switchboard doctor`. A turn already
// running finishes with the agent it started with.
//
// What a reload does not change, and needs a restart for: the platforms'
// tokens and their slack: and discord: sections, memory:, browser:, sso:, and the HTTP
// settings from the environment. Those sections are checked all the same,
// so a file the next start would refuse is refused now. A changed mcp-servers.json replaces the
// MCP clients: the old sessions end and the new servers connect.

// DefaultReloadPoll is how often the configuration files are checked for a
// change (SWITCHBOARD_RELOAD_POLL).
const DefaultReloadPoll = 2 * time.Second

// ReloadStatus is the outcome of the last reload (config.ReloadStatus).
type ReloadStatus = config.ReloadStatus

// reloader keeps the reload state of an App.
type reloader struct {
	mu     sync.Mutex // one reload at a time
	status ReloadStatus
	seen   map[string][32]byte // file → the hash last loaded or refused
	stop   chan struct{}
	done   chan struct{}
}

// Reload reads switchboard.yaml and mcp-servers.json again and applies
// them, or refuses them whole and keeps the configuration in use. The
// error says why it was refused.
func (a *App) Reload(ctx context.Context) error {
	a.reload.mu.Lock()
	defer a.reload.mu.Unlock()
	a.noteFiles()
	err := a.apply(ctx)
	now := a.cfg.Now().UTC()
	if err != nil {
		err = fmt.Errorf("reload refused, the configuration in use stays: %w", err)
		a.reload.status.LastError, a.reload.status.ErrorAt = redact.String(err.Error()), &now
		a.log.ErrorContext(ctx, "configuration reload refused", "error", err)
		return err
	}
	a.reload.status.LastError, a.reload.status.ErrorAt = "", nil
	a.reload.status.LoadedAt = now
	a.reload.status.Reloads++
	a.log.InfoContext(ctx, "configuration reloaded", "agents", len(a.Service.Agents().Agents))
	return nil
}

// ReloadStatus is the outcome of the last reload.
func (a *App) ReloadStatus() ReloadStatus {
	a.reload.mu.Lock()
	defer a.reload.mu.Unlock()
	st := a.reload.status
	st.Files = a.watchedFiles()
	return st
}

// configPath is the agents file a reload reads: ConfigPath, or the default
// file once it exists ("" while it does not).
func (a *App) configPath() string {
	if a.cfg.ConfigPath != "" || a.cfg.DefaultConfigPath == "" {
		return a.cfg.ConfigPath
	}
	if _, err := os.Stat(a.cfg.DefaultConfigPath); err == nil {
		return a.cfg.DefaultConfigPath
	}
	return ""
}

func (a *App) apply(ctx context.Context) error {
	path := a.configPath()
	agents, err := config.Load(path, a.cfg.Env)
	if err != nil {
		return err
	}
	mcpServers, err := a.cfg.loadMCP()
	if err != nil {
		return err
	}
	schedCfg := &agents.Schedules
	if err := scheduler.ValidateConfig(schedCfg); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := checkRestartSections(agents); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := checkAgentTools(agents, a.Registry, mcpServers); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := checkScheduleAgents(agents, schedCfg); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	redact.AddSecrets(a.cfg.secrets(agents)...)
	// Core checks every agent's backend before it swaps anything.
	if err := a.Service.Reload(ctx, &core.ReloadParams{
		Agents: agents, Policies: agents.Policies(), Deciders: deciders(agents.Approvals),
		Admins: yamlAdmins(agents.Approvals), ApprovalTTL: agents.Approvals.ExpiryDuration(),
	}); err != nil {
		return err
	}
	a.agents.Store(agents)
	a.Access.SetAccess(&agents.Access)
	if err := a.Scheduler.ApplyConfig(ctx, schedCfg); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if a.started.Load() {
		return a.reloadMCP(ctx, mcpServers)
	}
	return nil
}

// watchedFiles are the configuration files a change of which reloads.
func (a *App) watchedFiles() []string {
	var files []string
	// The default file is watched before it exists: one created after the
	// start is loaded.
	if f := cmp.Or(a.cfg.ConfigPath, a.cfg.DefaultConfigPath); f != "" {
		files = append(files, f)
	}
	mcp := a.cfg.MCPConfigPath
	if mcp == "" {
		mcp = "mcp-servers.json"
	}
	return append(files, mcp)
}

// noteFiles records the files' contents as seen, so the watcher does not
// load again what was just loaded (or refused).
func (a *App) noteFiles() (changed bool) {
	if a.reload.seen == nil {
		a.reload.seen = map[string][32]byte{}
	}
	for _, f := range a.watchedFiles() {
		raw, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			continue
		}
		sum := sha256.Sum256(raw)
		if old, ok := a.reload.seen[f]; !ok || !bytes.Equal(old[:], sum[:]) {
			changed = changed || ok
			a.reload.seen[f] = sum
		}
	}
	return changed
}

// startWatch polls the files' contents every interval (a hash, so an
// editor that rewrites a file unchanged does not reload) and reloads on a
// change. A file refused is not tried again until it changes once more.
func (a *App) startWatch(ctx context.Context) {
	interval := a.cfg.ReloadPoll
	if interval < 0 {
		return
	}
	if interval == 0 {
		interval = DefaultReloadPoll
	}
	a.reload.mu.Lock()
	a.noteFiles()
	a.reload.status.LoadedAt = a.cfg.Now().UTC()
	a.reload.stop, a.reload.done = make(chan struct{}), make(chan struct{})
	stop, done := a.reload.stop, a.reload.done
	a.reload.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			a.reload.mu.Lock()
			changed := a.noteFiles()
			a.reload.mu.Unlock()
			if changed {
				a.log.InfoContext(ctx, "configuration file changed, reloading")
				_ = a.Reload(ctx)
			}
		}
	}()
	a.onStop(func(context.Context) error {
		close(stop)
		<-done
		return nil
	})
}

// reloadPollFromEnv reads SWITCHBOARD_RELOAD_POLL: a duration, or off.
func reloadPollFromEnv(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv("SWITCHBOARD_RELOAD_POLL"))
	switch v {
	case "":
		return 0, nil
	case "off", "0":
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 100*time.Millisecond {
		return 0, fmt.Errorf("SWITCHBOARD_RELOAD_POLL: %q must be a duration of at least 100ms, such as 2s, or off", v)
	}
	return d, nil
}

// checkRestartSections checks the sections a reload does not apply
// (slack:, discord:, memory:) as the start does, so that a file the next
// start would refuse is refused now.
func checkRestartSections(agents *config.Config) error {
	_, slackErr := slackbot.ConfigFrom(&agents.Slack)
	_, discordErr := discordbot.ConfigFrom(&agents.Discord)
	_, memoryErr := memory.ConfigFrom(&agents.Memory)
	return errors.Join(slackErr, discordErr, memoryErr)
}

// checkScheduleAgents refuses schedules naming an agent the file does not
// declare, before anything is swapped (the scheduler checks it only when
// it declares them, after the agents are replaced).
func checkScheduleAgents(agents *config.Config, c *scheduler.Config) error {
	var all []scheduler.Common
	for _, r := range c.Routines {
		all = append(all, r.ScheduleCommon)
	}
	for _, p := range c.Pulses {
		all = append(all, p.ScheduleCommon)
	}
	for _, l := range c.Loops {
		all = append(all, l.ScheduleCommon)
	}
	for _, cm := range all {
		if _, ok := agents.Find(cm.Agent); !ok {
			return fmt.Errorf("schedules: %q names agent %q, which is not declared", cm.Name, cm.Agent)
		}
	}
	return nil
}
