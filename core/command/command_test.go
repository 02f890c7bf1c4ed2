package command

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/scheduler"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake clock's start, a Monday.
var t0 = time.Date(2026, time.March, 2, 12, 0, 0, 0, time.UTC)

// newHandler builds a handler on a real scheduler over a fresh SQLite
// store, with the clock at t0.
func newHandler(t *testing.T) (*Handler, *scheduler.Scheduler) {
	t.Helper()
	ctx := context.Background()
	path := testenv.SQLiteFile(t)
	st, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		t.Fatalf("opening sqlite on %s: %v", path, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrating sqlite: %v", err)
	}
	clock := clockwork.NewFakeClockAt(t0)
	logger := slog.New(slog.NewTextHandler(tbWriter{t}, nil))
	reg := tool.NewRegistry()
	svc, err := core.New(core.Options{
		Store: st, Registry: reg, Logger: logger, Now: clock.Now,
		Agents: &config.Config{Agents: []config.Agent{
			{Name: "ops", Persona: "You run ops.", Model: "scripted:ops", StepBudget: 5, MaxTokens: 1000, Answers: config.Answers{Default: true}},
		}},
		Tools: func(tool.ContextName) []*tool.Tool { return reg.List() },
	})
	if err != nil {
		t.Fatalf("building core: %v", err)
	}
	sched, err := scheduler.New(scheduler.Options{Store: st, Service: svc, Registry: reg, Logger: logger, Clock: clock})
	if err != nil {
		t.Fatalf("building the scheduler: %v", err)
	}
	h, err := New(Options{Schedules: sched, DefaultAgent: "ops", Now: clock.Now, Rulebooks: svc})
	if err != nil {
		t.Fatalf("building the command handler: %v", err)
	}
	return h, sched
}

