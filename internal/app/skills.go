package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/skill"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// newSkills builds the skill library over st. toolsFor lists a context's
// tools (nil for the commands, which run no turns).
func newSkills(st store.Store, agents func() *config.Config, cfg Config, toolsFor func(tool.ContextName) []*tool.Tool) *skill.Library {
	return &skill.Library{
		Store: st, Logger: cfg.Logger.With("part", "skills"), Now: cfg.Now,
		// What requires-tools is checked against: the tools a turn of the
		// agent offers (see core's offer and offerSkills).
		AgentToolsFunc: func(name string, contextName tool.ContextName, grants []string) []string {
			ag, ok := agents().Find(name) // as last reloaded
			if !ok || toolsFor == nil {
				return nil
			}
			var out []string
			for _, tl := range toolsFor(contextName) {
				if len(ag.Tools) == 0 || slices.Contains(ag.Tools, tl.Name()) || slices.Contains(grants, tl.Name()) {
					out = append(out, tl.Name())
				}
			}
			return out
		},
	}
}

// buildSkills registers load_skill and read_skill_file and makes the
// platform layer the skills the binary ships plus those of
// SWITCHBOARD_SKILLS_DIR.
func (a *App) buildSkills(ctx context.Context, agents *config.Config) error {
	a.Skills = newSkills(a.Store, a.agents.Load, a.cfg, a.ToolsFor)
	tools, err := skill.Tools(a.Skills.Source)
	if err != nil {
		return fmt.Errorf("building the skill tools: %w", err)
	}
	for _, t := range tools {
		if err := a.Registry.Add(t); err != nil {
			return fmt.Errorf("registering %s: %w", t.Name(), err)
		}
	}
	platform, err := skill.Builtin()
	if err != nil {
		return err
	}
	if dir := a.cfg.SkillsDir; dir != "" {
		more, err := skill.FromDir(dir, skill.Limits{})
		if err != nil {
			return fmt.Errorf("SWITCHBOARD_SKILLS_DIR: %w", err)
		}
		// The operator's folder wins over a shipped skill of the same name.
		platform = slices.DeleteFunc(platform, func(s *skill.Skill) bool {
			return slices.ContainsFunc(more, func(m *skill.Skill) bool { return m.Name == s.Name })
		})
		platform = append(platform, more...)
	}
	if err := a.Skills.SyncPlatform(ctx, platform); err != nil {
		return fmt.Errorf("storing the platform skills: %w", err)
	}
	a.log.InfoContext(ctx, "platform skills ready", "count", len(platform))
	return nil
}

// OpenSkills opens and migrates the store and returns the skill library
// over it, for the skills commands, which run no service. It also returns
// the agents, so a command can check an agent's name. close closes the
// store.
func OpenSkills(ctx context.Context, cfg Config) (lib *skill.Library, agents *config.Config, close func() error, err error) {
	cfg.defaults()
	agents, err = config.Load(cfg.ConfigPath, cfg.Env)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: cfg.DatabaseURL, Logger: cfg.Logger, BinaryVersion: cfg.binaryVersion()})
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		_ = st.Close()
		return nil, nil, nil, fmt.Errorf("migrating: %w", err)
	}
	return newSkills(st, func() *config.Config { return agents }, cfg, nil), agents, st.Close, nil
}
