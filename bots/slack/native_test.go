package slack

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// TestStreamTasksInOrder: tool calls go into the native stream as
// task_update chunks between the text around them, in the order they came,
// each within Slack's documented shape (the fake refuses others).
func TestStreamTasksInOrder(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.TaskUpdates = true })
	ctx := context.Background()
	to := bots.Target{Channel: "C1", Thread: "1700000000.000001", UserID: "U1", Workspace: "T0FAKE"}
	if !env.a.ShowsTasks(to) || env.a.ShowsTasks(bots.Target{Channel: "C1"}) {
		t.Fatal("ShowsTasks: want true for a threaded reply with its recipient, false without a thread")
	}
	st, err := env.a.StartStream(ctx, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := st.(bots.TaskStream)
	long := strings.Repeat("x", 400) // longer than a task's details may be
	steps := []func() error{
		func() error {
			return ts.Task(ctx, bots.Task{ID: "call_1", Title: "web_search", Status: "in_progress", Details: long})
		},
		func() error {
			return ts.Task(ctx, bots.Task{ID: "call_1", Title: "web_search", Status: "complete", Details: long, Output: "3 results"})
		},
		func() error { return st.Append(ctx, "Found it: ") },
		func() error {
			return ts.Task(ctx, bots.Task{ID: "call_2", Title: "fetch", Status: "error", Output: "404"})
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	refs, err := st.Finish(ctx, &bots.Message{Text: "Found it: the answer."})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := env.srv.Message("C1", refs[0].ID)
	var got []string
	for _, c := range msg.Chunks {
		switch c.Type {
		case "task_update":
			got = append(got, c.ID+":"+c.Status)
			if len([]rune(c.Details)) > 256 {
				t.Errorf("task details of %d characters, Slack takes 256", len([]rune(c.Details)))
			}
		default:
			got = append(got, "text:"+c.Text)
		}
	}
	want := []string{"call_1:in_progress", "call_1:complete", "text:Found it: ", "call_2:error", "text:the answer."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("chunks %q, want %q", got, want)
	}
	if len(refs) != 1 || msg.Streaming || msg.Markdown != "Found it: the answer." {
		t.Fatalf("message %+v refs %v: want one stopped message with the whole text", msg, refs)
	}
}

// TestStreamRotatesBeforeExpiry: a reply streamed for longer than
// StreamMaxAge goes on in a new message (the old one stopped with what it
// had), so no append ever reaches a stream Slack would have ended.
func TestStreamRotatesBeforeExpiry(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.StreamMaxAge = 4 * time.Minute; o.TaskUpdates = true })
	ctx := context.Background()
	to := bots.Target{Channel: "D1", Thread: "1700000000.000001"}
	st, _ := env.a.StartStream(ctx, to, nil)
	if err := st.Append(ctx, "part one. "); err != nil {
		t.Fatal(err)
	}
	env.clock.Advance(3 * time.Minute)
	if err := st.Append(ctx, "part two. "); err != nil {
		t.Fatal(err)
	}
	if n := len(env.srv.Calls("chat.startStream")); n != 1 {
		t.Fatalf("%d streams started within the age limit, want 1", n)
	}
	env.clock.Advance(90 * time.Second) // 4m30s since the start
	if err := st.(bots.TaskStream).Task(ctx, bots.Task{ID: "c1", Title: "lookup", Status: "in_progress"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, "part three."); err != nil {
		t.Fatal(err)
	}
	if got := st.Refs(); len(got) != 2 {
		t.Fatalf("refs %v after the age limit, want the old message and a new one", got)
	}
	refs, err := st.Finish(ctx, &bots.Message{Text: "part one. part two. part three."})
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 {
		t.Fatalf("refs %v, want two messages", refs)
	}
	first, _ := env.srv.Message("D1", refs[0].ID)
	second, _ := env.srv.Message("D1", refs[1].ID)
	if first.Streaming || second.Streaming || first.Markdown != "part one. part two. " || second.Markdown != "part three." {
		t.Fatalf("messages %q (streaming %v) and %q (streaming %v): want the text split at the rotation, both stopped",
			first.Markdown, first.Streaming, second.Markdown, second.Streaming)
	}
	if len(second.Chunks) == 0 || second.Chunks[0].Type != "task_update" {
		t.Fatalf("second message chunks %+v: want it to open with the task that came after the rotation", second.Chunks)
	}
	for _, c := range env.srv.Calls("chat.appendStream", "chat.stopStream") {
		if !c.OK() {
			t.Errorf("%s answered %s: a call reached a stream that was not live", c.Method, c.Error)
		}
	}
}

// stopper records stop requests.
type stopper struct {
	mu   sync.Mutex
	reqs []core.StopRequest
	n    int
}

func (s *stopper) Stop(_ context.Context, r *core.StopRequest) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, *r)
	return s.n, nil
}