type tbWriter struct{ t testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestCommands(t *testing.T) {
	h, _ := newHandler(t)
	ctx := context.Background()
	req := func(text string) request {
		return request{Platform: "slack", Workspace: "T1", Channel: "C1", UserID: "U1", Text: text}
	}
	tests := []struct {
		text string
		want string // in the reply; "!" prefix: in the error
	}{
		{"help", "Scheduling commands"},
		{"remind in 2h -- call Ana", "remind you Mon 2 Mar 2026 14:00 UTC by DM (call Ana)"},
		{"remind me tomorrow 9:00 to send the report", "(send the report)"},
		{"remind soonish -- tea", "!cannot read \"soonish\" as a time"},
		{"reminders", "call Ana"},
		{"routine add digest cron 0 8 * * 1-5 tz America/New_York template briefing -- Morning digest", "digest — cron 0 8 * * 1-5 (America/New_York) → C1"},
		{"routine add dm-check every 4h to dm -- Check things", "→ DM"},
		{"routine add bad every 10s -- x", "!at most every 1m"},
		{"routine add nospec -- x", "!needs every"},
		{"routines", "digest"},
		{"routine change digest every 2h", "digest — every 2h"},
		{"routine change digest -- New words", "Routine changed"},
		{"routine pause digest", "paused"},
		{"routine pause digest", "!is paused, not active"},
		{"routine resume digest", "Resumed"},
		{"routine delete dm-check", "deleted"},
		{"routine delete dm-check", "!has no routine"},
		{"loop start ship every 1h max 5 -- Ship the release", "Goal loop started"},
		{"loops", "ship"},
		{"loop stop ship", "stopped"},
		{"loops", "has no loops here"},
		{"frobnicate", "!unknown command"},
	}
	for _, tc := range tests {
		reply, err := h.run(ctx, req(tc.text))
		if want, ok := strings.CutPrefix(tc.want, "!"); ok {
			if !refused(err) || !strings.Contains(err.Error(), want) {
				t.Fatalf("%q: want a refusal containing %q, got %v (reply %q)", tc.text, want, err, reply)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if !strings.Contains(reply, tc.want) {
			t.Fatalf("%q: want a reply containing %q, got %q", tc.text, tc.want, reply)
		}
	}
	// Another person cannot touch U1's routine; another workspace does not see it.
	other := req("routine pause digest")
	other.UserID = "U2"
	if _, err := h.run(ctx, other); err == nil || !strings.Contains(err.Error(), "not yours") {
		t.Fatalf("U2 pausing U1's routine: want refused, got %v", err)
	}
	elsewhere := req("routines")
	elsewhere.Workspace = "T2"
	if reply, _ := h.run(ctx, elsewhere); strings.Contains(reply, "digest") {
		t.Fatalf("a routine of T1 listed in T2: %q", reply)
	}
}

// TestAnswer runs commands the way platforms hand them over: a typed
// command and Discord's /remind form reach the same handler and read the
// same; a malformed command is answered, not failed.
func TestAnswer(t *testing.T) {
	h, sched := newHandler(t)
	ctx := context.Background()
	in := func(platform, workspace string) *core.Inbound {
		return &core.Inbound{Platform: platform, Workspace: workspace, Channel: "C1", UserID: "U9"}
	}
	tests := []struct {
		name string
		in   *core.Inbound
		cmd  *core.Command
		want string
	}{
		{"typed remind", in("slack", "T1"), &core.Command{Text: "remind in 10 minutes -- tea"},
			"OK, I'll remind you Mon 2 Mar 2026 12:10 UTC by DM (tea). Cancel with `reminder cancel reminder-"},
		{"the /remind form", in("discord", "G1"), &core.Command{Text: "remind", Fields: map[string]string{"when": "in 10 minutes", "what": "tea"}},
			"OK, I'll remind you Mon 2 Mar 2026 12:10 UTC by DM (tea). Cancel with `reminder cancel reminder-"},
		{"the /remind form, a time it cannot read", in("discord", "G1"), &core.Command{Text: "remind", Fields: map[string]string{"when": "soonish", "what": "tea"}},
			"⚠️ cannot read \"soonish\" as a time"},
		{"the /remind form without text", in("discord", "G1"), &core.Command{Text: "remind", Fields: map[string]string{"when": "in 2h", "what": " "}},
			"⚠️ a reminder needs text"},
		{"an unknown command", in("slack", "T1"), &core.Command{Text: "frobnicate"},
			"⚠️ unknown command \"frobnicate\""},
		{"login where no console is served", in("slack", "T1"), &core.Command{Text: "login"},
			"⚠️ the web console is not served here"},
		{"a routine too often", in("slack", "T1"), &core.Command{Text: "routine add fast every 10s -- x"},
			"⚠️ a routine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reply, err := h.Answer(ctx, tc.in, tc.cmd)
			if err != nil {
				t.Fatalf("Answer: %v", err)
			}
			if !strings.HasPrefix(reply, tc.want) {
				t.Fatalf("Answer = %q; want it to start with %q", reply, tc.want)
			}
			if strings.Contains(reply, "invalid schedule") {
				t.Fatalf("Answer = %q: a refusal reads in its own words, not as an invalid schedule", reply)
			}
		})
	}
	// Both reminders were set, each in the workspace it was asked from.
	list, err := sched.List(ctx, "ops", store.ScheduleReminder)
	if err != nil {
		t.Fatalf("listing reminders: %v", err)
	}
	var where []string
	for _, sc := range list {
		where = append(where, sc.Place.Platform+"/"+sc.Place.Workspace+": "+sc.Instruction)
	}
	if got := strings.Join(where, ", "); len(list) != 2 || !strings.Contains(got, "slack/T1: tea") || !strings.Contains(got, "discord/G1: tea") {
		t.Fatalf("reminders = %q; want one from slack/T1 and one from discord/G1", got)
	}
}

// refused reports whether err is a command refused in words fit for the
// person (ErrRefused, or the scheduler's ErrInvalid it passes on).
func refused(err error) bool {
	_, ok := refusalText(err)
	return ok && (errors.Is(err, ErrRefused) || errors.Is(err, scheduler.ErrInvalid) || errors.Is(err, scheduler.ErrTooMany))
}
