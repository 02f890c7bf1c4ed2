package discord

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/mdsplit"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/internal/discordtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("internal/poll.runtime_pollWait"),
	)
}

var (
	alice = discordgo.User{ID: "2000000000000000001", Username: "alice"}
	bob   = discordgo.User{ID: "2000000000000000002", Username: "bob"}
	robot = discordgo.User{ID: "2000000000000000003", Username: "otherbot", Bot: true}
)

const (
	chanGeneral = "3000000000000000001"
	chanAlways  = "3000000000000000002"
	chanThreads = "3000000000000000003"
)

// fakeCore records what the adapter hands to core.
type fakeCore struct {
	mu        sync.Mutex
	changed   chan struct{}
	inbound   []core.Inbound
	actions   []core.Action
	actResult core.ActionResult
	actErr    error
}

func newFakeCore() *fakeCore { return &fakeCore{changed: make(chan struct{})} }

func (f *fakeCore) Submit(_ context.Context, in *core.Inbound) (*core.SubmitResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inbound = append(f.inbound, *in)
	close(f.changed)
	f.changed = make(chan struct{})
	return &core.SubmitResult{ConversationID: uuid.New(), Ignored: !in.Mentioned}, nil
}

func (f *fakeCore) Act(_ context.Context, a *core.Action) (*core.ActionResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, *a)
	close(f.changed)
	f.changed = make(chan struct{})
	if f.actErr != nil {
		return nil, f.actErr
	}
	r := f.actResult
	return &r, nil
}

func (f *fakeCore) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		ch := f.changed
		ok := cond()
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out after 10s waiting for core to receive %s", what)
		}
	}
}

// waitInbound waits for the n-th submitted message and returns it.
func (f *fakeCore) waitInbound(t *testing.T, n int) core.Inbound {
	t.Helper()
	f.wait(t, "inbound message", func() bool { return len(f.inbound) >= n })
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inbound[n-1]
}

func (f *fakeCore) waitAction(t *testing.T, n int) core.Action {
	t.Helper()
	f.wait(t, "action", func() bool { return len(f.actions) >= n })
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.actions[n-1]
}

type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// start runs an adapter against a fresh fake and stops it when the test ends.
func start(t testing.TB, edit func(*Options)) (*Adapter, *discordtest.Server, *fakeCore) {
	t.Helper()
	fake := discordtest.NewServer(t)
	fc := newFakeCore()
	opts := Options{
		Token: discordtest.DefaultToken, APIURL: fake.URL, Submitter: fc,
		Logger: slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(a.Stop)
	return a, fake, fc
}

func mention() string { return "<@" + discordtest.BotUserID + ">" }

func TestInboundNormalisation(t *testing.T) {
	t.Parallel()
	_, fake, fc := start(t, func(o *Options) {
		o.Channels = []string{chanAlways}
	})
	thread := "3000000000000000099"
	fake.AddChannel(discordgo.Channel{ID: thread, GuildID: discordtest.DefaultGuildID, ParentID: chanGeneral, Type: discordgo.ChannelTypeGuildPublicThread})
	dm := fake.DMChannel(alice)

	tests := []struct {
		name    string
		channel string
		author  discordgo.User
		content string
		// want is nil when the message must not reach core.
		want *core.Inbound
	}{
		{"mention is stripped", chanGeneral, alice, mention() + " what is the weather?",
			&core.Inbound{Workspace: discordtest.DefaultGuildID, Channel: chanGeneral, Text: "what is the weather?", Mentioned: true, UserID: alice.ID, UserName: "alice"}},
		{"own message is dropped", chanGeneral, (*fake).Bot, "I am the bot", nil},
		{"other bots are dropped", chanGeneral, robot, mention() + " hi", nil},
		{"unaddressed message goes to core unmentioned", chanGeneral, bob, "just chatting with <@" + alice.ID + ">",
			&core.Inbound{Workspace: discordtest.DefaultGuildID, Channel: chanGeneral, Text: "just chatting with @user" + alice.ID, Mentioned: false, UserID: bob.ID, UserName: "bob"}},
		{"configured channel counts as addressed", chanAlways, bob, "no mention here",
			&core.Inbound{Workspace: discordtest.DefaultGuildID, Channel: chanAlways, Text: "no mention here", Mentioned: true, UserID: bob.ID, UserName: "bob"}},
		{"dm", dm, alice, "hello in private",
			&core.Inbound{Channel: dm, Text: "hello in private", IsDM: true, Mentioned: true, UserID: alice.ID, UserName: "alice"}},
		{"thread message names parent and thread", thread, alice, "follow-up",
			&core.Inbound{Workspace: discordtest.DefaultGuildID, Channel: chanGeneral, Thread: thread, Text: "follow-up", UserID: alice.ID, UserName: "alice"}},
	}
	got := 0
	for _, tc := range tests {
		m := fake.UserMessage(tc.channel, tc.author, tc.content)
		if tc.want == nil {
			// Handlers run in order: once a later message arrives, this one
			// was seen and dropped.
			sentinel := fake.UserMessage(chanGeneral, bob, "sentinel for "+tc.name)
			got++
			in := fc.waitInbound(t, got)
			if in.MessageID != sentinel.ID {
				t.Errorf("%s: core received message %s (%q); want it dropped", tc.name, in.MessageID, in.Text)
			}
			continue
		}
		got++
		in := fc.waitInbound(t, got)
		want := *tc.want
		want.Platform, want.EventID, want.MessageID, want.At = "discord", m.ID, m.ID, in.At
		if !reflect.DeepEqual(in, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, in, want)
		}
		if in.At.IsZero() {
			t.Errorf("%s: At is zero; want the message time", tc.name)
		}
	}
}

