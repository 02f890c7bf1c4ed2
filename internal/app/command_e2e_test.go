package app_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/scheduler"
	"github.com/switchboardhq/switchboard/store"
)

// remindConfirmation starts the answer to a remind command, whichever
// platform and path it came by.
const remindConfirmation = "OK, I'll remind you "

// TestCommandsFromEveryPlatform: a typed "!remind" on Slack and on Discord
// and Discord's /remind form reach the one command handler and read alike;
// each sets a reminder in the workspace it was asked from.
func TestCommandsFromEveryPlatform(t *testing.T) {
	t.Parallel()
	t.Run("slack typed", func(t *testing.T) {
		eachStore(t, func(t *testing.T, db databaseFunc) {
			e := startSlack(t, db(t), envOptions{})
			e.mustPost(newEvent("EvRemind", directMessage("D0ALICE", "1700000600.000001", alice, "!remind in 2h -- call Ana")))
			reply := shown(e.waitReply("D0ALICE", remindConfirmation))
			if !strings.Contains(reply, "by DM (call Ana). Cancel with `reminder cancel reminder-") {
				t.Fatalf("the reply to !remind = %q; want the confirmation with what and how to cancel", reply)
			}
			checkReminder(t, e.app, "slack", e2eTeam, alice, "call Ana")
		})
	})
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		const channel = "3000000000000000009"
		e.mention(channel, discordAlice, "!remind in 2h -- call Ana")
		typed := e.waitBotMessage(channel, remindConfirmation).Content

		in := e.fake.SlashCommand(channel, "remind", map[string]string{"when": "in 2h", "what": "call Ana"}, discordAlice)
		var form string
		e.fake.Wait(t, "the /remind answer", func() bool {
			m := e.fake.Message(e.fake.Interaction(in.ID).OriginalID)
			if m == nil || !m.Ephemeral() || !strings.HasPrefix(m.Content, remindConfirmation) {
				return false
			}
			form = m.Content
			return true
		})
		// The two differ only in the reminder's name (and the minute, when
		// the clock turned between them).
		cut := func(s string) string { s, _, _ = strings.Cut(s, " UTC"); s, _, _ = strings.Cut(s, ":"); return s }
		if cut(typed) != cut(form) || !strings.Contains(form, "by DM (call Ana). Cancel with `reminder cancel reminder-") {
			t.Fatalf("typed !remind answered %q, /remind %q; want the same confirmation", typed, form)
		}
		checkReminder(t, e.app, "discord", discordGuild, discordAlice.ID, "call Ana", "call Ana")

		bad := e.fake.SlashCommand(channel, "remind", map[string]string{"when": "soonish", "what": "tea"}, discordAlice)
		e.fake.Wait(t, "the /remind answer to a time it cannot read", func() bool {
			m := e.fake.Message(e.fake.Interaction(bad.ID).OriginalID)
			return m != nil && m.Ephemeral() && m.Content == `⚠️ cannot read "soonish" as a time: say in 2h, at 15:30, tomorrow 9:00 or 2026-03-08 09:00`
		})
	})
}

// checkReminder checks that owner has exactly the reminders texts, set in
// platform's workspace.
func checkReminder(t *testing.T, a *app.App, platform, workspace, owner string, texts ...string) {
	t.Helper()
	list, err := a.Scheduler.List(context.Background(), a.Service.Agents().Default().Name, store.ScheduleReminder)
	if err != nil {
		t.Fatalf("listing reminders: %v", err)
	}
	var got []string
	for _, sc := range list {
		if sc.Place.Platform != platform || sc.Place.Workspace != workspace || sc.Owner != owner {
			t.Fatalf("reminder %s is for %s in %s/%s; want %s in %s/%s", sc.Name, sc.Owner, sc.Place.Platform, sc.Place.Workspace, owner, platform, workspace)
		}
		got = append(got, sc.Instruction)
	}
	if !slices.Equal(got, texts) {
		t.Fatalf("reminders = %q; want %q", got, texts)
	}
}

// TestScheduledRunToolsOnlyInScheduledRuns: pulse_report and
// report_progress end a pulse or a loop iteration, so a conversation on a
// platform or the API is not offered them; the scheduler's runs are.
func TestScheduledRunToolsOnlyInScheduledRuns(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs(filepath.Join("testdata", "slack_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Config{
		Addr:        "-",
		DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "switchboard.db"),
		Env:         func(k string) string { return map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}[k] },
		Logger:      testenv.Logger(t),
	})
	if err != nil {
		t.Fatalf("opening the service: %v", err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	runTools := []string{scheduler.ToolPulseReport, scheduler.ToolReportProgress}
	for _, ctxName := range tool.Contexts() {
		var names []string
		for _, tl := range a.ToolsFor(ctxName) {
			names = append(names, tl.Name())
		}
		if !slices.Contains(names, scheduler.ToolRemind) {
			t.Fatalf("tools offered in %s = %v; want the scheduler's remind among them", ctxName, names)
		}
		for _, name := range runTools {
			if offered, want := slices.Contains(names, name), ctxName == tool.ContextScheduler; offered != want {
				t.Errorf("in a %s conversation, %s offered = %v; want %v (tools: %v)", ctxName, name, offered, want, names)
			}
		}
	}
}
