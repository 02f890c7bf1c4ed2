package instances_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// reminderButton is one button of a posted reminder.
type reminderButton struct {
	ActionID string `json:"action_id"`
	Value    string `json:"value"`
	Text     struct {
		Text string `json:"text"`
	} `json:"text"`
}

// buttonsIn reads the buttons out of a message's Block Kit blocks.
func buttonsIn(t *testing.T, blocks json.RawMessage) []reminderButton {
	t.Helper()
	var bs []struct {
		Type     string          `json:"type"`
		Elements json.RawMessage `json:"elements"`
	}
	if len(blocks) == 0 {
		return nil
	}
	if err := json.Unmarshal(blocks, &bs); err != nil {
		t.Fatalf("decoding blocks %s: %v", blocks, err)
	}
	var out []reminderButton
	for _, b := range bs {
		if b.Type != "actions" {
			continue
		}
		var els []reminderButton
		if err := json.Unmarshal(b.Elements, &els); err != nil {
			t.Fatalf("decoding buttons %s: %v", b.Elements, err)
		}
		out = append(out, els...)
	}
	return out
}

// clickOver posts alice's click on m's button labelled label to the
// instance at addr (POST /slack/interactivity), as Slack sends it.
func (w *world) clickOver(addr string, m slacktest.Message, label, trigger string) {
	w.t.Helper()
	for _, b := range buttonsIn(w.t, m.Blocks) {
		if b.Text.Text != label {
			continue
		}
		body := slacktest.InteractionForm(slacktest.BlockActions(slacktest.Click{
			TeamID: team, UserID: alice, UserName: "alice", Channel: m.Channel, MessageTS: m.TS,
			ActionID: b.ActionID, Value: b.Value, Label: label, TriggerID: trigger, Blocks: m.Blocks, Text: m.Text,
		}))
		req := slacktest.NewSignedRequest("http://"+addr+"/slack/interactivity", "application/x-www-form-urlencoded", secret, time.Now(), body)
		resp, err := w.http.Do(req)
		if err != nil {
			w.t.Errorf("posting a click to %s: %v", addr, err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			w.t.Errorf("POST %s/slack/interactivity answered %d, want 200", addr, resp.StatusCode)
		}
		return
	}
	w.t.Fatalf("the reminder has no button %q: %s", label, m.Blocks)
}

// TestReminderButtonsAcrossInstances: Snooze moves a reminder and Done
// ends it, once across two instances. Two `switchboard serve` processes
// share one Postgres; a reminder fires into alice's DM with Snooze and
// Done buttons, and each click reaches both instances (the same click
// delivered twice) while a rival click races it. The reminder's schedule
// changes once, its firing is settled once, and the message is updated
// once to say what happened and by whom.
func TestReminderButtonsAcrossInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two service processes")
	}
	w := newWorld(t, false)
	w.model.Default(modeltest.Reply{Text: reply})
	a := start(t, "instance-a", w.env)
	b := start(t, "instance-b", w.env)
	w.openStore()
	if err := w.slack.WaitConnections(2, waitLong); err != nil {
		t.Fatal(err)
	}
	texts := []string{"water the plants", "call Ana"}
	for i, text := range texts {
		w.sent++
		ts := fmt.Sprintf("1700006000.%06d", w.sent)
		w.send([]string{a.addr, b.addr}[i], map[string]any{
			"type": "message", "channel_type": "im", "user": alice, "text": "!remind in 2s -- " + text,
			"ts": ts, "channel": dmAlice, "team": team, "event_ts": ts,
		})
	}
	posted := func(text string) (slacktest.Message, bool) {
		for _, m := range w.slack.Messages(dmAlice) {
			if m.User == botUser && strings.HasPrefix(m.Text, "⏰ Reminder: "+text) && len(buttonsIn(t, m.Blocks)) == 4 {
				return m, true
			}
		}
		return slacktest.Message{}, false
	}
	var water, call slacktest.Message
	if !poll(waitLong, func() bool {
		var ok1, ok2 bool
		water, ok1 = posted(texts[0])
		call, ok2 = posted(texts[1])
		return ok1 && ok2
	}) {
		t.Fatalf("the reminders were not posted with four buttons within %s; DM: %+v", waitLong, w.slack.Messages(dmAlice))
	}

	// Snooze 15 min, delivered to both instances at once, against a rival
	// Snooze 1 h (another click) on instance B.
	clickAt := time.Now()
	var wg sync.WaitGroup
	for _, c := range []struct{ addr, label, trigger string }{
		{a.addr, "Snooze 15 min", "trig-snooze"}, {b.addr, "Snooze 15 min", "trig-snooze"}, {b.addr, "Snooze 1 h", "trig-rival"},
	} {
		wg.Add(1)
		go func() { defer wg.Done(); w.clickOver(c.addr, water, c.label, c.trigger) }()
	}
	// Done on the other reminder, delivered to both instances.
	for _, addr := range []string{a.addr, b.addr} {
		wg.Add(1)
		go func() { defer wg.Done(); w.clickOver(addr, call, "Done", "trig-done") }()
	}
	wg.Wait()

	ctx := context.Background()
	reminders, err := w.st.ScheduleList(ctx, &store.ScheduleListParams{Kind: store.ScheduleReminder})
	if err != nil {
		t.Fatal(err)
	}
	byText := map[string]*store.Schedule{}
	for _, sc := range reminders {
		byText[sc.Instruction] = sc
	}
	settled := func(sc *store.Schedule) []string {
		runs, err := w.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID})
		if err != nil {
			t.Fatal(err)
		}
		var notes []string
		for _, r := range runs {
			notes = append(notes, r.Note)
		}
		return notes
	}
	snoozed := byText[texts[0]]
	notes := settled(snoozed)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "Snoozed until") || !strings.HasSuffix(notes[0], "— by alice") {
		t.Fatalf("the snoozed firing's run: want one note saying it was snoozed by alice, got %q", notes)
	}
	if snoozed.State != store.ScheduleActive || snoozed.NextRunAt == nil {
		t.Fatalf("a snoozed one-off reminder is active again with a next run, got %s %v", snoozed.State, snoozed.NextRunAt)
	}
	in := snoozed.NextRunAt.Sub(clickAt)
	fifteen := in > 14*time.Minute && in < 16*time.Minute
	hour := in > 59*time.Minute && in < 61*time.Minute
	if !fifteen && !hour {
		t.Fatalf("the reminder's next run moved by %s, want 15 min or 1 h (one of the clicks)", in)
	}
	ended := byText[texts[1]]
	if notes := settled(ended); len(notes) != 1 || notes[0] != "Done — by alice" {
		t.Fatalf("the firing marked done: want one note \"Done — by alice\", got %q", notes)
	}
	if ended.State != store.ScheduleDone || ended.NextRunAt != nil {
		t.Fatalf("Done ends a one-off reminder, got %s %v", ended.State, ended.NextRunAt)
	}

	// Each message is updated once, its buttons replaced by what happened
	// and who did it.
	if !poll(waitLong, func() bool {
		mw, _ := w.slack.Message(dmAlice, water.TS)
		mc, _ := w.slack.Message(dmAlice, call.TS)
		return mw.Edits > 0 && mc.Edits > 0
	}) {
		t.Fatal("the clicked reminders were not updated")
	}
	w.waitIdle()
	for _, c := range []struct {
		ts, want string
	}{{water.TS, strings.TrimSuffix(notes[0], " — by alice")}, {call.TS, "Done"}} {
		m, _ := w.slack.Message(dmAlice, c.ts)
		if m.Edits != 1 {
			t.Errorf("message %s was edited %d times, want once", c.ts, m.Edits)
		}
		if len(buttonsIn(t, m.Blocks)) != 0 || !strings.Contains(string(m.Blocks), c.want) || !strings.Contains(string(m.Blocks), alice) {
			t.Errorf("message %s: want its buttons replaced by %q and who did it, got %s", c.ts, c.want, m.Blocks)
		}
	}
}