func TestAllowBots(t *testing.T) {
	t.Parallel()
	_, fake, fc := start(t, func(o *Options) { o.AllowBots = true })
	m := fake.UserMessage(chanGeneral, robot, mention()+" status?")
	in := fc.waitInbound(t, 1)
	if in.MessageID != m.ID || in.Text != "status?" || !in.Mentioned {
		t.Errorf("got %+v; want the other bot's mention passed to core with AllowBots", in)
	}
}

func TestThreadOnMention(t *testing.T) {
	t.Parallel()
	_, fake, fc := start(t, func(o *Options) { o.ThreadOnMention = []string{chanThreads} })
	m := fake.UserMessage(chanThreads, alice, mention()+" plan my trip to Lisbon\nwith details")
	in := fc.waitInbound(t, 1)
	if in.Channel != chanThreads || in.Thread != m.ID {
		t.Fatalf("got channel %q thread %q; want channel %q and the new thread %q", in.Channel, in.Thread, chanThreads, m.ID)
	}
	calls := fake.CallsTo("POST /channels/{channel}/messages/{message}/threads")
	if len(calls) != 1 {
		t.Fatalf("thread creations = %d; want 1", len(calls))
	}
	var body struct{ Name string }
	if err := calls[0].Decode(&body); err != nil || body.Name != "plan my trip to Lisbon" {
		t.Errorf("thread name = %q (%v); want the question's first line", body.Name, err)
	}
	// A message inside the new thread is a thread message, and does not
	// start another thread.
	fake.UserMessage(m.ID, alice, mention()+" and hotels?")
	in2 := fc.waitInbound(t, 2)
	if in2.Channel != chanThreads || in2.Thread != m.ID {
		t.Errorf("reply in thread: got channel %q thread %q; want %q / %q", in2.Channel, in2.Thread, chanThreads, m.ID)
	}
	if n := len(fake.CallsTo("POST /channels/{channel}/messages/{message}/threads")); n != 1 {
		t.Errorf("thread creations = %d after a reply in the thread; want still 1", n)
	}
}

func fenceCount(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			n++
		}
	}
	return n
}

func TestSplitText(t *testing.T) {
	t.Parallel()
	para := strings.Repeat("This is a sentence about Discord limits. ", 20) // ~820 chars
	code := "```go\n" + strings.Repeat("fmt.Println(\"a line of code that is long enough\")\n", 80) + "```"
	tests := []struct {
		name      string
		text      string
		wantParts int // 0: just more than one
	}{
		{"short", "hello", 1},
		{"paragraphs", strings.Repeat(para+"\n\n", 6), 0},
		{"code block across parts", "Here is the code:\n\n" + code + "\n\nThat was it.", 0},
		{"one long word", strings.Repeat("x", 4500), 3},
		{"unicode", strings.Repeat("日本語のテキスト。", 500), 0},
		{"unclosed fence", "```\n" + strings.Repeat("y = 1\n", 500), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts := mdsplit.Split(tc.text, MaxMessageChars)
			if tc.wantParts > 0 && len(parts) != tc.wantParts {
				t.Errorf("parts = %d; want %d", len(parts), tc.wantParts)
			}
			if tc.wantParts == 0 && len(parts) < 2 {
				t.Errorf("parts = %d; want the text split", len(parts))
			}
			var rebuilt []string
			for i, p := range parts {
				if n := len([]rune(p)); n > MaxMessageChars {
					t.Errorf("part %d has %d characters; want ≤ %d", i, n, MaxMessageChars)
				}
				if fenceCount(p)%2 != 0 {
					t.Errorf("part %d leaves a code fence open:\n%s", i, p)
				}
				rebuilt = append(rebuilt, strings.Fields(p)...)
			}
			// Apart from the fences added at cuts, no word is lost or added.
			want := strings.Fields(tc.text)
			var got []string
			for _, w := range rebuilt {
				got = append(got, w)
			}
			if strings.Join(stripFences(got), " ") != strings.Join(stripFences(want), " ") {
				t.Errorf("the parts do not add up to the text")
			}
		})
	}
}

func stripFences(words []string) []string {
	var out []string
	for _, w := range words {
		if !strings.HasPrefix(w, "```") {
			out = append(out, w)
		}
	}
	// A hard cut splits a word in two; compare on the joined letters.
	return []string{strings.Join(out, "")}
}