// TestAgentSessionStopped: the stop button reaches core with the thread,
// and the session is taken out of processing.
func TestAgentSessionStopped(t *testing.T) {
	stop := &stopper{n: 1}
	env := newEnv(t, func(o *Options) { o.Stopper = stop; o.AgentSessions = true })
	ctx := context.Background()
	to := bots.Target{Channel: "D1", Thread: "1700000000.000001"}
	if err := env.a.SetStatus(ctx, to, "is thinking…"); err != nil {
		t.Fatal(err)
	}
	if got := env.srv.SessionStatus("D1", to.Thread); got != "processing" {
		t.Fatalf("session status %q while working, want processing", got)
	}
	body := slacktest.MustJSON(slacktest.EventCallback("T0FAKE", "Ev1", map[string]any{
		"type": "agent_session_stopped", "channel": "D1", "thread_ts": to.Thread, "user": "U1",
		"streaming_message_ts": []string{}, "event_ts": "1700000001.000001",
	}))
	if code, _ := env.postSigned(t, "/slack/events", "application/json", body, env.clock.Now(), nil); code != 200 {
		t.Fatalf("stop event answered %d", code)
	}
	stop.mu.Lock()
	reqs := stop.reqs
	stop.mu.Unlock()
	if len(reqs) != 1 || reqs[0].Channel != "D1" || reqs[0].Thread != to.Thread || reqs[0].UserID != "U1" || reqs[0].Workspace != "T0FAKE" {
		t.Fatalf("stop requests %+v, want one for D1/%s by U1", reqs, to.Thread)
	}
	if _, err := env.srv.WaitCalls("agents.sessions.setStatus", 2, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := env.srv.SessionStatus("D1", to.Thread); got != "active" {
		t.Fatalf("session status %q after the stop, want active", got)
	}
}

// TestFeedbackButtons: an agent's final reply carries feedback buttons that
// Slack's schema takes, and a click records who rated which reply how.
func TestFeedbackButtons(t *testing.T) {
	var mu sync.Mutex
	var got []core.Feedback
	env := newEnv(t, func(o *Options) {
		o.FeedbackFunc = func(_ context.Context, f *core.Feedback) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, *f)
			return nil
		}
	})
	ctx := context.Background()
	entry := uuid.New()
	refs, err := env.a.Post(ctx, bots.Target{Channel: "C1", Thread: "1.0"}, &bots.Message{Text: "the answer", Feedback: true, Key: entry.String()})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := env.srv.Message("C1", refs[0].ID)
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(msg.Blocks, &blocks)
	last := blocks[len(blocks)-1]
	if last.Type != "context_actions" || last.Elements[0].Type != "feedback_buttons" {
		t.Fatalf("blocks %s: want feedback buttons last", msg.Blocks)
	}
	plain, _ := env.a.Post(ctx, bots.Target{Channel: "C1"}, &bots.Message{Text: "a notice", Key: uuid.NewString()})
	if m, _ := env.srv.Message("C1", plain[0].ID); strings.Contains(string(m.Blocks), "feedback_buttons") {
		t.Fatal("a message that asks for no feedback got feedback buttons")
	}
	click := slacktest.BlockActions(slacktest.Click{TeamID: "T0FAKE", UserID: "U7", UserName: "ana", Channel: "C1",
		MessageTS: refs[0].ID, ActionID: last.Elements[0].ActionID, Value: "negative"})
	if code, _ := env.postSigned(t, "/slack/interactivity", "application/x-www-form-urlencoded", slacktest.InteractionForm(click), env.clock.Now(), nil); code != 200 {
		t.Fatalf("feedback click answered %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].EntryID != entry || got[0].Positive || got[0].UserID != "U7" {
		t.Fatalf("feedback %+v, want U7's thumbs down on %s", got, entry)
	}
	if n := len(env.core.Actions()); n != 0 {
		t.Fatalf("a feedback click reached core.Act %d times; it is not an action for the agent", n)
	}
}

