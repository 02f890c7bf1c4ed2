package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

// Config is the schedules section of switchboard.yaml:
//
//	schedules:
//	  routines: [...]
//	  pulses: [...]
//	  loops: [...]
//
// Declared schedules are created at start, and updated when the file
// changes; their state (paused, data, history) is kept. A schedule removed
// from the file is left alone: delete it with a command.
type Config struct {
	// Defaults apply to every declared schedule that leaves them out.
	Defaults ConfigDefaults  `yaml:"defaults,omitempty"`
	Routines []RoutineConfig `yaml:"routines,omitempty"`
	Pulses   []PulseDecl     `yaml:"pulses,omitempty"`
	Loops    []LoopDecl      `yaml:"loops,omitempty"`
}

// ConfigDefaults are the platform, workspace, owner and time zone a
// declaration may leave out.
type ConfigDefaults struct {
	Platform  string `yaml:"platform,omitempty"`
	Workspace string `yaml:"workspace,omitempty"`
	Owner     string `yaml:"owner,omitempty"`
	TimeZone  string `yaml:"time_zone,omitempty"`
}

// Common is what every declaration has.
type Common struct {
	Agent     string `yaml:"agent"`
	Name      string `yaml:"name"`
	Platform  string `yaml:"platform,omitempty"`
	Workspace string `yaml:"workspace,omitempty"`
	// Channel delivers to a channel; empty delivers to the owner's DM.
	Channel  string `yaml:"channel,omitempty"`
	Owner    string `yaml:"owner,omitempty"`
	Every    string `yaml:"every,omitempty"`
	Cron     string `yaml:"cron,omitempty"`
	TimeZone string `yaml:"time_zone,omitempty"`
	// Missed: run_once (default) or skip.
	Missed string `yaml:"missed,omitempty"`
}

// RoutineConfig declares a routine (a briefing with template: briefing).
type RoutineConfig struct {
	Common      `yaml:",inline"`
	Instruction string `yaml:"instruction"`
	Template    string `yaml:"template,omitempty"`
}

// PulseDecl declares a pulse.
type PulseDecl struct {
	Common      `yaml:",inline"`
	Instruction string          `yaml:"instruction,omitempty"`
	Checklist   []ChecklistItem `yaml:"checklist"`
	ActiveHours *ActiveHours    `yaml:"active_hours,omitempty"`
	RunAs       string          `yaml:"run_as,omitempty"`
}

// LoopDecl declares a goal loop. Without every it is continuous.
type LoopDecl struct {
	Common        `yaml:",inline"`
	Goal          string `yaml:"goal"`
	MaxIterations int    `yaml:"max_iterations,omitempty"`
	TokenBudget   int64  `yaml:"token_budget,omitempty"`
	Deadline      string `yaml:"deadline,omitempty"`
}

