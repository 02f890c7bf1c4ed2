package app_test

// End-to-end tests of native platform surfaces (issue 34, part 3): charts
// drawn by Slack itself, with the PNG kept for what it cannot draw.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// startSurfaces starts the service with the surfaces test script.
func startSurfaces(tb testing.TB, db string, opts envOptions) *slackEnv {
	tb.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "slack_surfaces.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	opts.env = map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}
	return startSlack(tb, db, opts)
}

// dataViz is a data_visualization block as the fake Slack kept it.
type dataViz struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	Chart struct {
		Type   string `json:"type"`
		Series []struct {
			Name string `json:"name"`
			Data []struct {
				Label string  `json:"label"`
				Value float64 `json:"value"`
			} `json:"data"`
		} `json:"series"`
		AxisConfig struct {
			Categories []string `json:"categories"`
			XLabel     string   `json:"x_label"`
			YLabel     string   `json:"y_label"`
		} `json:"axis_config"`
	} `json:"chart"`
}

// charts are the data_visualization blocks of the bot's messages in channel.
func (e *slackEnv) charts(channel string) []dataViz {
	e.tb.Helper()
	var out []dataViz
	for _, m := range e.botMessages(channel) {
		var blocks []json.RawMessage
		if len(m.Blocks) == 0 || json.Unmarshal(m.Blocks, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			var d dataViz
			if json.Unmarshal(b, &d) == nil && d.Type == "data_visualization" {
				out = append(out, d)
			}
		}
	}
	return out
}

// TestSlackChartNative: a chart goes to Slack as a native block. The
// agent's render_chart in a Slack thread is posted as one
// data_visualization message (a bar chart, its two series and three months,
// the axis titles), with no image uploaded. A chart the block cannot show
// (x values not evenly spaced) is shared as the PNG; and in a workspace
// that refuses the block, the chart is shared as the PNG after one refusal,
// not retried.
func TestSlackChartNative(t *testing.T) {
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSurfaces(t, db(t), envOptions{})
		const ch = "C0CHART"
		e.mustPost(newEvent("EvChart1", mention(ch, "1700000700.000001", "", alice, "chart the sign-ups please")))
		e.waitReply(ch, "There it is.")
		e.waitIdle()
		charts := e.charts(ch)
		if len(charts) != 1 {
			t.Fatalf("want one native chart in %s, got %d: %+v", ch, len(charts), e.botMessages(ch))
		}
		c := charts[0]
		if c.Title != "Sign-ups by month" || c.Chart.Type != "bar" || len(c.Chart.Series) != 2 ||
			strings.Join(c.Chart.AxisConfig.Categories, ",") != "Jan,Feb,Mar" ||
			c.Chart.AxisConfig.XLabel != "Month" || c.Chart.AxisConfig.YLabel != "Sign-ups" {
			t.Fatalf("the native chart does not say what the agent drew: %+v", c)
		}
		if s := c.Chart.Series[1]; s.Name != "2026" || len(s.Data) != 3 || s.Data[2].Label != "Mar" || s.Data[2].Value != 210 {
			t.Fatalf("the 2026 series: want Jan..Mar ending at 210, got %+v", s)
		}
		if n := len(e.slack.Calls("files.getUploadURLExternal")); n != 0 {
			t.Fatalf("a native chart uploads no image, got %d uploads", n)
		}

		// Uneven x values: the block would space them evenly, so the image.
		const ch2 = "C0CHART2"
		e.mustPost(newEvent("EvChart2", mention(ch2, "1700000700.000002", "", alice, "chart the latency please")))
		e.waitReply(ch2, "There it is.")
		e.waitIdle()
		if got := e.charts(ch2); len(got) != 0 {
			t.Fatalf("a chart with uneven x values must not go natively: %+v", got)
		}
		if n := len(e.slack.Files()); n != 1 {
			t.Fatalf("want the latency chart shared as one image, got %d files", n)
		}
	})
}