func TestPostLongReplyWithButtonsAndFile(t *testing.T) {
	t.Parallel()
	a, fake, _ := start(t, nil)
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	text := strings.Repeat("Some analysis of the numbers. ", 70) + "\n\n```python\n" +
		strings.Repeat("print('chart data row')\n", 120) + "```\n\nDone @everyone."
	refs, err := a.Post(context.Background(), bots.Target{Channel: chanGeneral}, &bots.Message{
		Text:    text,
		Buttons: []bots.Button{{ActionID: "sb-approval:x", Value: "approve", Label: "Approve", Style: "primary"}, {ActionID: "sb-approval:x", Value: "deny", Label: "Deny", Style: "danger"}},
		Files:   []bots.File{{Name: "chart.png", MimeType: "image/png", Data: []byte("\x89PNG fake")}},
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	msgs := fake.BotMessages(chanGeneral)
	if len(refs) < 3 || len(msgs) != len(refs) {
		t.Fatalf("posted %d messages, %d refs; want the ~5,000 characters split in ≥ 3 and one ref each", len(msgs), len(refs))
	}
	for i, m := range msgs {
		if m.ID != refs[i].ID {
			t.Errorf("ref %d = %s; want %s in posting order", i, refs[i].ID, m.ID)
		}
		if fenceCount(m.Content)%2 != 0 {
			t.Errorf("message %d leaves a code fence open", i)
		}
		if string(m.AllowedMentions) != `{"parse":[],"replied_user":false}` {
			t.Errorf("message %d allowed_mentions = %s; want nobody pinged", i, m.AllowedMentions)
		}
		last := i == len(msgs)-1
		if got := len(m.Buttons()); (got > 0) != last {
			t.Errorf("message %d has %d buttons; want buttons only on the last part", i, got)
		}
		if got := len(m.Attachments); (got > 0) != last {
			t.Errorf("message %d has %d files; want the file only on the last part", i, got)
		}
	}
	last := msgs[len(msgs)-1]
	if len(last.Attachments) != 1 || last.Attachments[0].Filename != "chart.png" || last.Attachments[0].ContentType != "image/png" {
		t.Errorf("attachment = %+v; want chart.png as image/png", last.Attachments)
	}
	if b := last.Buttons(); len(b) != 2 || b[0].Label != "Approve" || b[0].Style != int(discordgo.PrimaryButton) || b[1].Style != int(discordgo.DangerButton) {
		t.Errorf("buttons = %+v; want Approve (primary) and Deny (danger)", b)
	}
}

func TestButtonLimits(t *testing.T) {
	t.Parallel()
	many := make([]bots.Button, 26)
	for i := range many {
		many[i] = bots.Button{ActionID: "a", Value: string(rune('a' + i)), Label: "x"}
	}
	tests := []struct {
		name    string
		buttons []bots.Button
		wantErr bool
		rows    int
	}{
		{"seven buttons make two rows", many[:7], false, 2},
		{"twenty-five fit", many[:25], false, 5},
		{"twenty-six do not", many, true, 0},
		{"custom id too long", []bots.Button{{ActionID: strings.Repeat("a", 90), Value: strings.Repeat("v", 10), Label: "x"}}, true, 0},
		{"duplicate", []bots.Button{{ActionID: "a", Value: "1", Label: "x"}, {ActionID: "a", Value: "1", Label: "y"}}, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := components(tc.buttons)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "discord") {
					t.Fatalf("err = %v; want an ErrButtons error", err)
				}
				return
			}
			if err != nil || len(rows) != tc.rows {
				t.Fatalf("rows = %d, err = %v; want %d rows", len(rows), err, tc.rows)
			}
		})
	}
	id, err := encodeCustomID("sb-approval:1:2", "a:b")
	if err != nil {
		t.Fatal(err)
	}
	if act, val := decodeCustomID(id); act != "sb-approval:1:2" || val != "a:b" {
		t.Errorf("decode(%q) = %q, %q; want the action id and value back", id, act, val)
	}
	if label := shorten(strings.Repeat("L", 100), MaxLabelChars); len([]rune(label)) != MaxLabelChars {
		t.Errorf("label shortened to %d characters; want %d", len([]rune(label)), MaxLabelChars)
	}
}

