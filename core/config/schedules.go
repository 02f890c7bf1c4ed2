package config

import "github.com/switchboardhq/switchboard/store"

// SchedulesSection is the schedules: section of switchboard.yaml: the
// routines, pulses and goal loops the file declares. Load decodes it;
// the scheduler checks what needs its clock and parser (cron lines, time
// zones) and declares them at start and on every reload. A schedule's
// state (paused, data, history) survives a change of its declaration; one
// removed from the file is left alone: delete it with a command.
//
//	schedules:
//	  defaults: {platform: slack, workspace: T0123, owner: U0789, time_zone: America/New_York}
//	  routines: [...]
//	  pulses: [...]
//	  loops: [...]
type SchedulesSection struct {
	// Defaults apply to every declared schedule that leaves them out.
	Defaults ScheduleDefaults `yaml:"defaults,omitempty"`
	// Routines run an instruction on a schedule; with template: briefing
	// each run posts one card.
	Routines []RoutineDecl `yaml:"routines,omitempty"`
	// Pulses are an agent's own cheap check-ins: no model call when
	// nothing on the checklist changed.
	Pulses []PulseDecl `yaml:"pulses,omitempty"`
	// Loops are goal loops: iterations towards an outcome until it is
	// complete, blocked or out of budget.
	Loops []LoopDecl `yaml:"loops,omitempty"`
}

// ScheduleDefaults are the platform, workspace, owner and time zone a
// declaration may leave out.
type ScheduleDefaults struct {
	// Platform is where schedules deliver: slack or discord.
	Platform string `yaml:"platform,omitempty"`
	// Workspace is the Slack team or Discord guild id schedules belong to.
	Workspace string `yaml:"workspace,omitempty"`
	// Owner is the platform user id who owns schedules and gets their DMs.
	Owner string `yaml:"owner,omitempty"`
	// TimeZone is the IANA time zone cron lines and every are read in.
	TimeZone string `yaml:"time_zone,omitempty" default:"UTC"`
}

// ScheduleCommon is what every declaration has.
type ScheduleCommon struct {
	// Agent is the declared agent that does the work.
	Agent string `yaml:"agent"`
	// Name is unique among the agent's schedules of one kind: 1-64
	// lowercase letters, digits, - or _.
	Name string `yaml:"name"`
	// Platform overrides defaults.platform.
	Platform string `yaml:"platform,omitempty"`
	// Workspace overrides defaults.workspace.
	Workspace string `yaml:"workspace,omitempty"`
	// Channel delivers to a channel; empty delivers to the owner's DM.
	Channel string `yaml:"channel,omitempty"`
	// Owner overrides defaults.owner.
	Owner string `yaml:"owner,omitempty"`
	// Every is an interval such as 30m, 4h or 1d (a calendar day in the
	// time zone). Give every or cron, not both.
	Every string `yaml:"every,omitempty"`
	// Cron is a five-field cron line read on the local clock of the time
	// zone, such as "0 8 * * 1-5".
	Cron string `yaml:"cron,omitempty"`
	// TimeZone overrides defaults.time_zone.
	TimeZone string `yaml:"time_zone,omitempty"`
	// Missed is what a fire that fell due while no instance ran does:
	// run_once (one run at start, however many were missed) or skip.
	Missed store.MissedPolicy `yaml:"missed,omitempty" default:"run_once"`
}

// RoutineDecl declares a routine.
type RoutineDecl struct {
	ScheduleCommon `yaml:",inline"`
	// Instruction is what the agent is asked at each run.
	Instruction string `yaml:"instruction"`
	// Template makes the routine a briefing: each run posts one card of
	// that template (briefing) at top level, and nothing else.
	Template string `yaml:"template,omitempty"`
}

// PulseDecl declares a pulse.
type PulseDecl struct {
	ScheduleCommon `yaml:",inline"`
	// Instruction is added to the pulse turn's prompt.
	Instruction string `yaml:"instruction,omitempty"`
	// Checklist is what the pulse looks at; at least one item.
	Checklist []ChecklistItem `yaml:"checklist"`
	// ActiveHours keeps the pulse quiet outside them.
	ActiveHours *ActiveHours `yaml:"active_hours,omitempty"`
	// RunAs names another declared agent to run the pulse turn, typically
	// one on a cheaper model with the same persona. Empty: the pulse's
	// agent.
	RunAs string `yaml:"run_as,omitempty"`
}

// ChecklistItem is one thing a pulse looks at. The scheduler keeps it as
// declared in the pulse's stored settings, hence the JSON names.
type ChecklistItem struct {
	// Item is what to look at, in words for the agent.
	Item string `json:"item" yaml:"item"`
	// Source names an input whose content is hashed: when no item's
	// content changed since the last pulse, no model is called. Built in:
	// day, hour and text (the item's arg).
	Source string `json:"source,omitempty" yaml:"source,omitempty"`
	// Arg is the source's argument (the text of a text source).
	Arg string `json:"arg,omitempty" yaml:"arg,omitempty"`
	// Tool, instead of a source, names a low-risk tool whose output is
	// the input, called with args.
	Tool string `json:"tool,omitempty" yaml:"tool,omitempty"`
	// Args are the tool's arguments.
	Args map[string]any `json:"args,omitempty" yaml:"args,omitempty"`
}

// ActiveHours limits when a pulse runs, in the schedule's time zone.
type ActiveHours struct {
	// Start is the time of day the hours begin, HH:MM.
	Start string `json:"start" yaml:"start"`
	// End is the time of day they end, HH:MM; one before start wraps
	// past midnight.
	End string `json:"end" yaml:"end"`
	// Days are the weekdays (mon … sun) the hours hold; empty: every day.
	Days []string `json:"days,omitempty" yaml:"days,omitempty"`
}

// LoopDecl declares a goal loop. Without every it is continuous.
type LoopDecl struct {
	ScheduleCommon `yaml:",inline"`
	// Goal is the outcome the loop works towards.
	Goal string `yaml:"goal"`
	// MaxIterations stops the loop after that many iterations.
	MaxIterations int `yaml:"max_iterations,omitempty" default:"10"`
	// TokenBudget stops the loop once its conversations used that many
	// tokens, summed from the recorded usage.
	TokenBudget int64 `yaml:"token_budget,omitempty" default:"200000"`
	// Deadline stops the loop at that time, RFC 3339.
	Deadline string `yaml:"deadline,omitempty"`
}
