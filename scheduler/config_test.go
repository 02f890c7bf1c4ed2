package scheduler

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

// The example in README.md, as a whole switchboard.yaml would hold it.
const exampleConfig = `
agents:
  - name: ops
schedules:
  defaults:
    platform: slack
    workspace: T0123
    owner: U0789
    time_zone: America/New_York
  routines:
    - agent: ops
      name: morning-briefing
      cron: "0 8 * * 1-5"
      channel: C0456
      template: briefing
      instruction: >
        Brief the team: open incidents, deploys since yesterday, today's
        on-call. One card, no prose.
    - agent: ops
      name: cost-check
      every: 4h
      missed: skip
      instruction: Check cloud spend against the budget and say if it drifts.
  pulses:
    - agent: ops
      name: inbox-watch
      every: 30m
      run_as: lite
      active_hours: {start: "09:00", end: "18:00", days: [mon, tue, wed, thu, fri]}
      checklist:
        - item: Anything in today's calendar that needs preparing?
          source: day
        - item: Keep it short.
  loops:
    - agent: ops
      name: fix-flaky-test
      goal: Find why TestCheckout is flaky and open a PR that fixes it.
      max_iterations: 8
      token_budget: 150000
      deadline: "2026-03-06T17:00:00-05:00"
`

// parseConfig reads the schedules of a whole switchboard.yaml as the app
// does: config.Parse decodes the file, ValidateConfig checks the section.
func parseConfig(raw string) (*Config, error) {
	file, err := config.Parse("switchboard.yaml", []byte(raw), nil)
	if err != nil {
		return nil, err
	}
	if err := ValidateConfig(&file.Schedules); err != nil {
		return nil, err
	}
	return &file.Schedules, nil
}

func TestConfigAndApply(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(exampleConfig)
	if err != nil {
		t.Fatalf("parsing the README example: %v", err)
	}
	if len(cfg.Routines) != 2 || len(cfg.Pulses) != 1 || len(cfg.Loops) != 1 {
		t.Fatalf("want 2 routines, 1 pulse, 1 loop; got %d, %d, %d", len(cfg.Routines), len(cfg.Pulses), len(cfg.Loops))
	}
	e := newEnv(t, newSQLite(t), nil, func(o *Options) { o.Config = cfg })
	ctx := context.Background()
	if err := e.sched.ApplyConfig(ctx, cfg); err != nil {
		t.Fatalf("applying the config: %v", err)
	}
	brief := must(e.sched.Find(ctx, "ops", store.ScheduleRoutine, "morning-briefing"))(t)
	if brief.Place != (store.Place{Platform: "slack", Workspace: "T0123", Channel: "C0456"}) || brief.Owner != "U0789" || brief.TimeZone != "America/New_York" {
		t.Fatalf("routine declared with defaults: %+v", brief)
	}
	if want := time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC); !brief.NextRunAt.Equal(want) {
		t.Fatalf("first briefing: want %s (08:00 New York), got %s", want, brief.NextRunAt)
	}
	if !strings.Contains(string(brief.Config), `"template":"briefing"`) {
		t.Fatalf("the briefing template is kept: %s", brief.Config)
	}
	cost := must(e.sched.Find(ctx, "ops", store.ScheduleRoutine, "cost-check"))(t)
	if !cost.Place.IsDM() || cost.Place.User != "U0789" || cost.Missed != store.MissedSkip {
		t.Fatalf("a routine without a channel goes to the owner's DM, with its missed policy: %+v", cost)
	}
	loop := must(e.sched.Find(ctx, "ops", store.ScheduleLoop, "fix-flaky-test"))(t)
	if !strings.Contains(string(loop.Config), `"max_iterations":8`) || loop.Spec != "continuous" {
		t.Fatalf("loop declared: spec %q config %s", loop.Spec, loop.Config)
	}

	// Applying again (a restart) keeps what happened since: a paused routine
	// stays paused; a changed instruction is taken.
	must(e.sched.Pause(ctx, cost, "holiday"))(t)
	cfg.Routines[1].Instruction = "Check spend."
	if err := e.sched.ApplyConfig(ctx, cfg); err != nil {
		t.Fatalf("applying the config again: %v", err)
	}
	cost = must(e.sched.Find(ctx, "ops", store.ScheduleRoutine, "cost-check"))(t)
	if cost.State != store.SchedulePaused || cost.Instruction != "Check spend." {
		t.Fatalf("re-applied: want paused with the new instruction, got %s %q", cost.State, cost.Instruction)
	}
}

func TestReadmeExampleMatchesTest(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatalf("reading README.md: %v", err)
	}
	if !strings.Contains(string(readme), strings.TrimSpace(exampleConfig[strings.Index(exampleConfig, "schedules:"):])) {
		t.Fatal("README.md must show the configuration example that TestConfigAndApply checks (copy exampleConfig's schedules section)")
	}
}

func TestValidateConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ yaml, want string }{
		{"schedules:\n  routines:\n    - agent: ops\n      name: x\n      every: 1h\n      instruction: y\n      platform: slack\n      channel: C1\n      colour: red\n", "colour"},
		{"schedules:\n  routines:\n    - agent: ops\n      name: x\n      instruction: y\n      platform: slack\n      channel: C1\n", "give every"},
		{"schedules:\n  routines:\n    - agent: ops\n      name: Bad Name\n      every: 1h\n      instruction: y\n      platform: slack\n      channel: C1\n", "name"},
		{"schedules:\n  routines:\n    - agent: ops\n      name: x\n      every: 1h\n      instruction: y\n      channel: C1\n", "platform"},
		{"schedules:\n  loops:\n    - agent: ops\n      name: x\n      goal: y\n      platform: slack\n      owner: U1\n      cron: 0 8 * * *\n", "not on a cron"},
		{"schedules:\n  pulses:\n    - agent: ops\n      name: x\n      every: 1h\n      platform: slack\n      owner: U1\n", "checklist"},
	}
	for _, tc := range tests {
		_, err := parseConfig(tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseConfig:\n%s\nwant an error mentioning %q, got %v", tc.yaml, tc.want, err)
		}
	}
	if cfg, err := parseConfig("agents:\n  - name: ops\n"); err != nil || len(cfg.Routines) != 0 {
		t.Fatalf("a file without schedules declares none: %v", err)
	}
}