// TestSlackChartRefusedFallsBackToImage: a workspace that refuses the
// data_visualization block (invalid_blocks) gets the chart as its PNG, after
// one refused post; the delivery is not retried into a loop.
func TestSlackChartRefusedFallsBackToImage(t *testing.T) {
	eachStore(t, func(t *testing.T, db databaseFunc) {
		srv := slacktest.NewServer(slacktest.Options{BotToken: e2eBotToken, AppToken: e2eAppToken, BotUserID: e2eBotUser, TeamID: e2eTeam, NoDataVisualization: true})
		t.Cleanup(srv.Close)
		e := startSurfaces(t, db(t), envOptions{slack: srv})
		const ch = "C0CHART3"
		e.mustPost(newEvent("EvChart3", mention(ch, "1700000700.000003", "", alice, "chart the sign-ups please")))
		e.waitReply(ch, "There it is.")
		e.waitIdle()
		refused := 0
		for _, c := range e.slack.Calls("chat.postMessage") {
			if c.Error == "invalid_blocks" && strings.Contains(c.Params.Get("blocks"), "data_visualization") {
				refused++
			}
		}
		if refused != 1 {
			t.Fatalf("want one refused chart post, got %d", refused)
		}
		if got := e.charts(ch); len(got) != 0 {
			t.Fatalf("no native chart where Slack refuses it, got %+v", got)
		}
		files := e.slack.Files()
		if len(files) != 1 {
			t.Fatalf("want the chart shared once as its image, got %d files", len(files))
		}
		if !strings.HasSuffix(files[0].Name, ".png") {
			t.Fatalf("the fallback is the PNG: %s", fmt.Sprint(files[0].Name))
		}
	})
}

// TestSlackDMStreamingAndStatus: where Slack documents native streaming
// and status, a DM gets them. A DM message in a thread (each request of an
// app with the Agents & Assistants feature is one) is answered with
// chat.startStream and its status set with assistant.threads.setStatus on
// that thread. A top-level
// DM message is answered by a posted message (edited as it grows), and no
// status is set: assistant.threads.setStatus requires thread_ts, and
// chat.startStream's streamed messages are to be replies in a thread
// (docs/slack.md).
func TestSlackDMStreamingAndStatus(t *testing.T) {
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSurfaces(t, db(t), envOptions{})
		const dm, root = "D0STREAM", "1700000800.000001"
		e.mustPost(newEvent("EvDMThread", dmInThread(dm, root, "1700000800.000002", alice, "hello in a thread")))
		threaded := e.waitReply(dm, "Surfaces: ")
		e.waitIdle()
		if !threaded.Streamed || threaded.ThreadTS != root {
			t.Fatalf("a DM in a thread is answered natively in that thread, got %+v", threaded)
		}
		var starts, statuses int
		for _, c := range e.slack.Calls("chat.startStream") {
			if c.Params.Get("channel") == dm {
				starts++
				if c.Params.Get("thread_ts") != root {
					t.Errorf("chat.startStream in a DM: want thread_ts %s, got %v", root, c.Params)
				}
			}
		}
		for _, c := range e.slack.Calls("assistant.threads.setStatus") {
			if c.Params.Get("channel_id") == dm && c.Params.Get("thread_ts") == root {
				statuses++
			}
		}
		if starts != 1 || statuses == 0 {
			t.Fatalf("a threaded DM reply: want one native stream and its status set, got %d streams, %d statuses", starts, statuses)
		}

		const top = "D0TOPLVL"
		e.mustPost(newEvent("EvDMTop", directMessage(top, "1700000800.000003", alice, "hello at the top")))
		reply := e.waitReply(top, "Surfaces: ")
		e.waitIdle()
		if reply.Streamed || reply.ThreadTS != "" {
			t.Fatalf("a top-level DM is answered at the top level by a posted message, got %+v", reply)
		}
		for _, c := range e.slack.Calls("chat.startStream", "assistant.threads.setStatus") {
			if c.Params.Get("channel") == top || c.Params.Get("channel_id") == top {
				t.Fatalf("a top-level DM must not call %s (it needs a thread): %v", c.Method, c.Params)
			}
		}
	})
}

