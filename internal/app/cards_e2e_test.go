package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gopkg.in/yaml.v3"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// What people see of buttons once they are settled: a card's buttons act
// for the first click only, and an approval nobody answered loses its
// buttons when it expires; a late click is told why nothing happens.

const (
	cardsKeyword = "show me the plans"
	cardsPicked  = "Going with your pick."
)

// cardsScript writes a model that answers cardsKeyword with a card of two
// signal buttons, and anything else (the click's turn) with cardsPicked.
func cardsScript(tb testing.TB) string {
	tb.Helper()
	card := map[string]any{
		"kind": "generic", "title": "Plans",
		"items": []map[string]any{{"title": "Plan A"}, {"title": "Plan B"}},
		"actions": []map[string]any{
			{"id": "pick_a", "label": "Pick A", "kind": "signal"},
			{"id": "pick_b", "label": "Pick B", "kind": "signal"},
		},
	}
	script := map[string]any{
		"name": "cards-e2e", "chunk_delay": "0s",
		"turns": []map[string]any{
			{"after_tool": "post_result", "text": "Here are the plans."},
			{"when_last_user_contains": cardsKeyword, "tool_calls": []map[string]any{{"name": "post_result", "input": card}}},
		},
		"fallback": map[string]any{"text": cardsPicked},
	}
	data, err := yaml.Marshal(script)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "cards.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// repliesSaying counts the conversation's assistant entries whose text is
// text: one per turn that answered.
func repliesSaying(tb testing.TB, st store.Store, conv uuid.UUID, text string) int {
	tb.Helper()
	n := 0
	for _, e := range logEntries(tb, st, conv, store.EntryAssistant) {
		if decode[core.AssistantContent](tb, e).Text == text {
			n++
		}
	}
	return n
}

// TestSlackCardSettledByFirstClick: a second person's click on a card
// whose "Pick A" was clicked starts no turn and records nothing; they are
// told privately who chose what. The choice is in the store, so it holds
// for every instance.
func TestSlackCardSettledByFirstClick(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{env: map[string]string{"SWITCHBOARD_MODEL": "scripted:" + cardsScript(t)}})
		ctx := context.Background()
		const channel, ts = "C0CARDS", "1700002000.000100"
		e.mustPost(newEvent("EvCards", mention(channel, ts, "", alice, cardsKeyword)))

		var card slacktest.Message
		poll(t, "the card with its buttons", func() (bool, string) {
			for _, m := range e.botMessages(channel) {
				if len(m.Blocks) == 0 {
					continue
				}
				for _, b := range buttonsOf(t, m.Blocks) {
					if b.Text.Text == "Pick A" {
						card = m
						return true, ""
					}
				}
			}
			return false, fmt.Sprintf("%+v", e.botMessages(channel))
		})
		e.waitIdle()
		conv := e.conversation(channel, ts)
		click := func(label, user, trigger string) {
			t.Helper()
			for _, b := range buttonsOf(t, card.Blocks) {
				if b.Text.Text != label {
					continue
				}
				// The card as it was first shown: a client that has not
				// seen the choice yet.
				env := e.slack.SendInteractive(slacktest.BlockActions(slacktest.Click{
					TeamID: e2eTeam, UserID: user, UserName: strings.ToLower(user), Channel: channel, MessageTS: card.TS, ThreadTS: ts,
					ActionID: b.ActionID, Value: b.Value, Label: label, TriggerID: trigger, Blocks: card.Blocks, Text: card.Text,
				}))
				if _, err := e.slack.WaitAck(env, waitLong); err != nil {
					t.Fatalf("the click on %q by %s was not acknowledged: %v", label, user, err)
				}
				return
			}
			t.Fatalf("the card has no button %q: %s", label, card.Blocks)
		}

		click("Pick A", alice, "trig-cards-alice")
		e.waitReply(channel, cardsPicked)
		e.waitIdle()
		poll(t, "the card to show the choice", func() (bool, string) {
			m, _ := e.slack.Message(channel, card.TS)
			return strings.Contains(blockText(t, m.Blocks), "chosen by <@"+alice+">") && len(buttonsOf(t, m.Blocks)) == 0, string(m.Blocks)
		})

		click("Pick B", mallory, "trig-cards-mallory")
		eph := e.waitCalls("chat.postEphemeral", 1)
		if p := eph[0].Params; p.Get("user") != mallory || p.Get("channel") != channel ||
			!strings.Contains(p.Get("text"), "Already chosen by <@"+alice+">") || !strings.Contains(p.Get("text"), "Pick A") {
			t.Errorf("answer to the late click = %v; want an ephemeral to %s saying alice chose Pick A", p, mallory)
		}
		e.waitIdle()
		if n := len(e.entries(conv.ID, store.EntryAction)); n != 1 {
			t.Errorf("%d action entries after two clicks on one card, want 1 (the first)", n)
		}
		if n := repliesSaying(t, e.store, conv.ID, cardsPicked); n != 1 {
			t.Errorf("%d turns answered the clicks, want 1", n)
		}
		cards := e.entries(conv.ID, store.EntryCard)
		if len(cards) != 1 {
			t.Fatalf("%d card entries, want 1", len(cards))
		}
		choice, err := e.store.CardChoiceGet(ctx, cards[0].ID)
		if err != nil || choice.UserID != alice || choice.ActionID != "pick_a" || choice.Platform != "slack" {
			t.Errorf("stored choice = %+v, %v; want alice's pick_a on slack", choice, err)
		}
	})
}