func TestStreamEditsAreBounded(t *testing.T) {
	t.Parallel()
	a, fake, _ := start(t, nil)
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	ctx := context.Background()
	st, err := a.StartStream(ctx, bots.Target{Channel: chanGeneral}, nil)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	for i := 0; time.Since(begin) < 2500*time.Millisecond; i++ {
		<-tick.C
		if err := st.Append(ctx, "word "); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	tick.Stop()
	elapsed := time.Since(begin)
	refs, err := st.Finish(ctx, &bots.Message{Text: "The final answer."})
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if len(refs) != 1 {
		t.Fatalf("refs = %d; want one message", len(refs))
	}
	if m := fake.Message(refs[0].ID); m == nil || m.Content != "The final answer." {
		t.Errorf("final message = %+v; want the final text", m)
	}
	edits := fake.CallsTo("PATCH /channels/{channel}/messages/{message}")
	// Streaming edits (the last PATCH is Finish's) at ≤ 1 per second.
	stream := edits[:len(edits)-1]
	if max := int(elapsed/time.Second) + 1; len(stream) > max || len(stream) < 1 {
		t.Errorf("streaming edits = %d over %s; want between 1 and %d", len(stream), elapsed, max)
	}
	// The adapter spaces its writes a second apart, but the fake sees
	// arrivals: a write slowed by a busy machine arrives late and the gap
	// to the next one shrinks by as much. Half a second still tells a
	// throttled stream from one that edits per delta (as the whole-service
	// test of the same stream does).
	posts := fake.CallsTo("POST /channels/{channel}/messages")
	prev := posts[0].At
	for i, e := range stream {
		if gap := e.At.Sub(prev); gap < 500*time.Millisecond {
			t.Errorf("edit %d came %s after the previous write; want about 1s (at least 500ms as the fake sees arrivals)", i, gap)
		}
		prev = e.At
	}
}

func TestStreamGrowsPastOneMessage(t *testing.T) {
	t.Parallel()
	a, fake, _ := start(t, nil)
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	ctx := context.Background()
	st, _ := a.StartStream(ctx, bots.Target{Channel: chanGeneral}, nil)
	long := strings.Repeat("A sentence that fills the message. ", 100) // 3,500 chars
	if err := st.Append(ctx, long); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.BotMessages(chanGeneral)); n != 2 {
		t.Fatalf("streamed %d messages; want 2 for 3,500 characters", n)
	}
	refs, err := st.Finish(ctx, &bots.Message{Text: "Short after all."})
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	msgs := fake.BotMessages(chanGeneral)
	if len(refs) != 1 || len(msgs) != 1 || msgs[0].Content != "Short after all." {
		t.Errorf("after Finish: %d refs, messages %+v; want one message with the final text, the surplus deleted", len(refs), msgs)
	}
}

func TestButtonClick(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		result core.ActionResult
		err    error
		// wantPrivate is the ephemeral follow-up, or "" when the message is
		// edited to show the choice.
		wantPrivate string
	}{
		{"accepted", core.ActionResult{}, nil, ""},
		{"refused", core.ActionResult{Refused: true, Reason: "Only the owner can approve."}, nil, "Only the owner can approve."},
		{"already decided", core.ActionResult{}, core.ErrNotPending, "This was already decided."},
		// A late click on a settled card or prompt says who chose first,
		// or when the approval expired.
		{"already chosen", core.ActionResult{Duplicate: true, Settled: &core.Settled{
			By: "alice", ByUserID: "1000000000000000001", Platform: Platform, Choice: "Pick A",
		}}, nil, "Already chosen by <@1000000000000000001>: **Pick A**."},
		{"chosen on another platform", core.ActionResult{Duplicate: true, Settled: &core.Settled{
			By: "alice", ByUserID: "U0ALICE", Platform: "slack", Choice: "Pick A",
		}}, nil, "Already chosen by alice: **Pick A**."},
		{"expired", core.ActionResult{Duplicate: true, Settled: &core.Settled{
			Expired: true, At: time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC),
		}}, nil, "This approval expired at <t:1796549400:f>; ask again."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, fake, fc := start(t, nil)
			fc.actResult, fc.actErr = tc.result, tc.err
			fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
			refs, err := a.Post(context.Background(), bots.Target{Channel: chanGeneral}, &bots.Message{
				Text: "Delete the staging database?",
				Buttons: []bots.Button{
					{ActionID: "sb-approval:42", Value: "approve", Label: "Approve", Style: "primary"},
					{ActionID: "sb-approval:42", Value: "deny", Label: "Deny", Style: "danger"},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			btn := fake.Message(refs[0].ID).Buttons()[0]
			in := fake.ClickButton(refs[0].ID, btn.CustomID, bob)

			act := fc.waitAction(t, 1)
			if act.ActionID != "sb-approval:42" || act.Value != "approve" || act.UserID != bob.ID || act.EventID != in.ID || act.Platform != "discord" {
				t.Errorf("action = %+v; want sb-approval:42/approve by bob with the interaction id", act)
			}
			cb := fake.WaitCalls(t, "POST /interactions/{interaction}/{token}/callback", 1)
			var resp struct{ Type int }
			if err := cb[0].Decode(&resp); err != nil || resp.Type != int(discordgo.InteractionResponseDeferredMessageUpdate) {
				t.Errorf("first response type = %d (%v); want a deferred update (6)", resp.Type, err)
			}
			if tc.wantPrivate != "" {
				fake.WaitCalls(t, "POST /webhooks/{app}/{token}", 1)
				got := fake.Interaction(in.ID)
				f := fake.Message(got.Followups[0])
				if !f.Ephemeral() || f.Content != tc.wantPrivate {
					t.Errorf("follow-up = %q (ephemeral %v); want ephemeral %q", f.Content, f.Ephemeral(), tc.wantPrivate)
				}
				if m := fake.Message(refs[0].ID); len(m.Buttons()) != 2 || m.Edits != 0 {
					t.Errorf("message edited (%d edits, %d buttons); want it untouched", m.Edits, len(m.Buttons()))
				}
				return
			}
			fake.WaitCalls(t, "PATCH /webhooks/{app}/{token}/messages/{message}", 1)
			m := fake.Message(refs[0].ID)
			if len(m.Buttons()) != 0 || !strings.Contains(m.Content, "Delete the staging database?") ||
				!strings.Contains(m.Content, "**Approve** — chosen by <@"+bob.ID+">") {
				t.Errorf("edited message = %q with %d buttons; want the question, the choice and who made it, no buttons", m.Content, len(m.Buttons()))
			}
		})
	}
}

