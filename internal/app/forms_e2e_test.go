package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"
	"gopkg.in/yaml.v3"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// Card forms through the whole service: a card whose button opens a form
// with a date picker and a select, filled in in a Slack modal and in a
// Discord modal through the fakes, reaches the agent as typed values; a
// wrong answer stays in the modal (Slack) or comes back with a button that
// reopens it filled in (Discord); a submission sent twice counts once.

const (
	formsKeyword = "book a table"
	formsGot     = "Got the form:"
)

// formsScript answers formsKeyword with a card whose "Fill in" button opens
// a form (a day on or after 2026-12-01, and a seating), and anything else
// (the form's turn) by echoing what it was told.
func formsScript(tb testing.TB) string {
	tb.Helper()
	card := map[string]any{
		"kind": "event", "title": "Dinner at Tasca",
		"items": []map[string]any{{"title": "Tasca do Chico"}},
		"actions": []map[string]any{{
			"id": "book", "label": "Fill in", "kind": "signal",
			"form": map[string]any{
				"title": "Book a table", "submit": "Book",
				"inputs": []map[string]any{
					{"name": "day", "label": "Day", "type": "date", "required": true, "earliest": "2026-12-01"},
					{"name": "seating", "label": "Seating", "type": "select", "required": true,
						"options": []map[string]any{{"label": "Inside", "value": "inside"}, {"label": "Terrace", "value": "terrace"}}},
				},
			},
		}},
	}
	script := map[string]any{
		"name": "forms-e2e", "chunk_delay": "0s",
		"turns": []map[string]any{
			{"after_tool": "post_result", "text": "Here is the form."},
			{"when_last_user_contains": formsKeyword, "tool_calls": []map[string]any{{"name": "post_result", "input": card}}},
		},
		"fallback": map[string]any{"text": formsGot + " {{last_user}}"},
	}
	data, err := yaml.Marshal(script)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "forms.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// checkFormAction checks the conversation's one action entry holds the
// typed answers, and that one turn answered it, echoing them.
func checkFormAction(t *testing.T, actions []*store.Entry, want string) {
	t.Helper()
	if len(actions) != 1 {
		t.Fatalf("%d action entries, want 1 (the form's submission, once)", len(actions))
	}
	c := decode[core.ActionContent](t, actions[0])
	var got, exp any
	if err := json.Unmarshal(c.Values, &got); err != nil {
		t.Fatalf("action values %q: %v", c.Values, err)
	}
	_ = json.Unmarshal([]byte(want), &exp)
	if fmt.Sprint(got) != fmt.Sprint(exp) {
		t.Errorf("the agent got %s, want the typed answers %s", c.Values, want)
	}
}

func TestSlackCardForm(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{env: map[string]string{"SWITCHBOARD_MODEL": "scripted:" + formsScript(t)}})
		const channel, ts = "C0FORMS", "1700003000.000100"
		e.mustPost(newEvent("EvForms", mention(channel, ts, "", alice, formsKeyword)))

		var card slacktest.Message
		var fill button
		poll(t, "the card with its Fill in button", func() (bool, string) {
			for _, m := range e.botMessages(channel) {
				if len(m.Blocks) == 0 {
					continue
				}
				for _, b := range buttonsOf(t, m.Blocks) {
					if b.Text.Text == "Fill in" {
						card, fill = m, b
						return true, ""
					}
				}
			}
			return false, fmt.Sprintf("%+v", e.botMessages(channel))
		})
		e.waitIdle()
		conv := e.conversation(channel, ts)

		env := e.slack.SendInteractive(slacktest.BlockActions(slacktest.Click{
			TeamID: e2eTeam, UserID: alice, UserName: "alice", Channel: channel, MessageTS: card.TS, ThreadTS: ts,
			ActionID: fill.ActionID, Value: fill.Value, Label: "Fill in", TriggerID: "trig-forms-open", Blocks: card.Blocks, Text: card.Text,
		}))
		if _, err := e.slack.WaitAck(env, waitLong); err != nil {
			t.Fatalf("the click on Fill in was not acknowledged: %v", err)
		}
		views, err := e.slack.WaitViews(1, waitLong)
		if err != nil {
			t.Fatal(err)
		}
		v := views[0]
		if v.TriggerID != "trig-forms-open" || v.Title != "Book a table" || v.Submit != "Book" {
			t.Fatalf("views.open = trigger %q, title %q, submit %q; want the click's trigger and the form's title and submit", v.TriggerID, v.Title, v.Submit)
		}
		var kinds []string
		for _, b := range v.Blocks {
			var blk struct {
				Type    string `json:"type"`
				BlockID string `json:"block_id"`
				Element struct {
					Type string `json:"type"`
				} `json:"element"`
			}
			_ = json.Unmarshal(b, &blk)
			kinds = append(kinds, blk.BlockID+":"+blk.Type+"/"+blk.Element.Type)
		}
		if got := strings.Join(kinds, ","); got != "day:input/datepicker,seating:input/static_select" {
			t.Fatalf("the modal's blocks = %s; want a datepicker and a static select", got)
		}

		submit := func(answers map[string][]string) (int, string) {
			t.Helper()
			payload := slacktest.ViewSubmission(v, slacktest.Submitter{TeamID: e2eTeam, UserID: alice, UserName: "alice"}, answers)
			status, body, err := slacktest.PostInteractivity(e.http, e.base+"/slack/interactivity", e2eSecret, time.Now(), payload)
			if err != nil {
				t.Fatal(err)
			}
			return status, string(body)
		}

		// A day before the earliest: the modal stays open, the error under
		// the day, and nothing reaches the agent.
		status, body := submit(map[string][]string{"day": {"2026-11-20"}, "seating": {"terrace"}})
		var answer struct {
			Action string            `json:"response_action"`
			Errors map[string]string `json:"errors"`
		}
		if status != http.StatusOK || json.Unmarshal([]byte(body), &answer) != nil || answer.Action != "errors" ||
			!strings.Contains(answer.Errors["day"], "on or after 2026-12-01") || len(answer.Errors) != 1 {
			t.Fatalf("answer to a day too early = %d %s; want response_action errors on block day", status, body)
		}
		// Over Socket Mode the answer is the ack's payload.
		env = e.slack.SendInteractive(slacktest.ViewSubmission(v, slacktest.Submitter{TeamID: e2eTeam, UserID: alice, UserName: "alice"},
			map[string][]string{"day": {"2026-11-30"}, "seating": {"inside"}}))
		ack, err := e.slack.WaitAck(env, waitLong)
		answer.Errors = nil
		if err != nil || json.Unmarshal(ack, &answer) != nil || answer.Action != "errors" || !strings.Contains(answer.Errors["day"], "on or after 2026-12-01") {
			t.Fatalf("Socket Mode ack of a day too early = %s, %v; want response_action errors on block day", ack, err)
		}
		if n := len(e.entries(conv.ID, store.EntryAction)); n != 0 {
			t.Fatalf("%d action entries after wrong answers, want none", n)
		}

		status, body = submit(map[string][]string{"day": {"2026-12-24"}, "seating": {"terrace"}})
		if status != http.StatusOK || strings.TrimSpace(body) != "" {
			t.Fatalf("answer to right answers = %d %q; want an empty 200, which closes the modal", status, body)
		}
		e.waitReply(channel, formsGot)
		// Sent again (a retry): recorded once.
		if status, body = submit(map[string][]string{"day": {"2026-12-24"}, "seating": {"terrace"}}); status != http.StatusOK {
			t.Fatalf("a repeated submission = %d %s; want 200", status, body)
		}
		e.waitIdle()
		checkFormAction(t, e.entries(conv.ID, store.EntryAction), `{"day":"2026-12-24","seating":"terrace"}`)
		if n := repliesWith(t, e.store, conv.ID, `"day":"2026-12-24","seating":"terrace"`); n != 1 {
			t.Errorf("%d replies echo the typed answers, want 1", n)
		}
		poll(t, "the card to say the form was sent", func() (bool, string) {
			m, _ := e.slack.Message(channel, card.TS)
			return strings.Contains(blockText(t, m.Blocks), "sent by <@"+alice+">") && len(buttonsOf(t, m.Blocks)) == 0, string(m.Blocks)
		})
	})
}