// ParseConfig reads the schedules section out of a whole switchboard.yaml,
// strictly: an unknown key under schedules is an error naming it. Other
// top-level sections are not this package's and are ignored.
func ParseConfig(raw []byte) (*Config, error) {
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	node, ok := doc["schedules"]
	if !ok {
		return &Config{}, nil
	}
	// Node.Decode cannot refuse unknown fields: encode the section again
	// and decode it strictly.
	section, err := yaml.Marshal(&node)
	if err != nil {
		return nil, fmt.Errorf("reading schedules: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(section))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, config.YAMLSectionError("", raw, "schedules", section, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Config) needsBriefings() bool {
	for _, r := range c.Routines {
		if r.Template != "" {
			return true
		}
	}
	return false
}

// Validate checks what can be checked without the agents and the clock.
func (c *Config) Validate() error {
	seen := map[string]bool{}
	check := func(kind string, i int, cm *Common, needSpec bool) error {
		where := fmt.Sprintf("schedules.%s[%d]", kind, i)
		if cm.Agent == "" {
			return fmt.Errorf("%s.agent is required", where)
		}
		if !nameRE.MatchString(cm.Name) {
			return fmt.Errorf("%s.name %q must be 1-64 lowercase letters, digits, - or _", where, cm.Name)
		}
		key := kind + "/" + cm.Agent + "/" + cm.Name
		if seen[key] {
			return fmt.Errorf("%s: %s %q of agent %s is declared twice", where, strings.TrimSuffix(kind, "s"), cm.Name, cm.Agent)
		}
		seen[key] = true
		if cm.Every != "" && cm.Cron != "" {
			return fmt.Errorf("%s: give every or cron, not both", where)
		}
		if needSpec && cm.Every == "" && cm.Cron == "" {
			return fmt.Errorf("%s: give every (such as 4h) or cron (such as \"0 8 * * 1-5\")", where)
		}
		if cm.Missed != "" && !store.MissedPolicy(cm.Missed).Valid() {
			return fmt.Errorf("%s.missed %q must be run_once or skip", where, cm.Missed)
		}
		if _, err := ParseSpec(specText(cm, "continuous"), first(cm.TimeZone, c.Defaults.TimeZone)); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if first(cm.Platform, c.Defaults.Platform) == "" {
			return fmt.Errorf("%s.platform is required (or schedules.defaults.platform)", where)
		}
		if cm.Channel == "" && first(cm.Owner, c.Defaults.Owner) == "" {
			return fmt.Errorf("%s: give a channel, or an owner to DM", where)
		}
		return nil
	}
	for i := range c.Routines {
		r := &c.Routines[i]
		if err := check("routines", i, &r.Common, true); err != nil {
			return err
		}
		if strings.TrimSpace(r.Instruction) == "" {
			return fmt.Errorf("schedules.routines[%d].instruction is required", i)
		}
	}
	for i := range c.Pulses {
		if err := check("pulses", i, &c.Pulses[i].Common, true); err != nil {
			return err
		}
		if len(c.Pulses[i].Checklist) == 0 {
			return fmt.Errorf("schedules.pulses[%d].checklist needs at least one item", i)
		}
	}
	for i := range c.Loops {
		l := &c.Loops[i]
		if err := check("loops", i, &l.Common, false); err != nil {
			return err
		}
		if l.Cron != "" {
			return fmt.Errorf("schedules.loops[%d]: a loop runs continuously or every interval, not on a cron", i)
		}
		if strings.TrimSpace(l.Goal) == "" {
			return fmt.Errorf("schedules.loops[%d].goal is required", i)
		}
		if l.Deadline != "" {
			if _, err := time.Parse(time.RFC3339, l.Deadline); err != nil {
				return fmt.Errorf("schedules.loops[%d].deadline %q must be RFC 3339", i, l.Deadline)
			}
		}
	}
	return nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func specText(cm *Common, fallback string) string {
	switch {
	case cm.Every != "":
		return "every " + cm.Every
	case cm.Cron != "":
		return "cron " + cm.Cron
	}
	return fallback
}

func (c *Config) params(cm *Common, kind store.ScheduleKind) ScheduleParams {
	return ScheduleParams{
		Kind: kind, Agent: cm.Agent, Name: cm.Name, Owner: first(cm.Owner, c.Defaults.Owner),
		Target: Target{
			Platform:  first(cm.Platform, c.Defaults.Platform),
			Workspace: first(cm.Workspace, c.Defaults.Workspace),
			Channel:   cm.Channel,
		},
		Spec: specText(cm, "continuous"), TimeZone: first(cm.TimeZone, c.Defaults.TimeZone),
		Missed: store.MissedPolicy(cm.Missed), Source: "config", Upsert: true,
	}
}

// ApplyConfig creates or updates the declared schedules. Start calls it
// with Options.Config.
func (s *Scheduler) ApplyConfig(ctx context.Context, c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	var all []ScheduleParams
	for _, r := range c.Routines {
		p := c.params(&r.Common, store.ScheduleRoutine)
		p.Instruction, p.Template = r.Instruction, r.Template
		all = append(all, p)
	}
	for _, d := range c.Pulses {
		p := c.params(&d.Common, store.SchedulePulse)
		p.Instruction = d.Instruction
		p.Pulse = &PulseConfig{Checklist: d.Checklist, ActiveHours: d.ActiveHours, RunAs: d.RunAs}
		all = append(all, p)
	}
	for _, l := range c.Loops {
		p := c.params(&l.Common, store.ScheduleLoop)
		p.Instruction = l.Goal
		p.Loop = &LoopConfig{MaxIterations: l.MaxIterations, TokenBudget: l.TokenBudget}
		if l.Deadline != "" {
			t, _ := time.Parse(time.RFC3339, l.Deadline) // checked by Validate
			p.Loop.Deadline = &t
		}
		all = append(all, p)
	}
	for _, p := range all {
		if _, err := s.CreateSchedule(ctx, p); err != nil {
			return fmt.Errorf("schedules: declaring %s %s/%s: %w", p.Kind, p.Agent, p.Name, err)
		}
	}
	return nil
}