// TestAgentViewEvents: opening the messages tab and moving to a channel
// offer prompts in the DM (the second naming the channel), opening the
// Home tab publishes it, and a message taken up gets the ack reaction.
func TestAgentViewEvents(t *testing.T) {
	env := newEnv(t, func(o *Options) {
		o.AckReaction = "eyes"
		o.HomeFunc = func(_ context.Context, team, user, dm string) (*Home, error) {
			return &Home{Agents: []string{"helper (" + user + ")"}, Schedules: []string{"daily briefing"}}, nil
		}
	})
	send := func(id string, ev map[string]any) {
		t.Helper()
		body := slacktest.MustJSON(slacktest.EventCallback("T0FAKE", id, ev))
		if code, _ := env.postSigned(t, "/slack/events", "application/json", body, env.clock.Now(), nil); code != 200 {
			t.Fatalf("%s answered %d", ev["type"], code)
		}
	}
	send("Ev1", map[string]any{"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "messages", "event_ts": "1.0"})
	if _, err := env.srv.WaitCalls("assistant.threads.setSuggestedPrompts", 1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	send("Ev2", map[string]any{"type": "app_context_changed", "user": "U1", "channel": "D1", "event_ts": "2.0",
		"context": map[string]any{"entities": []map[string]any{{"type": "slack#/types/channel_id", "value": "C42", "team_id": "T0FAKE"}}}})
	calls, err := env.srv.WaitCalls("assistant.threads.setSuggestedPrompts", 2, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].Params.Get("channel_id") != "D1" || strings.Contains(calls[0].Params.Get("prompts"), "C42") || !strings.Contains(calls[1].Params.Get("prompts"), "C42") {
		t.Fatalf("prompts %v then %v: want the DM's prompts, then ones naming the channel in view", calls[0].Params, calls[1].Params)
	}
	send("Ev3", map[string]any{"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "3.0"})
	if _, err := env.srv.WaitCalls("views.publish", 1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if home := string(env.srv.Home("U1")); !strings.Contains(home, "helper (U1)") || !strings.Contains(home, "daily briefing") || !strings.Contains(home, "No approvals waiting") {
		t.Fatalf("home tab %s: want the agents, schedules and an empty approvals list", home)
	}
	send("Ev4", map[string]any{"type": "message", "channel_type": "im", "user": "U1", "channel": "D1", "text": "hi", "ts": "1700000005.000001"})
	if _, err := env.srv.WaitCalls("reactions.add", 1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := env.srv.Reactions(); len(r) != 1 || r[0].Name != "eyes" || r[0].TS != "1700000005.000001" {
		t.Fatalf("reactions %+v, want eyes on the message", r)
	}
}

// TestMarkDoneSwapsReaction: once the reply is delivered the ack reaction
// gives way to the done one, and marking again (a turn retried after a
// crash) changes nothing and fails nothing.
func TestMarkDoneSwapsReaction(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.AckReaction, o.DoneReaction = "eyes", "white_check_mark" })
	ctx := context.Background()
	w, err := env.a.workspaceFor(ctx, "T0FAKE")
	if err != nil {
		t.Fatal(err)
	}
	env.a.ackReaction(ctx, w, "C1", "1700000001.000001")
	to := bots.Target{Platform: PlatformName, Workspace: "T0FAKE", Channel: "C1", Thread: "1700000001.000001"}
	for i := range 2 {
		if err := env.a.MarkDone(ctx, to, "1700000001.000001"); err != nil {
			t.Fatalf("MarkDone #%d: %v", i+1, err)
		}
		if r := env.srv.Reactions(); len(r) != 1 || r[0].Name != "white_check_mark" || r[0].TS != "1700000001.000001" {
			t.Fatalf("after MarkDone #%d reactions %+v, want only white_check_mark on the message", i+1, r)
		}
	}
}
