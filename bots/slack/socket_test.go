package slack

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// postQuestion posts a message with two buttons and returns the click Slack
// would send for the first, with the message's blocks echoed back.
func postQuestion(t *testing.T, env *testEnv) slacktest.Click {
	t.Helper()
	refs, err := env.a.Post(context.Background(), bots.Target{Channel: "C1", Thread: "1700000000.000001"}, &bots.Message{
		Text: "Deploy to production?",
		Buttons: []bots.Button{
			{ActionID: "sb:c1:call1:0", Value: "yes", Label: "Deploy", Style: "primary"},
			{ActionID: "sb:c1:call1:1", Value: "no", Label: "Cancel"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := env.srv.Message("C1", refs[0].ID)
	var blocks []map[string]any
	if err := json.Unmarshal(msg.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	// Slack gives every block an id; the click names the one clicked.
	for i, b := range blocks {
		b["block_id"] = []string{"q", "act"}[min(i, 1)]
	}
	echoed, _ := json.Marshal(blocks)
	return slacktest.Click{
		TeamID: "T0FAKE", UserID: "U7", UserName: "ana", Channel: "C1", MessageTS: refs[0].ID, ThreadTS: "1700000000.000001",
		ActionID: "sb:c1:call1:0", Value: "yes", Label: "Deploy", Blocks: echoed, Text: msg.Text,
	}
}

func TestClickAcceptedOverHTTP(t *testing.T) {
	env := newEnv(t, nil)
	click := postQuestion(t, env)
	payload := slacktest.BlockActions(click)
	payload["actions"].([]map[string]any)[0]["block_id"] = "act"
	status, _ := env.postSigned(t, "/slack/interactivity", "application/x-www-form-urlencoded", slacktest.InteractionForm(payload), env.clock.Now(), nil)
	if status != http.StatusOK {
		t.Fatalf("status %d, want 200", status)
	}
	acts := env.core.waitActions(t, 1)
	if a := acts[0]; a.Platform != "slack" || a.ActionID != "sb:c1:call1:0" || a.Value != "yes" || a.UserID != "U7" || a.UserName != "ana" || a.EventID == "" {
		t.Fatalf("action %+v, want the button's action id and value passed through with the user", a)
	}
	updates, err := env.srv.WaitCalls("chat.update", 1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	blocks := updates[0].Params.Get("blocks")
	if strings.Contains(blocks, `"actions"`) || !strings.Contains(blocks, "✅ *Deploy* — chosen by \\u003c@U7\\u003e") || !strings.Contains(blocks, "Deploy to production?") {
		t.Fatalf("updated blocks %s, want the question kept, buttons gone, and the choice with who made it", blocks)
	}
	if n := len(env.srv.Calls("chat.postEphemeral")); n != 0 {
		t.Fatalf("an accepted click sent %d ephemeral messages", n)
	}
}

func TestClickRefused(t *testing.T) {
	env := newEnv(t, nil)
	env.core.actResult = core.ActionResult{Refused: true, Reason: "Only @lee can approve this deploy."}
	click := postQuestion(t, env)
	status, _ := env.postSigned(t, "/slack/interactivity", "application/x-www-form-urlencoded",
		slacktest.InteractionForm(slacktest.BlockActions(click)), env.clock.Now(), nil)
	if status != http.StatusOK {
		t.Fatalf("status %d, want 200", status)
	}
	eph, err := env.srv.WaitCalls("chat.postEphemeral", 1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p := eph[0].Params; p.Get("user") != "U7" || p.Get("channel") != "C1" || p.Get("text") != "Only @lee can approve this deploy." || p.Get("thread_ts") != "1700000000.000001" {
		t.Fatalf("ephemeral %+v, want the reason shown to U7 only, in the thread", p)
	}
	if n := len(env.srv.Calls("chat.update")); n != 0 {
		t.Fatalf("a refused click updated the message %d times", n)
	}
}

func newSocketEnv(t *testing.T) *testEnv {
	return newEnv(t, func(o *Options) {
		o.AppToken = "xapp-test"
		o.SigningSecret = ""
	})
}

func TestSocketModeEventsAndClicks(t *testing.T) {
	env := newSocketEnv(t)
	if err := env.srv.WaitConnections(1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	id := env.srv.SendEvent(slacktest.EventCallback("T0FAKE", "EvS1", mention("<@U0BOT> status?", "1700000001.000001", "")))
	if _, err := env.srv.WaitAck(id, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	in := env.core.waitInbound(t, 1)
	if in[0].EventID != "EvS1" || in[0].Text != "status?" || !in[0].Mentioned || in[0].Thread != "1700000001.000001" {
		t.Fatalf("submitted %+v, want EvS1 with the mention stripped, threaded under it", in[0])
	}

	click := postQuestion(t, env)
	cid := env.srv.SendInteractive(slacktest.BlockActions(click))
	if _, err := env.srv.WaitAck(cid, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if acts := env.core.waitActions(t, 1); acts[0].ActionID != "sb:c1:call1:0" || acts[0].Value != "yes" {
		t.Fatalf("action %+v, want the clicked button", acts[0])
	}
	if _, err := env.srv.WaitCalls("chat.update", 1, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	// Slack asks for a new connection; the next event arrives on it.
	env.srv.Disconnect("refresh_requested")
	if err := env.srv.WaitConnections(2, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	id2 := env.srv.SendEvent(slacktest.EventCallback("T0FAKE", "EvS2", message("im", "D1", "after refresh", "1700000002.000001", "", nil)))
	if _, err := env.srv.WaitAck(id2, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// The network drops; slack-go reconnects and nothing is lost.
	env.srv.DropConnections()
	id3 := env.srv.SendEvent(slacktest.EventCallback("T0FAKE", "EvS3", message("im", "D1", "after drop", "1700000003.000001", "", nil)))
	if err := env.srv.WaitConnections(3, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := env.srv.WaitAck(id3, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	got := env.core.waitInbound(t, 3)
	seen := map[string]bool{}
	for _, in := range got {
		seen[in.EventID] = true
	}
	if !seen["EvS2"] || !seen["EvS3"] {
		t.Fatalf("submitted %v, want EvS2 and EvS3 after the reconnects", seen)
	}
}

func TestSocketModeUnackedWhenCoreFails(t *testing.T) {
	env := newSocketEnv(t)
	env.core.mu.Lock()
	env.core.failEvent = map[string]error{"EvF1": errors.New("database down")}
	env.core.mu.Unlock()
	if err := env.srv.WaitConnections(1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	id := env.srv.SendEvent(slacktest.EventCallback("T0FAKE", "EvF1", mention("<@U0BOT> hi", "1.1", "")))
	// Envelopes are handled in order: once the next one is acked, the
	// adapter has decided about the first.
	id2 := env.srv.SendEvent(slacktest.EventCallback("T0FAKE", "EvF2", mention("<@U0BOT> ho", "1.2", "")))
	if _, err := env.srv.WaitAck(id2, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if env.srv.Acked(id) {
		t.Fatal("an event core failed to store was acked; Slack would not redeliver it")
	}
	// Core recovers; the redelivery after a reconnect is stored and acked.
	env.core.mu.Lock()
	env.core.failEvent = nil
	env.core.mu.Unlock()
	env.srv.DropConnections()
	if _, err := env.srv.WaitAck(id, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if in := env.core.waitInbound(t, 2); in[1].EventID != "EvF1" {
		t.Fatalf("submitted %+v, want the redelivered EvF1 last", in)
	}
}