func TestHTTPInteractions(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a, fake, fc := start(t, func(o *Options) { o.PublicKey = hex.EncodeToString(pub) })
	mux := http.NewServeMux()
	a.Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	endpoint := srv.URL + "/discord/interactions"

	_, forger, _ := ed25519.GenerateKey(rand.Reader)
	tests := []struct {
		name       string
		key        ed25519.PrivateKey
		payload    []byte
		wantStatus int
		wantBody   string
	}{
		{"forged signature", forger, discordtest.PingPayload(), http.StatusUnauthorized, ""},
		{"valid ping", priv, discordtest.PingPayload(), http.StatusOK, `{"type":1}`},
	}
	for _, tc := range tests {
		status, body, err := fake.PostInteraction(endpoint, tc.key, tc.payload)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if status != tc.wantStatus || (tc.wantBody != "" && strings.TrimSpace(string(body)) != tc.wantBody) {
			t.Errorf("%s: HTTP %d %s; want %d %s", tc.name, status, body, tc.wantStatus, tc.wantBody)
		}
	}

	// No signature at all, and a stale timestamp, are refused too.
	resp, err := http.Post(endpoint, "application/json", strings.NewReader(string(discordtest.PingPayload())))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned request: HTTP %d; want 401", resp.StatusCode)
	}

	// A click delivered over HTTP is answered in the HTTP response, then
	// followed up over REST.
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	refs, err := a.Post(context.Background(), bots.Target{Channel: chanGeneral}, &bots.Message{
		Text: "Pick one", Buttons: []bots.Button{{ActionID: "card:1", Value: "a", Label: "A"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, payload := fake.ButtonInteraction(refs[0].ID, fake.Message(refs[0].ID).Buttons()[0].CustomID, alice)
	status, body, err := fake.PostInteraction(endpoint, priv, payload)
	if err != nil || status != http.StatusOK || !strings.Contains(string(body), `"type":6`) {
		t.Fatalf("click over HTTP: %d %s %v; want 200 with a deferred update", status, body, err)
	}
	if act := fc.waitAction(t, 1); act.ActionID != "card:1" || act.Value != "a" {
		t.Errorf("action = %+v; want card:1/a", act)
	}
	fake.WaitCalls(t, "PATCH /webhooks/{app}/{token}/messages/{message}", 1)
}

func TestHTTPInteractionsRejectStaleTimestamp(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	a, err := New(Options{
		Token: "t", Submitter: newFakeCore(), PublicKey: hex.EncodeToString(pub),
		Now: func() time.Time { return time.Now().Add(time.Hour) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	mux := http.NewServeMux()
	a.Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	fake := discordtest.NewServer(t)
	status, _, err := fake.PostInteraction(srv.URL+"/discord/interactions", priv, discordtest.PingPayload())
	if err != nil || status != http.StatusUnauthorized {
		t.Errorf("validly signed but an hour old: HTTP %d (%v); want 401", status, err)
	}
}

func TestGatewayResumeDeliversMissedMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		break_ func(*discordtest.Server)
	}{
		{"socket dropped", (*discordtest.Server).Drop},
		{"server asks to reconnect", (*discordtest.Server).Reconnect},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, fake, fc := start(t, nil)
			before := fake.UserMessage(chanGeneral, alice, mention()+" first")
			if in := fc.waitInbound(t, 1); in.MessageID != before.ID {
				t.Fatalf("first message = %s; want %s", in.MessageID, before.ID)
			}
			tc.break_(fake)
			fake.WaitGateway(t, "the client to be disconnected", func(s discordtest.GatewayStats) bool { return !s.Connected })
			missed := fake.UserMessage(chanGeneral, alice, mention()+" sent while you were away")
			fake.WaitGateway(t, "a RESUME", func(s discordtest.GatewayStats) bool { return s.Resumes == 1 && s.Connected })
			in := fc.waitInbound(t, 2)
			if in.MessageID != missed.ID || in.Text != "sent while you were away" {
				t.Errorf("after resume core got %s %q; want the missed message %s", in.MessageID, in.Text, missed.ID)
			}
			if st := fake.GatewayStats(); st.Identifies != 1 {
				t.Errorf("identifies = %d; want 1 (a resume, not a new session)", st.Identifies)
			}
			after := fake.UserMessage(chanGeneral, alice, mention()+" and after")
			if in := fc.waitInbound(t, 3); in.MessageID != after.ID {
				t.Errorf("next message = %s; want %s live after the resume", in.MessageID, after.ID)
			}
		})
	}
}

func TestRateLimitedPostIsSentOnce(t *testing.T) {
	t.Parallel()
	a, fake, _ := start(t, nil)
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	const retry = 300 * time.Millisecond
	fake.RateLimit("POST /channels/{channel}/messages", retry, false)
	begin := time.Now()
	refs, err := a.Post(context.Background(), bots.Target{Channel: chanGeneral}, &bots.Message{Text: "after the wait"})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	calls := fake.CallsTo("POST /channels/{channel}/messages")
	if len(calls) != 2 || calls[0].Status != http.StatusTooManyRequests || calls[1].Status != http.StatusOK {
		t.Fatalf("calls = %d; want a 429 then one 200", len(calls))
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < retry {
		t.Errorf("retried %s after the 429; want ≥ retry_after %s", gap, retry)
	}
	if msgs := fake.BotMessages(chanGeneral); len(msgs) != 1 || msgs[0].ID != refs[0].ID || msgs[0].Content != "after the wait" {
		t.Errorf("messages = %+v; want exactly one", msgs)
	}
	if time.Since(begin) < retry {
		t.Errorf("Post returned before retry_after passed")
	}
}

func TestSlashCommands(t *testing.T) {
	t.Parallel()
	_, fake, fc := start(t, func(o *Options) {
		o.ListAgentsFunc = func(context.Context) ([]string, error) { return []string{"concierge", "analyst"}, nil }
	})
	calls := fake.CallsTo("PUT /applications/{app}/commands")
	if len(calls) != 1 {
		t.Fatalf("bulk overwrites = %d; want 1 at start", len(calls))
	}
	var names []string
	for _, c := range fake.Commands("") {
		names = append(names, fmt.Sprintf("%s(%d)", c.Name, c.Type))
	}
	if strings.Join(names, ",") != "ask(1),agents(1),remind(1),login(1),Ask about this message(3),Ask about this person(2)" {
		t.Errorf("registered commands = %v; want ask, agents, remind, login (chat input), then the message and the user command", names)
	}

	t.Run("ask", func(t *testing.T) {
		in := fake.SlashCommand(chanGeneral, "ask", map[string]string{"prompt": "What changed today?", "agent": "analyst"}, alice)
		got := fc.waitInbound(t, 1)
		orig := fake.Interaction(in.ID)
		if orig.ResponseType != discordgo.InteractionResponseDeferredChannelMessageWithSource {
			t.Errorf("first response = %d; want deferred (5)", orig.ResponseType)
		}
		want := core.Inbound{
			Platform: "discord", EventID: in.ID, Workspace: discordtest.DefaultGuildID, Channel: chanGeneral,
			MessageID: orig.OriginalID, UserID: alice.ID, UserName: "alice", Text: "What changed today?",
			Mentioned: true, Agent: "analyst", At: got.At,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("inbound:\n got %+v\nwant %+v", got, want)
		}
		if m := fake.Message(orig.OriginalID); !strings.Contains(m.Content, "> What changed today?") {
			t.Errorf("echo = %q; want the question quoted", m.Content)
		}
	})
	t.Run("agents", func(t *testing.T) {
		in := fake.SlashCommand(chanGeneral, "agents", nil, alice)
		fake.Wait(t, "the /agents answer", func() bool {
			got := fake.Interaction(in.ID)
			m := fake.Message(got.OriginalID)
			return m != nil && m.Content == "Agents: concierge, analyst" && m.Ephemeral()
		})
	})
	t.Run("remind", func(t *testing.T) {
		in := fake.SlashCommand(chanGeneral, "remind", map[string]string{"when": "in 1 hour", "what": "stretch"}, alice)
		fake.Wait(t, "the /remind answer", func() bool {
			got := fake.Interaction(in.ID)
			m := fake.Message(got.OriginalID)
			return m != nil && m.Content == RemindersPending && m.Ephemeral()
		})
	})
}

// TestRemindCommand: /remind is the form of the typed remind command; its
// options go to Options.CommandFunc, the handler of typed commands, and the
// reply is shown only to the person who asked.
func TestRemindCommand(t *testing.T) {
	t.Parallel()
	type call struct {
		in  core.Inbound
		cmd core.Command
	}
	calls := make(chan call, 2)
	_, fake, _ := start(t, func(o *Options) {
		o.CommandFunc = func(_ context.Context, in *core.Inbound, cmd *core.Command) (string, error) {
			calls <- call{*in, *cmd}
			if cmd.Fields["what"] == "break" {
				return "", errors.New("the store is down")
			}
			return "OK, I'll remind you later (" + cmd.Fields["what"] + ").", nil
		}
	})
	tests := []struct{ what, want string }{
		{"stretch", "OK, I'll remind you later (stretch)."},
		{"break", "⚠️ That command failed; please try again."},
	}
	for _, tc := range tests {
		in := fake.SlashCommand(chanGeneral, "remind", map[string]string{"when": "in 1 hour", "what": tc.what}, alice)
		fake.Wait(t, "the /remind answer "+tc.want, func() bool {
			got := fake.Interaction(in.ID)
			m := fake.Message(got.OriginalID)
			return m != nil && m.Content == tc.want && m.Ephemeral()
		})
		got := <-calls
		wantCmd := core.Command{Text: CommandRemind, Fields: map[string]string{"when": "in 1 hour", "what": tc.what}}
		if got.cmd.Text != wantCmd.Text || fmt.Sprint(got.cmd.Fields) != fmt.Sprint(wantCmd.Fields) {
			t.Errorf("command = %+v; want %+v", got.cmd, wantCmd)
		}
		wantIn := core.Inbound{
			Platform: "discord", EventID: in.ID, Workspace: discordtest.DefaultGuildID, Channel: chanGeneral,
			UserID: alice.ID, UserName: "alice", Text: "/remind", Mentioned: true, At: got.in.At,
		}
		if !reflect.DeepEqual(got.in, wantIn) {
			t.Errorf("inbound:\n got %+v\nwant %+v", got.in, wantIn)
		}
	}
}

func TestTypingIndicator(t *testing.T) {
	t.Parallel()
	a, fake, _ := start(t, func(o *Options) { o.TypingInterval = 20 * time.Millisecond })
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	to := bots.Target{Channel: chanGeneral}
	ctx := context.Background()
	if err := a.SetStatus(ctx, to, "thinking"); err != nil {
		t.Fatal(err)
	}
	fake.WaitCalls(t, "POST /channels/{channel}/typing", 3)
	if err := a.SetStatus(ctx, to, ""); err != nil {
		t.Fatal(err)
	}
	n := len(fake.CallsTo("POST /channels/{channel}/typing"))
	// The loop has exited when SetStatus("") returns; a post proves time
	// passed on the server side without more typing.
	if _, err := a.Post(ctx, to, &bots.Message{Text: "done"}); err != nil {
		t.Fatal(err)
	}
	if m := len(fake.CallsTo("POST /channels/{channel}/typing")); m != n {
		t.Errorf("typing calls went from %d to %d after the status was cleared; want none", n, m)
	}
	// Posting also ends an indicator nobody cleared.
	if err := a.SetStatus(ctx, to, "working"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Post(ctx, to, &bots.Message{Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	running := len(a.typing)
	a.mu.Unlock()
	if running != 0 {
		t.Errorf("%d typing loops after a post; want 0", running)
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	fc := newFakeCore()
	tests := []struct {
		name string
		opts Options
		want string // a field the error must name, "" for valid
	}{
		{"valid", Options{Token: "Bot abc", Submitter: fc}, ""},
		{"no token", Options{Submitter: fc}, "Options.Token"},
		{"no submitter", Options{Token: "abc"}, "Options.Submitter"},
		{"bad api url", Options{Token: "abc", Submitter: fc, APIURL: "localhost:80"}, "Options.APIURL"},
		{"bad public key", Options{Token: "abc", Submitter: fc, PublicKey: "zz"}, "Options.PublicKey"},
		{"fast streaming", Options{Token: "abc", Submitter: fc, StreamUpdateInterval: 100 * time.Millisecond}, "Options.StreamUpdateInterval"},
		{"channel names", Options{Token: "abc", Submitter: fc, Channels: []string{"#general"}}, "Options.Channels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts.withDefaults()
			err := o.validate()
			if tc.want == "" {
				if err != nil {
					t.Errorf("validate: %v; want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("validate = %v; want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestAPIURLRewrite(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"http://127.0.0.1:9/", "http://127.0.0.1:9/api/v9/", "http://127.0.0.1:9/api"} {
		u, err := parseAPIURL(in)
		if err != nil || u.String() != "http://127.0.0.1:9" {
			t.Errorf("parseAPIURL(%q) = %v, %v; want http://127.0.0.1:9", in, u, err)
		}
	}
	var got string
	rt := &rewriteTransport{target: mustURL(t, "http://127.0.0.1:9/prefix"), base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r.URL.String()
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})}
	req, _ := http.NewRequest("GET", discordgo.EndpointGateway, nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got != "http://127.0.0.1:9/prefix/api/v9/gateway" {
		t.Errorf("rewritten to %s; want the local server", got)
	}
	if req.URL.Host != "discord.com" {
		t.Errorf("the caller's request was modified")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustURL(t *testing.T, s string) *url.URL {
	u, err := parseAPIURL(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestStopWhileReconnecting: a Stop that races a gateway drop leaves no
// reconnect loop behind (goleak in TestMain checks the goroutines).
func TestStopWhileReconnecting(t *testing.T) {
	t.Parallel()
	a, fake, _ := start(t, nil)
	fake.Drop()
	a.Stop()
	if st := fake.GatewayStats(); st.Connected {
		t.Errorf("gateway still connected after Stop: %+v", st)
	}
}

func TestCardRendering(t *testing.T) {
	t.Parallel()
	cardID := "card:6f1c0a52-0c1e-4a7e-9d1c-2a7d8f3b9e10:book"
	a, fake, fc := start(t, func(o *Options) {
		o.CardsAsEmbeds = true
		o.RenderCardFunc = func(card *bots.Card) ([]*discordgo.MessageEmbed, []discordgo.MessageComponent, []*discordgo.File, error) {
			return []*discordgo.MessageEmbed{{Title: card.Stamped.Title}},
				[]discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.Button{Label: "Book", CustomID: cardID, Style: discordgo.PrimaryButton}}}},
				[]*discordgo.File{{Name: "spark.png", ContentType: "image/png", Reader: strings.NewReader("png")}}, nil
		}
	})
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	refs, err := a.Post(context.Background(), bots.Target{Channel: chanGeneral}, &bots.Message{Text: "Hotel Lisboa, 120 EUR", Card: &bots.Card{Stamped: &cards.Stamped{Title: "Hotel Lisboa"}}})
	if err != nil {
		t.Fatal(err)
	}
	m := fake.Message(refs[0].ID)
	if len(refs) != 1 || m.Content != "" || !strings.Contains(string(m.Embeds), `"title":"Hotel Lisboa"`) {
		t.Errorf("message content %q embeds %s; want the card as an embed and no fallback text", m.Content, m.Embeds)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].Filename != "spark.png" {
		t.Errorf("attachments = %+v; want the card's image", m.Attachments)
	}
	b := m.Buttons()
	if len(b) != 1 || b[0].CustomID != cardID {
		t.Fatalf("buttons = %+v; want the card's button", b)
	}
	fake.ClickButton(m.ID, cardID, alice)
	if act := fc.waitAction(t, 1); act.ActionID != cardID || act.Value != "" {
		t.Errorf("action = %q/%q; want the card's custom_id whole as the action id", act.ActionID, act.Value)
	}
}

func TestDefaultCardRenderer(t *testing.T) {
	t.Parallel()
	a, fake, _ := start(t, nil)
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	refs, err := a.Post(context.Background(), bots.Target{Channel: chanGeneral}, &bots.Message{
		Text: "fallback", Card: &bots.Card{EntryID: uuid.New(), Stamped: &cards.Stamped{V: 1, Title: "Quarterly numbers", Summary: "Up 4%"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := fake.Message(refs[0].ID)
	if !m.ComponentsV2() || m.Content != "" || len(m.Embeds) != 0 || !strings.Contains(strings.Join(m.TextDisplays(), "\n"), "Up 4%") {
		t.Errorf("message flags %d, content %q, embeds %s, text displays %q; want discordcard's Components V2 card", m.Flags, m.Content, m.Embeds, m.TextDisplays())
	}
}

// Rate limits are waited out a bounded number of times and never past the
// caller's context: a Discord that keeps answering 429 cannot hold a
// conversation's delivery forever.
func TestRateLimitRetriesAreBounded(t *testing.T) {
	t.Parallel()
	a, fake, _ := start(t, nil)
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	for range maxRateLimitRetries + 1 {
		fake.RateLimit("POST /channels/{channel}/messages", 10*time.Millisecond, false)
	}
	_, err := a.Post(context.Background(), bots.Target{Channel: chanGeneral}, &bots.Message{Text: "never"})
	var rl *discordgo.RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("Post after %d 429s: %v; want the rate-limit error", maxRateLimitRetries+1, err)
	}
	if n := len(fake.CallsTo("POST /channels/{channel}/messages")); n != maxRateLimitRetries+1 {
		t.Fatalf("%d attempts; want %d", n, maxRateLimitRetries+1)
	}

	fake.RateLimit("POST /channels/{channel}/messages", time.Hour, false)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := a.Post(ctx, bots.Target{Channel: chanGeneral}, &bots.Message{Text: "never"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Post during an hour-long rate limit: %v; want the context's deadline", err)
	}
	if msgs := fake.BotMessages(chanGeneral); len(msgs) != 0 {
		t.Fatalf("%d messages posted; want none", len(msgs))
	}
}

// A click on a Components V2 card: the buttons go and the choice joins the
// card as text; the message keeps its flag and carries no content (the
// fake refuses content on a V2 message).
func TestComponentsV2CardClick(t *testing.T) {
	t.Parallel()
	a, fake, fc := start(t, nil)
	fake.AddChannel(discordgo.Channel{ID: chanGeneral, GuildID: discordtest.DefaultGuildID, Type: discordgo.ChannelTypeGuildText})
	entry := uuid.New()
	card := &cards.Stamped{V: 1, Title: "Pick one", Items: []cards.Item{{Title: "Option A"}}, Actions: []cards.Action{{ID: "go", Label: "Go", Kind: cards.ActionSignal}}}
	refs, err := a.Post(context.Background(), bots.Target{Channel: chanGeneral}, &bots.Message{Text: "fallback", Card: &bots.Card{EntryID: entry, Stamped: card}})
	if err != nil {
		t.Fatal(err)
	}
	m := fake.Message(refs[0].ID)
	b := m.Buttons()
	if !m.ComponentsV2() || len(b) != 1 {
		t.Fatalf("flags %d, buttons %+v; want a V2 card with its button", m.Flags, b)
	}
	fake.ClickButton(m.ID, b[0].CustomID, alice)
	fc.waitAction(t, 1)
	fake.Wait(t, "the choice shown on the card", func() bool { return fake.Message(m.ID).Edits > 0 })
	after := fake.Message(m.ID)
	if !after.ComponentsV2() || after.Content != "" || len(after.Buttons()) != 0 ||
		!strings.Contains(strings.Join(after.TextDisplays(), "\n"), "**Go** — chosen by <@"+alice.ID+">") {
		t.Errorf("after the click: flags %d, content %q, buttons %+v, text %q; want the V2 card without buttons and the choice noted", after.Flags, after.Content, after.Buttons(), after.TextDisplays())
	}
}
