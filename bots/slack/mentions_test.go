package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

// pings is model text holding every kind of Slack broadcast and mention.
const pings = "Heads up <!channel> <!here> <!everyone> <!subteam^S0TEAM|@devs> <@U0BOSS> <#C0GENERAL> @here @channel @everyone and **bold** `code`"

// live matches markup Slack would act on: a control sequence opening with
// <! <@ <#, or a bare broadcast word after @ (with nothing invisible
// between).
var live = regexp.MustCompile(`<[!@#]|(?i)@(channel|here|everyone)\b`)

// plainText matches Block Kit's plain_text objects, which Slack never
// reads markup in.
var plainTextObject = regexp.MustCompile(`\{"type":"plain_text","text":"(?:[^"\\]|\\.)*"`)

// TestNoSlackPathBroadcasts: model text reaches Slack by every path the
// adapter has (a posted message as mrkdwn and as a markdown block, an
// update, a card, a native stream's start, appends and stop, a fallback
// stream) and none carries markup Slack would turn into a broadcast or a
// mention, in any field of any request; the text people see keeps its
// formatting.
func TestNoSlackPathBroadcasts(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	to := bots.Target{Channel: "C1"}

	refs, err := env.a.Post(ctx, to, &bots.Message{Text: pings})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.a.Post(ctx, to, &bots.Message{Text: pings, Markdown: true, Feedback: true}); err != nil {
		t.Fatal(err)
	}
	if err := env.a.Update(ctx, refs[0], &bots.Message{Text: pings, Markdown: true}); err != nil {
		t.Fatal(err)
	}
	card, err := cards.Stamp(&cards.Result{Kind: cards.KindGeneric, Title: pings, Summary: pings, Items: []cards.Item{{
		Title: pings, Subtitle: pings, Rows: []cards.Row{{Label: pings, Value: pings}}, Sections: []cards.Section{{Text: pings}},
	}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.a.Post(ctx, to, &bots.Message{Text: pings, Card: &bots.Card{Stamped: card}}); err != nil {
		t.Fatal(err)
	}

	// A native stream, with markup cut across appends.
	thread := bots.Target{Channel: "C1", Thread: "1700000000.000001", UserID: "U1", Workspace: "T0FAKE"}
	st, err := env.a.StartStream(ctx, thread, nil)
	if err != nil {
		t.Fatal(err)
	}
	half := strings.Index(pings, "!channel")
	for _, piece := range []string{pings[:half], pings[half:], " more <", "!here> and @", "here and @ever", "yone " + pings} {
		env.clock.Advance(2 * time.Second)
		if err := st.Append(ctx, piece); err != nil {
			t.Fatal(err)
		}
	}
	final := pings[:half] + pings[half:] + " more <!here> and @here and @everyone " + pings + " " + pings
	if _, err := st.Finish(ctx, &bots.Message{Text: final, Markdown: true}); err != nil {
		t.Fatal(err)
	}
	// A stream that falls back to edits (no thread).
	fb, err := env.a.StartStream(ctx, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fb.Append(ctx, pings); err != nil {
		t.Fatal(err)
	}
	if _, err := fb.Finish(ctx, &bots.Message{Text: pings + " done", Markdown: true}); err != nil {
		t.Fatal(err)
	}

	checked := map[string]int{}
	for _, c := range env.srv.Calls("chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream", "chat.stopStream") {
		for field, vals := range c.Params {
			for _, v := range vals {
				if m := live.FindString(plainTextObject.ReplaceAllString(v, "")); m != "" {
					t.Errorf("%s sends %q in %s: %.120q", c.Method, m, field, v)
				}
				if field == "text" || field == "markdown_text" || field == "blocks" {
					checked[c.Method]++
				}
			}
		}
	}
	// What Slack put together: a stream's pieces joined.
	for _, m := range env.srv.Messages("C1") {
		for field, v := range map[string]string{"markdown": m.Markdown, "text": m.Text, "blocks": plainTextObject.ReplaceAllString(string(m.Blocks), "")} {
			if bad := live.FindString(v); bad != "" {
				t.Errorf("message %s shows %q in its %s: %.120q", m.TS, bad, field, v)
			}
		}
	}
	for _, m := range []string{"chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream", "chat.stopStream"} {
		if checked[m] == 0 {
			t.Errorf("no %s carrying text was checked; the scenario should make one", m)
		}
	}
	// Formatting is intact where Markdown goes as written.
	blocks := env.srv.Calls("chat.postMessage")[1].Params.Get("blocks")
	var got []map[string]any
	if err := json.Unmarshal([]byte(blocks), &got); err != nil || len(got) == 0 || got[0]["type"] != "markdown" {
		t.Fatalf("the Markdown post's blocks = %s; want a markdown block first", blocks)
	}
	if text, _ := got[0]["text"].(string); strings.ReplaceAll(text, "\u2060", "") != pings {
		t.Errorf("the markdown block reads %q; want the model's text, unchanged but for invisible joiners", text)
	}
}

// TestLateClickIsTold: a click on a card or prompt that another click
// settled, or that expired, is answered privately with who chose what, or
// when it expired; the message is not touched.
func TestLateClickIsTold(t *testing.T) {
	at := time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		settled core.Settled
		want    []string
	}{
		{"chosen", core.Settled{By: "alice", ByUserID: "U0ALICE", Platform: PlatformName, Choice: "Pick A", At: at}, []string{"Already chosen by <@U0ALICE>", "*Pick A*"}},
		{"chosen elsewhere", core.Settled{By: "<!channel> bob", ByUserID: "1234", Platform: "discord", Choice: "<!here>"}, []string{"Already chosen by &lt;!channel&gt; bob", "&lt;!here&gt;"}},
		{"expired", core.Settled{Expired: true, At: at}, []string{"This approval expired at <!date^1796549400^", "|2026-12-06 09:30 UTC>; ask again."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, nil)
			settled := tc.settled
			env.core.actResult = core.ActionResult{Duplicate: true, Settled: &settled}
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
			p := eph[0].Params
			if p.Get("user") != "U7" || p.Get("channel") != "C1" || p.Get("thread_ts") != "1700000000.000001" {
				t.Errorf("ephemeral %+v, want it shown to U7 only, in the thread", p)
			}
			for _, w := range tc.want {
				if !strings.Contains(p.Get("text"), w) {
					t.Errorf("ephemeral text %q; want it to contain %q", p.Get("text"), w)
				}
			}
			if n := len(env.srv.Calls("chat.update")); n != 0 {
				t.Errorf("a late click updated the message %d times; want none", n)
			}
		})
	}
}