// TestSlackExpiredApprovalCard: when an approval expires, the sweep's
// durable work edits the prompt in place (no buttons, "expired"), once
// however often the sweep runs; a late click is told privately when it
// expired and to ask again, and runs nothing.
func TestSlackExpiredApprovalCard(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		clock := &offsetClock{}
		e := startGuard(t, db(t), "approvals: {expiry: 2h}\n", clock)
		ctx := context.Background()
		const channel, ts = "C0EXPIRE", "1700002100.000100"
		e.mustPost(newEvent("EvExpire", mention(channel, ts, "", alice, "list my routines")))
		p := e.prompt(channel, ts)
		e.waitIdle()
		conv := e.conversation(channel, ts)

		clock.Advance(3 * time.Hour)
		res, err := e.app.Service.Sweep(ctx)
		if err != nil || res.ApprovalsExpired != 1 {
			t.Fatalf("sweep = %+v, %v; want one approval expired", res, err)
		}
		poll(t, "the prompt to say it expired, without buttons", func() (bool, string) {
			m, _ := e.slack.Message(channel, p.TS)
			text := m.Text + blockText(t, m.Blocks)
			return strings.Contains(text, "expired") && strings.Contains(text, "ask again") && len(buttonsOf(t, m.Blocks)) == 0,
				m.Text + " " + string(m.Blocks)
		})
		e.waitIdle()
		if res, err := e.app.Service.Sweep(ctx); err != nil || res.ApprovalsExpired != 0 {
			t.Errorf("a second sweep = %+v, %v; want nothing more expired", res, err)
		}
		e.waitIdle()
		edits := 0
		for _, c := range e.slack.Calls("chat.update") {
			if c.Params.Get("ts") == p.TS {
				edits++
			}
		}
		if edits != 1 {
			t.Errorf("the prompt was edited %d times, want once", edits)
		}

		e.click(channel, ts, p, "Allow once", alice, "trig-expire-late")
		eph := e.waitCalls("chat.postEphemeral", 1)
		if q := eph[0].Params; q.Get("user") != alice || !strings.Contains(q.Get("text"), "expired at") || !strings.Contains(q.Get("text"), "ask again") {
			t.Errorf("answer to the late click = %v; want an ephemeral to %s saying when it expired and to ask again", q, alice)
		}
		e.waitIdle()
		for _, r := range e.entries(conv.ID, store.EntryToolResult) {
			if c := decode[core.ToolResultContent](t, r); !c.IsError {
				t.Errorf("a tool result after the expiry ran the call: %s", r.Content)
			}
		}
	})
}

// discordOnSlackEnv is a discordEnv over a service that startSlack
// started with a fake Discord as well, for the tests that need the
// service's clock.
func discordOnSlackEnv(t *testing.T, e *slackEnv, fake *discordtest.Server) *discordEnv {
	t.Helper()
	// discordgo heartbeats as soon as it is connected; stopping before
	// that write went out races inside discordgo.
	t.Cleanup(func() {
		fake.WaitGateway(t, "a heartbeat on the live socket before stopping", func(st discordtest.GatewayStats) bool {
			return !st.Connected || st.LiveHeartbeats >= 1
		})
	})
	return &discordEnv{tb: t, app: e.app, fake: fake, store: e.store, base: e.base, http: e.http}
}