// repliesWith counts the conversation's assistant entries containing text.
func repliesWith(tb testing.TB, st store.Store, conv uuid.UUID, text string) int {
	tb.Helper()
	n := 0
	for _, e := range logEntries(tb, st, conv, store.EntryAssistant) {
		if strings.Contains(decode[core.AssistantContent](tb, e).Text, text) {
			n++
		}
	}
	return n
}

func TestDiscordCardForm(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStartScript(t, db, formsScript(t), openAccess, nil)
		const channel = "3100000000000000091"
		e.mention(channel, discordAlice, formsKeyword)
		var fillID string
		card := e.waitMessage(channel, "the card with its Fill in button", func(m *discordtest.Message) bool {
			for _, b := range m.Buttons() {
				if b.Label == "Fill in" {
					fillID = b.CustomID
					return true
				}
			}
			return false
		})
		conv := e.settle(channel)

		opened := e.fake.ClickButton(card.ID, fillID, discordAlice)
		modal := e.waitModal(opened)
		if modal.Title != "Book a table" {
			t.Errorf("modal title = %q, want the form's", modal.Title)
		}
		var shape []string
		for _, in := range modal.Inputs() {
			shape = append(shape, fmt.Sprintf("%s:%d", in.CustomID, in.Type))
		}
		if got := strings.Join(shape, ","); got != "day:4,seating:3" {
			t.Fatalf("modal inputs = %s; want the day as a text input (Discord has no date control) and a string select", got)
		}

		// A date that is no date: Discord cannot keep the modal open, so
		// the answer is a private note with a button that reopens it.
		bad := e.fake.SubmitModal(opened, discordAlice, map[string][]string{"day": {"2026-13-01"}, "seating": {"terrace"}})
		var note *discordtest.Message
		e.fake.Wait(t, "a private note about the wrong day", func() bool {
			got := e.fake.Interaction(bad.ID)
			if got == nil || got.OriginalID == "" {
				return false
			}
			note = e.fake.Message(got.OriginalID)
			return note != nil
		})
		if !note.Ephemeral() || !strings.Contains(note.Content, "**Day**: Enter a date as YYYY-MM-DD") {
			t.Fatalf("answer to a wrong day = %q (flags %d); want an ephemeral note naming the day", note.Content, note.Flags)
		}
		if n := len(e.entries(conv, store.EntryAction)); n != 0 {
			t.Fatalf("%d action entries after wrong answers, want none", n)
		}
		var fixID string
		for _, b := range note.Buttons() {
			if b.Label == "Fix my answers" {
				fixID = b.CustomID
			}
		}
		if fixID == "" {
			t.Fatalf("the note has no button to fix the answers: %+v", note.Buttons())
		}
		reopened := e.fake.ClickButton(note.ID, fixID, discordAlice)
		again := e.waitModal(reopened)
		for _, in := range again.Inputs() {
			switch in.CustomID {
			case "day":
				if in.Value != "2026-13-01" {
					t.Errorf("the reopened day = %q, want what was typed", in.Value)
				}
			case "seating":
				if strings.Join(in.Defaults, ",") != "terrace" {
					t.Errorf("the reopened seating = %v, want terrace chosen", in.Defaults)
				}
			}
		}

		// This one through the HTTP interactions endpoint, which reads
		// the submission from the request's body.
		good, payload := e.fake.ModalSubmitInteraction(reopened, discordAlice, map[string][]string{"day": {"2026-12-24"}, "seating": {"terrace"}})
		if status, answer, err := e.fake.PostInteraction(e.base+"/discord/interactions", e.key, payload); err != nil || status != http.StatusOK {
			t.Fatalf("POST /discord/interactions of the submission = %d %s, %v; want 200", status, answer, err)
		}
		e.waitBotMessage(channel, formsGot)
		if got := e.fake.Interaction(good.ID); got == nil || got.ResponseType != discordgo.InteractionResponseUpdateMessage {
			t.Errorf("answer to the right answers = %+v; want the message updated", got)
		}
		// The first submission of the same answers again, from another
		// instance or a retry: recorded once.
		dup := e.fake.SubmitModal(opened, discordMallory, map[string][]string{"day": {"2026-12-25"}, "seating": {"inside"}})
		e.fake.Wait(t, "an answer to the late submission", func() bool {
			got := e.fake.Interaction(dup.ID)
			return got != nil && got.ResponseType != 0
		})
		e.settle(channel)
		checkFormAction(t, e.entries(conv, store.EntryAction), `{"day":"2026-12-24","seating":"terrace"}`)
		if n := repliesWith(t, e.store, conv, `"day":"2026-12-24","seating":"terrace"`); n != 1 {
			t.Errorf("%d replies echo the typed answers, want 1", n)
		}
	})
}

// waitModal waits for the modal an interaction was answered with.
func (e *discordEnv) waitModal(in *discordtest.Interaction) *discordtest.Modal {
	e.tb.Helper()
	var m *discordtest.Modal
	e.fake.Wait(e.tb, "a modal answering interaction "+in.ID, func() bool {
		got := e.fake.Interaction(in.ID)
		if got != nil && got.Modal != nil {
			m = got.Modal
		}
		return m != nil
	})
	return m
}
