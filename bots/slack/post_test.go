package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

func TestPostRateLimitedPostsOnce(t *testing.T) {
	env := newEnv(t, nil)
	env.srv.Fail("chat.postMessage", slacktest.RateLimited(7))
	refs, err := env.a.Post(context.Background(), bots.Target{Channel: "C1", Thread: "1.0"}, &bots.Message{Text: "hello"})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	if msgs := env.srv.Messages("C1"); len(msgs) != 1 || len(refs) != 1 || refs[0].ID != msgs[0].TS {
		t.Fatalf("after a 429: %d messages, refs %+v; want exactly one message and its ref", len(msgs), refs)
	}
	calls := env.srv.Calls("chat.postMessage")
	if len(calls) != 2 || calls[0].Status != 429 || !calls[1].OK() {
		t.Fatalf("postMessage calls %+v, want a 429 then one success", calls)
	}
	if !slices.Contains(env.clock.Sleeps(), 7*time.Second) {
		t.Fatalf("slept %v, want the 7s Retry-After", env.clock.Sleeps())
	}
}

func TestPostRateLimitWaitHonoursContext(t *testing.T) {
	env := newEnv(t, nil)
	env.srv.Fail("chat.postMessage", slacktest.RateLimited(30))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := env.a.Post(ctx, bots.Target{Channel: "C1"}, &bots.Message{Text: "x"}); err == nil {
		t.Fatal("Post with a cancelled context succeeded, want an error")
	}
}

