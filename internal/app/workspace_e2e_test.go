package app_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/scheduler"
	"github.com/switchboardhq/switchboard/store"
)

// otherTeam is a second Slack team the same app answers in.
const otherTeam = "T0OTHER"

// mentionIn is an app_mention of alice in a channel of team.
func mentionIn(team, eventID, channel, ts, text string) signedEvent {
	ev := mention(channel, ts, "", alice, text)
	ev["team"] = team
	return signedEvent{body: slacktest.MustJSON(slacktest.EventCallback(team, eventID, ev)), secret: e2eSecret, signedAt: time.Now()}
}

// TestPinnedAgentAnswersOnlyInItsWorkspace: two Slack teams bound to two
// workspaces; the agent pinned to A answers in A's team and says nothing in
// B's, where nothing is stored; a routine made in B before the pin still
// posts in B, the workspace it was made in.
func TestPinnedAgentAnswersOnlyInItsWorkspace(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		ctx := context.Background()
		st := e.store
		a, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "A", Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New()})
		if err != nil {
			t.Fatal(err)
		}
		b, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "B", Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New()})
		if err != nil {
			t.Fatal(err)
		}
		for team, ws := range map[string]uuid.UUID{e2eTeam: a.ID, otherTeam: b.ID} {
			if _, err := workspace.BindWorkspace(ctx, st, "slack", team, ws); err != nil {
				t.Fatal(err)
			}
		}
		agentName := e.app.Service.Agents().Default().Name
		ag, err := st.AgentGetByName(ctx, agentName)
		if err != nil {
			t.Fatal(err)
		}

		// A routine made in B's channel, while the agent is unpinned.
		const chB, chA = "C0BCHAN", "C0ACHAN"
		sc, err := e.app.Scheduler.CreateSchedule(ctx, scheduler.ScheduleParams{
			Kind: store.ScheduleRoutine, Agent: agentName, Name: "digest", Owner: alice,
			Target: scheduler.Target{Platform: "slack", Workspace: otherTeam, Channel: chB},
			Spec:   "every 1h", Instruction: "post the digest",
		})
		if err != nil {
			t.Fatal(err)
		}
		if ws, err := st.ScheduleWorkspace(ctx, sc.ID); err != nil || ws == nil || *ws != b.ID {
			t.Fatalf("the routine made in team %s: want workspace B %s, got %v (%v)", otherTeam, b.ID, ws, err)
		}

		if _, err := st.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: []uuid.UUID{a.ID}}); err != nil {
			t.Fatal(err)
		}

		// In B's team the pinned agent does not answer, and nothing is kept.
		e.mustPost(mentionIn(otherTeam, "EvInB", chB, "1700000900.000001", "hello from B"))
		// In A's team it does.
		e.mustPost(mentionIn(e2eTeam, "EvInA", chA, "1700000900.000002", "hello from A"))
		e.waitReply(chA, fallbackReply("hello from A"))
		e.waitIdle()
		if msgs := e.botMessages(chB); len(msgs) != 0 {
			t.Fatalf("the agent pinned to A answered in team B: %+v", msgs)
		}
		if _, err := st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", otherTeam, chB, "1700000900.000001")}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the ignored message in B: want no conversation stored, got %v", err)
		}
		convA := e.conversation(chA, "1700000900.000002")
		if ws, err := st.ConversationWorkspace(ctx, convA.ID); err != nil || ws == nil || *ws != a.ID {
			t.Fatalf("the conversation in team %s: want workspace A, got %v (%v)", e2eTeam, ws, err)
		}

		// The routine fires: it posts in B, where it was made.
		now := time.Now()
		if _, err := st.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, NextRunAt: &now}); err != nil {
			t.Fatal(err)
		}
		if n, err := e.app.Scheduler.Tick(ctx); err != nil || n != 1 {
			t.Fatalf("firing the due routine: fired %d, %v; want 1", n, err)
		}
		poll(t, "the routine's post in B's channel", func() (bool, string) {
			msgs := e.botMessages(chB)
			for _, m := range msgs {
				if !m.Streaming {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", msgs)
		})
		e.waitIdle()
		if msgs := e.botMessages(chA); len(msgs) != 1 {
			t.Fatalf("A's channel after the routine: want only the one reply, got %+v", msgs)
		}
	})
}