// reminderPosted waits for the reminder about what in channel, posted with
// its four buttons.
func (e *slackEnv) reminderPosted(channel, what string) slacktest.Message {
	e.tb.Helper()
	var found slacktest.Message
	poll(e.tb, "the reminder "+what+" with its buttons", func() (bool, string) {
		for _, m := range e.botMessages(channel) {
			if m.Text == "⏰ Reminder: "+what && len(buttonsOf(e.tb, m.Blocks)) == 4 {
				found = m
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", e.botMessages(channel))
	})
	return found
}

// clickReminder clicks m's button labelled label as alice, over Socket Mode.
func (e *slackEnv) clickReminder(channel string, m slacktest.Message, label, trigger string) {
	e.tb.Helper()
	for _, b := range buttonsOf(e.tb, m.Blocks) {
		if b.Text.Text != label {
			continue
		}
		env := e.slack.SendInteractive(slacktest.BlockActions(slacktest.Click{
			TeamID: e2eTeam, UserID: alice, UserName: "alice", Channel: channel, MessageTS: m.TS,
			ActionID: b.ActionID, Value: b.Value, Label: label, TriggerID: trigger, Blocks: m.Blocks, Text: m.Text,
		}))
		if _, err := e.slack.WaitAck(env, waitLong); err != nil {
			e.tb.Fatalf("the click on %q was not acknowledged: %v", label, err)
		}
		return
	}
	e.tb.Fatalf("the reminder has no button %q: %s", label, m.Blocks)
}

// TestSlackReminderSnoozeAndDone: Snooze moves a reminder and Done ends it,
// through the real service on each store. A reminder set with !remind fires
// into the DM with Snooze 15 min, Snooze 1 h, Tomorrow and Done; Snooze
// makes it due again 15 minutes on and the message says so and who did it;
// a later Done on the same message changes nothing. Done on another
// reminder ends it and the message says so.
func TestSlackReminderSnoozeAndDone(t *testing.T) {
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSurfaces(t, db(t), envOptions{})
		const dm = "D0ALICE" // the fake's DM with alice, where reminders go
		e.mustPost(newEvent("EvRem1", directMessage(dm, "1700000900.000001", alice, "!remind in 1s -- water the plants")))
		e.mustPost(newEvent("EvRem2", directMessage(dm, "1700000900.000002", alice, "!remind in 1s -- call Ana")))
		water := e.reminderPosted(dm, "water the plants")
		call := e.reminderPosted(dm, "call Ana")

		clicked := time.Now()
		e.clickReminder(dm, water, "Snooze 15 min", "trig-snooze")
		edited := func(ts, want string) slacktest.Message {
			var m slacktest.Message
			poll(t, "the reminder's message saying "+want, func() (bool, string) {
				m, _ = e.slack.Message(dm, ts)
				return m.Edits > 0 && strings.Contains(string(m.Blocks), want) && len(buttonsOf(t, m.Blocks)) == 0, string(m.Blocks)
			})
			return m
		}
		m := edited(water.TS, "Snoozed until")
		if !strings.Contains(string(m.Blocks), alice) {
			t.Errorf("the snoozed reminder does not say who snoozed it: %s", m.Blocks)
		}
		e.clickReminder(dm, water, "Done", "trig-late")
		e.clickReminder(dm, call, "Done", "trig-done")
		edited(call.TS, "Done")
		e.waitIdle()

		reminders, err := e.store.ScheduleList(context.Background(), &store.ScheduleListParams{Kind: store.ScheduleReminder})
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range reminders {
			switch sc.Instruction {
			case "water the plants":
				if sc.State != store.ScheduleActive || sc.NextRunAt == nil || sc.NextRunAt.Sub(clicked) < 14*time.Minute || sc.NextRunAt.Sub(clicked) > 16*time.Minute {
					t.Errorf("the snoozed reminder: want active, due 15 minutes after the click, got %s %v", sc.State, sc.NextRunAt)
				}
			case "call Ana":
				if sc.State != store.ScheduleDone || sc.NextRunAt != nil {
					t.Errorf("the reminder marked done: want done with nothing due, got %s %v", sc.State, sc.NextRunAt)
				}
			}
		}
		if m, _ := e.slack.Message(dm, water.TS); m.Edits != 1 || strings.Contains(string(m.Blocks), "*Done*") {
			t.Errorf("the late Done changed the snoozed reminder's message (%d edits): %s", m.Edits, m.Blocks)
		}
	})
}