func TestPacingPerChannel(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	for _, ch := range []string{"C1", "C1", "C1", "C2"} {
		if _, err := env.a.Post(ctx, bots.Target{Channel: ch}, &bots.Message{Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	// The clock stands still: the 2nd and 3rd post in C1 wait 1s and 2s;
	// C2 has its own budget.
	if got, want := env.clock.Sleeps(), []time.Duration{time.Second, 2 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("pacing waits %v, want %v", got, want)
	}
}

func TestPostLongTextButtonsIdentityFiles(t *testing.T) {
	env := newEnv(t, nil)
	text := "# Report\n\n" + strings.Repeat("Some **findings** here.\n\n", 150) +
		"```python\n" + strings.Repeat("print('x')\n", 300) + "```\n\nDone."
	m := &bots.Message{
		Text: text,
		Buttons: []bots.Button{
			{ActionID: "sb:conv1:call1:yes", Value: "approve", Label: "Approve", Style: "primary"},
			{ActionID: "sb:conv1:call1:no", Value: "deny", Label: strings.Repeat("L", 100), Style: "danger"},
		},
		Identity: &bots.Identity{Name: "Researcher", IconURL: "https://x.test/r.png"},
		Files:    []bots.File{{Name: "chart.png", MimeType: "image/png", Data: []byte("\x89PNG..."), Title: "Chart"}},
	}
	refs, err := env.a.Post(context.Background(), bots.Target{Channel: "C1", Thread: "1700000000.000001"}, m)
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	msgs := env.srv.Messages("C1")
	if len(msgs) < 3 || len(refs) != len(msgs) {
		t.Fatalf("posted %d messages with %d refs, want ≥3 and a ref for each", len(msgs), len(refs))
	}
	for i, msg := range msgs {
		if msg.ThreadTS != "1700000000.000001" || msg.Username != "Researcher" || msg.IconURL != "https://x.test/r.png" {
			t.Fatalf("message %d = thread %q user %q icon %q, want the thread and identity", i, msg.ThreadTS, msg.Username, msg.IconURL)
		}
		if n := utf8.RuneCountInString(msg.Text); n > DefaultTextLimit {
			t.Fatalf("message %d has %d characters", i, n)
		}
		if (len(msg.Blocks) > 0) != (i == len(msgs)-1) {
			t.Fatalf("message %d blocks %s: want buttons on the last message only", i, msg.Blocks)
		}
	}
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			ActionID string                `json:"action_id"`
			Value    string                `json:"value"`
			Style    string                `json:"style"`
			Text     struct{ Text string } `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(msgs[len(msgs)-1].Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	actions := blocks[len(blocks)-1]
	if actions.Type != "actions" || len(actions.Elements) != 2 ||
		actions.Elements[0].ActionID != "sb:conv1:call1:yes" || actions.Elements[0].Value != "approve" || actions.Elements[0].Style != "primary" ||
		actions.Elements[1].Style != "danger" || utf8.RuneCountInString(actions.Elements[1].Text.Text) != slacklimit.ButtonText {
		t.Fatalf("actions block %+v, want both buttons with ids, values, styles and a label cut to 75", actions)
	}
	files := env.srv.Files()
	if len(files) != 1 || files[0].Channel != "C1" || files[0].ThreadTS != "1700000000.000001" || string(files[0].Data) != "\x89PNG..." || files[0].Title != "Chart" {
		t.Fatalf("files %+v, want chart.png shared in the thread", files)
	}
}

func TestPostDMToUser(t *testing.T) {
	env := newEnv(t, nil)
	for range 2 {
		refs, err := env.a.Post(context.Background(), bots.Target{UserID: "U42"}, &bots.Message{Text: "reminder"})
		if err != nil || len(refs) != 1 || refs[0].Channel != "D42" {
			t.Fatalf("Post to a user = %+v, %v; want one message in D42", refs, err)
		}
	}
	if n := len(env.srv.Calls("conversations.open")); n != 1 {
		t.Fatalf("conversations.open called %d times, want once (cached)", n)
	}
}

func TestPostEphemeral(t *testing.T) {
	env := newEnv(t, nil)
	_, err := env.a.Post(context.Background(), bots.Target{Channel: "C1", Thread: "1.0", UserID: "U1"}, &bots.Message{Text: "only **you**", Ephemeral: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := env.srv.Calls("chat.postEphemeral")
	if len(calls) != 1 || calls[0].Params.Get("user") != "U1" || calls[0].Params.Get("text") != "only *you*" || calls[0].Params.Get("thread_ts") != "1.0" {
		t.Fatalf("postEphemeral calls %+v, want one to U1 in thread 1.0 with mrkdwn text", calls)
	}
	if n := len(env.srv.Messages("C1")); n != 0 {
		t.Fatalf("an ephemeral message was posted publicly (%d messages)", n)
	}
}

func TestUpdateRemovesButtons(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	refs, err := env.a.Post(ctx, bots.Target{Channel: "C1"}, &bots.Message{Text: "Proceed?", Buttons: []bots.Button{{ActionID: "a", Value: "y", Label: "Yes"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.a.Update(ctx, refs[0], &bots.Message{Text: "Proceeding with **care**"}); err != nil {
		t.Fatal(err)
	}
	msg, _ := env.srv.Message("C1", refs[0].ID)
	if msg.Text != "Proceeding with *care*" || string(msg.Blocks) != "[]" || msg.Edits != 1 {
		t.Fatalf("updated message = text %q blocks %s edits %d; want new mrkdwn text and no blocks", msg.Text, msg.Blocks, msg.Edits)
	}
}

func TestSetStatus(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	if err := env.a.SetStatus(ctx, bots.Target{Channel: "D1", Thread: "1.0"}, "is thinking…"); err != nil {
		t.Fatal(err)
	}
	if err := env.a.SetStatus(ctx, bots.Target{Channel: "D1", Thread: "1.0"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := env.a.SetStatus(ctx, bots.Target{Channel: "C1"}, "ignored without a thread"); err != nil {
		t.Fatal(err)
	}
	calls := env.srv.Calls("assistant.threads.setStatus")
	if len(calls) != 2 || calls[0].Params.Get("status") != "is thinking…" || calls[1].Params.Get("status") != "" || !calls[1].Params.Has("status") {
		t.Fatalf("setStatus calls %+v, want the status then an explicit clear", calls)
	}
}

func TestPostCard(t *testing.T) {
	env := newEnv(t, func(o *Options) {
		o.RenderCardFunc = func(c *bots.Card) ([]slack.Block, string, error) {
			return []slack.Block{sectionBlock("*Hotel Astoria*")}, "Hotel Astoria, 4 stars", nil
		}
	})
	_, err := env.a.Post(context.Background(), bots.Target{Channel: "C1"}, &bots.Message{Text: "Hotel Astoria", Card: &bots.Card{},
		Buttons: []bots.Button{{ActionID: "book", Value: "h1", Label: "Book"}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := env.srv.Messages("C1")
	if len(msgs) != 1 || !strings.Contains(string(msgs[0].Blocks), "*Hotel Astoria*") || !strings.Contains(string(msgs[0].Blocks), `"action_id":"book"`) || msgs[0].Text != "Hotel Astoria, 4 stars" {
		t.Fatalf("card message %+v, want the rendered card, its button, and the card's fallback text", msgs)
	}
}

func TestPostCardThatFailsFallsBackToText(t *testing.T) {
	env := newEnv(t, nil) // the default renderer refuses a card without a stamp
	if _, err := env.a.Post(context.Background(), bots.Target{Channel: "C1"}, &bots.Message{Text: "plain **fallback**", Card: &bots.Card{}}); err != nil {
		t.Fatal(err)
	}
	if msgs := env.srv.Messages("C1"); len(msgs) != 1 || msgs[0].Text != "plain *fallback*" {
		t.Fatalf("messages %+v, want the text fallback", msgs)
	}
}

// markdownBlocks returns the text of a message's markdown blocks.
func markdownBlocks(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var blocks []struct {
		Type string          `json:"type"`
		Text json.RawMessage `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatalf("blocks %s: %v", raw, err)
	}
	var out []string
	for _, b := range blocks {
		if b.Type == "markdown" {
			var s string
			if err := json.Unmarshal(b.Text, &s); err != nil {
				t.Fatalf("markdown block text %s: %v", b.Text, err)
			}
			out = append(out, s)
		}
	}
	return out
}

// TestPostMarkdownBlock: a model's reply goes out as a markdown block with
// the Markdown as written (a table, a fenced block with its language), the
// feedback buttons after it, and its mrkdwn as the notification text.
func TestPostMarkdownBlock(t *testing.T) {
	env := newEnv(t, func(o *Options) {
		o.FeedbackFunc = func(context.Context, *core.Feedback) error { return nil }
	})
	md := "## Plan\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfmt.Println(\"**x**\")\n```\n\nSee [docs](https://x.test) and **this**."
	_, err := env.a.Post(context.Background(), bots.Target{Channel: "C1", Thread: "1.0"}, &bots.Message{Text: md, Markdown: true, Feedback: true, Key: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := env.srv.Messages("C1")
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	if got := markdownBlocks(t, msgs[0].Blocks); len(got) != 1 || got[0] != md {
		t.Fatalf("markdown blocks %q, want the reply as written", got)
	}
	if !strings.Contains(string(msgs[0].Blocks), "feedback_buttons") || !strings.Contains(msgs[0].Text, "*this*") {
		t.Fatalf("message %+v, want the feedback buttons and mrkdwn notification text", msgs[0])
	}
	// Update (a streamed reply replaced) shows the same block.
	if err := env.a.Update(context.Background(), bots.MessageRef{Channel: "C1", ID: msgs[0].TS}, &bots.Message{Text: md + "\n\nmore", Markdown: true}); err != nil {
		t.Fatal(err)
	}
	msg, _ := env.srv.Message("C1", msgs[0].TS)
	if got := markdownBlocks(t, msg.Blocks); len(got) != 1 || got[0] != md+"\n\nmore" {
		t.Fatalf("updated markdown blocks %q, want the new reply", got)
	}
}

// TestPostLongMarkdownSplits: a reply over the 12,000 characters one
// message's markdown blocks take is cut into messages the fake Slack
// accepts, never inside a code block, losing no text.
func TestPostLongMarkdownSplits(t *testing.T) {
	env := newEnv(t, nil)
	var b strings.Builder
	b.WriteString("# Report\n\n")
	for i := range 400 {
		fmt.Fprintf(&b, "Paragraph %d says something **useful** here.\n\n", i)
	}
	b.WriteString("```python\n")
	for i := range 300 {
		fmt.Fprintf(&b, "print(%d)\n", i)
	}
	b.WriteString("```\n\nDone.")
	md := b.String()
	refs, err := env.a.Post(context.Background(), bots.Target{Channel: "C1"}, &bots.Message{Text: md, Markdown: true, Buttons: []bots.Button{{ActionID: "a", Value: "v", Label: "OK"}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := env.srv.Messages("C1")
	if len(msgs) < 2 || len(refs) != len(msgs) {
		t.Fatalf("%d messages, %d refs for %d characters; want ≥2 and one ref each", len(msgs), len(refs), utf8.RuneCountInString(md))
	}
	var all strings.Builder
	for i, m := range msgs {
		got := markdownBlocks(t, m.Blocks)
		if len(got) != 1 || utf8.RuneCountInString(got[0]) > slacklimit.MarkdownBlock {
			t.Fatalf("message %d has markdown blocks of %d pieces; want one within 12,000", i, len(got))
		}
		if strings.Count(got[0], "```")%2 != 0 {
			t.Fatalf("message %d leaves a code block open:\n%s", i, got[0][max(0, len(got[0])-200):])
		}
		if hasButtons := strings.Contains(string(m.Blocks), `"actions"`); hasButtons != (i == len(msgs)-1) {
			t.Fatalf("message %d buttons %v; want them on the last only", i, hasButtons)
		}
		all.WriteString(got[0])
	}
	for _, want := range []string{"Paragraph 0 says", "Paragraph 399 says", "print(0)", "print(299)", "Done."} {
		if !strings.Contains(all.String(), want) {
			t.Fatalf("the split lost %q", want)
		}
	}
}
