package scheduler

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

// Config is the schedules: section of switchboard.yaml, as config.Load
// decoded it (see config.SchedulesSection). Declared schedules are created
// at start, and updated when the file changes; their state (paused, data,
// history) is kept. A schedule removed from the file is left alone: delete
// it with a command.
type Config = config.SchedulesSection

// The declarations' parts, as the file has them.
type (
	// Common is what every declaration has.
	Common = config.ScheduleCommon
	// ChecklistItem is one thing a pulse looks at.
	ChecklistItem = config.ChecklistItem
	// ActiveHours limits when a pulse runs, in the schedule's time zone.
	ActiveHours = config.ActiveHours
)

func needsBriefings(c *Config) bool {
	for _, r := range c.Routines {
		if r.Template != "" {
			return true
		}
	}
	return false
}

// ValidateConfig checks what can be checked without the agents and the
// clock: names, the every or cron line and its time zone, where each
// schedule delivers. Errors name the setting as written in the file
// (schedules.routines[0].name).
func ValidateConfig(c *Config) error {
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
		if cm.Missed != "" && !cm.Missed.Valid() {
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
		if err := check("routines", i, &r.ScheduleCommon, true); err != nil {
			return err
		}
		if strings.TrimSpace(r.Instruction) == "" {
			return fmt.Errorf("schedules.routines[%d].instruction is required", i)
		}
	}
	for i := range c.Pulses {
		if err := check("pulses", i, &c.Pulses[i].ScheduleCommon, true); err != nil {
			return err
		}
		if len(c.Pulses[i].Checklist) == 0 {
			return fmt.Errorf("schedules.pulses[%d].checklist needs at least one item", i)
		}
	}
	for i := range c.Loops {
		l := &c.Loops[i]
		if err := check("loops", i, &l.ScheduleCommon, false); err != nil {
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

func params(c *Config, cm *Common, kind store.ScheduleKind) ScheduleParams {
	return ScheduleParams{
		Kind: kind, Agent: cm.Agent, Name: cm.Name, Owner: first(cm.Owner, c.Defaults.Owner),
		Target: Target{
			Platform:  first(cm.Platform, c.Defaults.Platform),
			Workspace: first(cm.Workspace, c.Defaults.Workspace),
			Channel:   cm.Channel,
		},
		Spec: specText(cm, "continuous"), TimeZone: first(cm.TimeZone, c.Defaults.TimeZone),
		Missed: cm.Missed, Source: "config", Upsert: true,
	}
}

// ApplyConfig creates or updates the declared schedules. Start calls it
// with Options.Config.
func (s *Scheduler) ApplyConfig(ctx context.Context, c *Config) error {
	if err := ValidateConfig(c); err != nil {
		return err
	}
	var all []ScheduleParams
	for _, r := range c.Routines {
		p := params(c, &r.ScheduleCommon, store.ScheduleRoutine)
		p.Instruction, p.Template = r.Instruction, r.Template
		all = append(all, p)
	}
	for _, d := range c.Pulses {
		p := params(c, &d.ScheduleCommon, store.SchedulePulse)
		p.Instruction = d.Instruction
		p.Pulse = &PulseConfig{Checklist: d.Checklist, ActiveHours: d.ActiveHours, RunAs: d.RunAs}
		all = append(all, p)
	}
	for _, l := range c.Loops {
		p := params(c, &l.ScheduleCommon, store.ScheduleLoop)
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
