package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// logBuffer is a service log kept for the test to read, and shown in the
// test's log as well.
type logBuffer struct {
	tb testing.TB
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tb.Log(strings.TrimSpace(string(p)))
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// fireDue makes the schedule due now and runs one scheduler tick, which
// enqueues its fire.
func fireDue(t *testing.T, e *installEnv, id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	if _, err := e.store.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: id, NextRunAt: &now}); err != nil {
		t.Fatal(err)
	}
	n, err := e.app.Scheduler.Tick(ctx)
	if err != nil {
		t.Fatalf("firing the due routine: %v", err)
	}
	if n == 1 {
		return
	}
	// The service's own scheduler ticks every second and may have fired it
	// first: then its last run is this one.
	sc, err := e.store.ScheduleGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 || sc.LastRunAt == nil || sc.LastRunAt.Before(now.Truncate(time.Millisecond)) {
		t.Fatalf("firing the due routine: fired %d, last run %v; want it fired once at %v", n, sc.LastRunAt, now)
	}
}

// deliverItems lists the deliver work items, whatever their state.
func deliverItems(t *testing.T, st store.Store) []*store.WorkItem {
	t.Helper()
	items, err := st.WorkList(context.Background(), &store.WorkListParams{Kind: core.WorkDeliver, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestSlackInstallRoutineStaysInItsTeam: two Slack teams installed through
// OAuth on one instance. A routine typed in team A (`!routine add`) fires
// and posts in A's channel with A's token, and nothing reaches team B.
// Once A uninstalls the app, the routine's next post there fails for good:
// its deliver item ends done after one attempt with the error logged ("not
// delivered, for good"), not retried, and team B is answered as before.
func TestSlackInstallRoutineStaysInItsTeam(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		ctx := context.Background()
		logs := &logBuffer{tb: t}
		e := startInstallLogged(t, db(t), "k1:"+testKey(7), logs.logger())
		e.install(teamA)
		e.install(teamB)
		const chA, chB = "C0AAA", "C0BBB"

		// The routine is typed in team A's channel.
		e.mustPost(teamMention(teamA, chA, "1700001000.000100", "!routine add digest every 1h -- post the digest"))
		poll(t, "the answer to !routine add in "+chA, func() (bool, string) {
			for _, m := range e.slack.Messages(chA) {
				if m.User == teamA.BotUserID && strings.Contains(shown(m), "digest") {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", e.slack.Messages(chA))
		})
		e.waitIdle()
		agentName := e.app.Service.Agents().Default().Name
		routines, err := e.app.Scheduler.List(ctx, agentName, store.ScheduleRoutine)
		if err != nil || len(routines) != 1 {
			t.Fatalf("routines after !routine add: %+v, %v; want one", routines, err)
		}
		sc := routines[0]
		if sc.Place.Platform != "slack" || sc.Place.Workspace != teamA.ID || sc.Place.Channel != chA {
			t.Fatalf("the routine targets %+v; want team A's channel %s", sc.Place, chA)
		}
		bindingA, err := e.store.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: "slack", ExternalID: teamA.ID})
		if err != nil {
			t.Fatal(err)
		}
		if ws, err := e.store.ScheduleWorkspace(ctx, sc.ID); err != nil || ws == nil || *ws != bindingA.WorkspaceID {
			t.Fatalf("the routine's workspace = %v, %v; want team A's %s", ws, err, bindingA.WorkspaceID)
		}

		// It fires: one more message in A's channel, posted with A's token;
		// nothing in B and no call with B's token.
		before := len(e.slack.Calls())
		inA := len(e.botMessagesOf(teamA, chA))
		fireDue(t, e, sc.ID)
		poll(t, "the routine's post in "+chA, func() (bool, string) {
			msgs := e.botMessagesOf(teamA, chA)
			return len(msgs) > inA && !msgs[len(msgs)-1].Streaming, fmt.Sprintf("%+v", msgs)
		})
		e.waitIdle()
		if msgs := e.botMessagesOf(teamA, chA); len(msgs) != inA+1 {
			t.Fatalf("A's channel after the fire has %d bot messages; want %d (one post of the routine)", len(msgs), inA+1)
		}
		posted := 0
		for _, c := range e.slack.Calls()[before:] {
			if c.Token == teamB.Token {
				t.Fatalf("the routine of team A called %s with team B's token", c.Method)
			}
			if ch := c.Params.Get("channel"); ch != "" && ch != chA {
				t.Fatalf("the routine of team A called %s in channel %s; want only %s", c.Method, ch, chA)
			}
			if strings.HasPrefix(c.Method, "chat.") && c.Token == teamA.Token {
				posted++
			}
		}
		if posted == 0 {
			t.Fatal("the routine posted nothing with team A's token")
		}
		for _, m := range e.slack.Messages(chB) {
			t.Fatalf("team B's channel got a message: %+v", m)
		}

		// A uninstalls the app; the routine fires again.
		e.slack.Revoke(teamA.Token)
		uninstall := slacktest.EventCallback(teamA.ID, "EvUninstallRoutineA", map[string]any{"type": "app_uninstalled", "event_ts": "1700001001.000100"})
		e.mustPost(signedEvent{body: slacktest.MustJSON(uninstall), secret: e2eSecret, signedAt: time.Now()})
		if _, err := e.store.SlackInstallationGet(ctx, teamA.ID); !errorsIsNotFound(err) {
			t.Fatalf("team A's installation after app_uninstalled: %v, want not found", err)
		}
		var earlier []uuid.UUID
		for _, it := range deliverItems(t, e.store) {
			earlier = append(earlier, it.ID)
		}
		before = len(e.slack.Calls())
		fireDue(t, e, sc.ID)
		// Team B is answered meanwhile and after.
		e.mustPost(teamMention(teamB, chB, "1700001002.000100", "still here after A left"))
		e.replyIn(teamB, chB, "still here after A left")
		e.waitIdle() // a retried delivery would keep an item waiting here

		var gone []*store.WorkItem
		for _, it := range deliverItems(t, e.store) {
			if slices.Contains(earlier, it.ID) || it.ConversationID == nil {
				continue
			}
			bs, err := e.store.BindingListByConversation(ctx, *it.ConversationID)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				if b.Place.Workspace == teamA.ID {
					gone = append(gone, it)
				}
			}
		}
		if len(gone) == 0 {
			t.Fatal("the routine's second fire made no delivery for team A's channel")
		}
		for _, it := range gone {
			if it.State != store.WorkDone || it.Attempts != 1 {
				t.Fatalf("the delivery to uninstalled team A ended %s after %d attempts (last error %q); want done after one, not retried", it.State, it.Attempts, it.LastError)
			}
		}
		if log := logs.String(); !strings.Contains(log, "not delivered, for good") || !strings.Contains(log, "not installed in this team") {
			t.Fatal("the service log does not say the delivery to team A failed for good because the app is not installed there")
		}
		for _, c := range e.slack.Calls()[before:] {
			if c.Token == teamA.Token && c.Method != "auth.test" {
				t.Fatalf("after the uninstall, %s was called with team A's token", c.Method)
			}
		}
	})
}

// botMessagesOf are the messages team's bot posted in channel.
func (e *installEnv) botMessagesOf(team slacktest.Team, channel string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.slack.Messages(channel) {
		if m.User == team.BotUserID {
			out = append(out, m)
		}
	}
	return out
}