// TestDiscordCardSettledByFirstClick: on Discord too a card's buttons act
// for the first click only; a later click is told who chose.
func TestDiscordCardSettledByFirstClick(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, cardsScript(t), openAccess, nil)
		ctx := context.Background()
		const channel = "3100000000000000077"
		e.mention(channel, discordAlice, cardsKeyword)
		card := e.waitMessage(channel, "the card with its buttons", func(m *discordtest.Message) bool {
			for _, b := range m.Buttons() {
				if b.Label == "Pick A" {
					return true
				}
			}
			return false
		})
		conv := e.settle(channel)
		ids := map[string]string{}
		for _, b := range card.Buttons() {
			ids[b.Label] = b.CustomID
		}

		e.fake.ClickButton(card.ID, ids["Pick A"], discordAlice)
		e.waitBotMessage(channel, cardsPicked)
		e.settle(channel)

		in := e.fake.ClickButton(card.ID, ids["Pick B"], discordMallory)
		var note *discordtest.Message
		e.fake.Wait(t, "a follow-up to mallory's late click", func() bool {
			got := e.fake.Interaction(in.ID)
			if got == nil || len(got.Followups) == 0 {
				return false
			}
			note = e.fake.Message(got.Followups[0])
			return note != nil
		})
		if !note.Ephemeral() || !strings.Contains(note.Content, "Already chosen by <@"+discordAlice.ID+">") || !strings.Contains(note.Content, "Pick A") {
			t.Errorf("answer to the late click = %q (flags %d); want an ephemeral note that alice chose Pick A", note.Content, note.Flags)
		}
		e.settle(channel)
		if n := len(e.entries(conv, store.EntryAction)); n != 1 {
			t.Errorf("%d action entries after two clicks on one card, want 1", n)
		}
		if n := repliesSaying(t, e.store, conv, cardsPicked); n != 1 {
			t.Errorf("%d turns answered the clicks, want 1", n)
		}
		cards := e.entries(conv, store.EntryCard)
		if len(cards) != 1 {
			t.Fatalf("%d card entries, want 1", len(cards))
		}
		if choice, err := e.store.CardChoiceGet(ctx, cards[0].ID); err != nil || choice.UserID != discordAlice.ID || choice.Platform != "discord" {
			t.Errorf("stored choice = %+v, %v; want alice's on discord", choice, err)
		}
	})
}

// TestDiscordExpiredApprovalCard: on Discord an expired approval's prompt
// is edited to say so, without buttons, and a late click gets an
// ephemeral explanation.
func TestDiscordExpiredApprovalCard(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		clock := &offsetClock{}
		fake := discordtest.NewServer(t)
		script, err := filepath.Abs(filepath.Join("testdata", "guard_e2e.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		se := startSlack(t, db(t), envOptions{
			env:    map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script},
			config: openAccess + "policy:\n  tools: {routine_list: confirm}\napprovals: {expiry: 2h}\n",
			now:    clock.Now, discord: fake,
		})
		e := discordOnSlackEnv(t, se, fake)
		ctx := context.Background()
		const channel = "3100000000000000078"
		e.mention(channel, discordAlice, discordGuardKeyword)
		prompt := e.waitBotMessage(channel, "Approval needed")
		ids := map[string]string{}
		for _, b := range prompt.Buttons() {
			ids[b.Label] = b.CustomID
		}
		e.settle(channel)

		clock.Advance(3 * time.Hour)
		if res, err := e.app.Service.Sweep(ctx); err != nil || res.ApprovalsExpired != 1 {
			t.Fatalf("sweep = %+v, %v; want one approval expired", res, err)
		}
		e.fake.Wait(t, "the prompt to say it expired, without buttons", func() bool {
			m := e.fake.Message(prompt.ID)
			return m != nil && strings.Contains(m.Content, "expired") && strings.Contains(m.Content, "ask again") && len(m.Buttons()) == 0
		})
		e.settle(channel)

		in := e.fake.ClickButton(prompt.ID, ids["Allow once"], discordAlice)
		var note *discordtest.Message
		e.fake.Wait(t, "a follow-up to the late click", func() bool {
			got := e.fake.Interaction(in.ID)
			if got == nil || len(got.Followups) == 0 {
				return false
			}
			note = e.fake.Message(got.Followups[0])
			return note != nil
		})
		if !note.Ephemeral() || !strings.Contains(note.Content, "expired at <t:") || !strings.Contains(note.Content, "ask again") {
			t.Errorf("answer to the late click = %q (flags %d); want an ephemeral note saying when it expired and to ask again", note.Content, note.Flags)
		}
	})
}
