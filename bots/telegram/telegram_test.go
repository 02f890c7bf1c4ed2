package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/internal/telegramtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// submitter records what the adapter hands core.
type submitter struct {
	mu      sync.Mutex
	in      []*core.Inbound
	acts    []*core.Action
	refuse  string
	seen    map[string]bool
	failing int
}

func (s *submitter) Submit(_ context.Context, in *core.Inbound) (*core.SubmitResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing > 0 {
		s.failing--
		return nil, errors.New("store unreachable")
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[in.EventID] {
		return &core.SubmitResult{Duplicate: true}, nil
	}
	s.seen[in.EventID] = true
	s.in = append(s.in, in)
	if s.refuse != "" {
		return &core.SubmitResult{Refused: true, Notice: s.refuse}, nil
	}
	return &core.SubmitResult{ConversationID: uuid.New()}, nil
}

func (s *submitter) Act(_ context.Context, a *core.Action) (*core.ActionResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acts = append(s.acts, a)
	return &core.ActionResult{}, nil
}

func (s *submitter) inbound() []*core.Inbound {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*core.Inbound(nil), s.in...)
}

func start(t *testing.T, fake *telegramtest.Server, sub core.Submitter, mod func(*Options)) *Adapter {
	t.Helper()
	o := Options{Token: fake.Token, APIURL: fake.URL, Submitter: sub, PollTimeout: time.Second}
	if mod != nil {
		mod(&o)
	}
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	return a
}

var alice = telegramtest.User{ID: 42, FirstName: "Alice"}

func TestOptionsNameTheSetting(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Token: "nope", Submitter: &submitter{}}, "Options.Token"},
		{Options{Token: "123:abcdefghij", Submitter: &submitter{}, APIURL: "ftp://x"}, "Options.APIURL"},
		{Options{Token: "123:abcdefghij", Submitter: &submitter{}, WebhookURL: "http://example.com/hook", WebhookSecret: "0123456789abcdef"}, "https"},
		{Options{Token: "123:abcdefghij", Submitter: &submitter{}, WebhookURL: "https://example.com/hook", WebhookSecret: "short!"}, "Options.WebhookSecret"},
		{Options{Token: "123:abcdefghij"}, "Options.Submitter"},
	} {
		_, err := New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.o, err, tc.want)
		}
	}
}

func TestCallbackDataFitsAndRoundTrips(t *testing.T) {
	ap := core.ApprovalActionID(uuid.New())
	card := cards.ActionID(uuid.New(), strings.Repeat("a", cards.MaxActionIDLen))
	for _, tc := range []struct{ action, value string }{
		{ap, core.ChoiceAlwaysAllowArgs}, {ap, "3"}, {card, ""}, {"short", "v:with:colons"}, {"", ""},
	} {
		data, err := encodeCallback(tc.action, tc.value)
		if err != nil {
			t.Fatalf("encodeCallback(%q, %q): %v", tc.action, tc.value, err)
		}
		if len(data) > MaxCallbackData {
			t.Errorf("callback_data %q is %d bytes, over 64", data, len(data))
		}
		if a, v := decodeCallback(data); a != tc.action || v != tc.value {
			t.Errorf("decodeCallback(%q) = %q, %q; want %q, %q", data, a, v, tc.action, tc.value)
		}
	}
	if _, err := encodeCallback(strings.Repeat("x", 70), ""); !errors.Is(err, ErrButtons) {
		t.Errorf("an action id of 70 bytes encoded without error (%v); want ErrButtons", err)
	}
}

func TestSplitKeepsPartsWithinLimitsAndFencesClosed(t *testing.T) {
	var b strings.Builder
	b.WriteString("intro 😀 with emoji that count twice in UTF-16\n\n```python\n")
	for i := range 400 {
		fmt.Fprintf(&b, "print('line %d <b> & stuff')\n", i)
	}
	b.WriteString("```\n\n")
	b.WriteString(strings.Repeat("word ", 1500))
	parts := split(b.String(), MaxMessageChars)
	if len(parts) < 3 {
		t.Fatalf("split into %d parts, want at least 3", len(parts))
	}
	for i, p := range parts {
		if n := utf16Len(p); n > MaxMessageChars {
			t.Errorf("part %d is %d UTF-16 units, over %d", i, n, MaxMessageChars)
		}
		if strings.Count(p, "```")%2 != 0 {
			t.Errorf("part %d leaves a code fence open: ...%q", i, p[max(0, len(p)-40):])
		}
	}
}

// TestPostsReadAsTelegramReadsThem: Markdown the model writes reaches the
// (fake) Bot API as HTML Telegram parses, whatever it holds.
func TestPostsReadAsTelegramReadsThem(t *testing.T) {
	fake := telegramtest.NewServer(t)
	a := start(t, fake, &submitter{}, nil)
	chat := telegramtest.Private(alice)
	fake.UserMessage(telegramtest.Send{Chat: chat, From: alice, Text: "hi"}) // the chat exists
	to := bots.Target{Platform: Platform, Channel: "42"}
	for md, shown := range map[string]string{
		"**bold** and _it_ and `a<b>&c` and [link](https://x.test/?a=1&b=2)": "bold and it and a<b>&c and link",
		"# Title\n- one\n- two\n> quoted":                                    "Title\n• one\n• two\nquoted",
		"unclosed **bold and 3 < 4 > 2 & <script>":                           "unclosed **bold and 3 < 4 > 2 & <script>",
		"snake_case_name and *x*":                                            "snake_case_name and x",
		"```go\nfmt.Println(\"<hi>\")\n```":                                  "fmt.Println(\"<hi>\")",
	} {
		refs, err := a.Post(t.Context(), to, &bots.Message{Text: md})
		if err != nil || len(refs) != 1 {
			t.Fatalf("Post(%q) = %v, %v", md, refs, err)
		}
		msgs := fake.BotMessages(42)
		if got := msgs[len(msgs)-1].Text; got != shown {
			t.Errorf("Post(%q) shows %q, want %q", md, got, shown)
		}
	}
}

// TestCantParseFallsBackToPlainText: a message Telegram cannot parse goes
// out again as plain text.
func TestCantParseFallsBackToPlainText(t *testing.T) {
	fake := telegramtest.NewServer(t)
	a := start(t, fake, &submitter{}, nil)
	fake.UserMessage(telegramtest.Send{Chat: telegramtest.Private(alice), From: alice, Text: "hi"})
	fake.Fail("sendmessage", telegramtest.Fault{Code: 400, Description: "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 3"})
	if _, err := a.Post(t.Context(), bots.Target{Channel: "42"}, &bots.Message{Text: "**hi**"}); err != nil {
		t.Fatal(err)
	}
	msgs := fake.BotMessages(42)
	if len(msgs) != 1 || msgs[0].Text != "**hi**" || msgs[0].ParseMode != "" {
		t.Fatalf("after a parse error the chat shows %+v; want the plain text once", msgs)
	}
}

// TestRefusalsAndRateLimits: 403 and a missing chat are refusals; a 429
// is waited out and the message sent once.
func TestRefusalsAndRateLimits(t *testing.T) {
	fake := telegramtest.NewServer(t)
	a := start(t, fake, &submitter{}, nil)
	fake.UserMessage(telegramtest.Send{Chat: telegramtest.Private(alice), From: alice, Text: "hi"})
	if _, err := a.Post(t.Context(), bots.Target{Channel: "777"}, &bots.Message{Text: "x"}); !errors.Is(err, bots.ErrRefused) {
		t.Errorf("posting to a missing chat: %v, want a refusal", err)
	}
	fake.Fail("sendmessage", telegramtest.Fault{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	if _, err := a.Post(t.Context(), bots.Target{Channel: "42"}, &bots.Message{Text: "x"}); !errors.Is(err, bots.ErrRefused) {
		t.Errorf("posting to a chat that blocked the bot: %v, want a refusal", err)
	}
	fake.Fail("sendmessage", telegramtest.TooManyRequests(1))
	begin := time.Now()
	if _, err := a.Post(t.Context(), bots.Target{Channel: "42"}, &bots.Message{Text: "after the wait"}); err != nil {
		t.Fatalf("posting after a 429: %v", err)
	}
	if d := time.Since(begin); d < time.Second {
		t.Errorf("the post after a 429 with retry_after 1 went out after %s", d)
	}
	if n := len(fake.BotMessages(42)); n != 1 {
		t.Errorf("the chat has %d bot messages, want 1", n)
	}
}

// TestStreamEditsOneMessage: a stream is one message edited within the
// chat's pace, finished with the final text and its buttons; a resumed
// stream edits the same message.
func TestStreamEditsOneMessage(t *testing.T) {
	fake := telegramtest.NewServer(t)
	a := start(t, fake, &submitter{}, nil)
	fake.UserMessage(telegramtest.Send{Chat: telegramtest.Private(alice), From: alice, Text: "hi"})
	to := bots.Target{Platform: Platform, Channel: "42"}
	s, err := a.StartStream(t.Context(), to, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		if err := s.Append(t.Context(), fmt.Sprintf("w%d ", i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the model's pace
	}
	refs := s.Refs()
	if len(refs) != 1 {
		t.Fatalf("the stream made %d messages, want 1", len(refs))
	}
	// Another process takes the stream over (a restart) and finishes it.
	r, err := a.ResumeStream(t.Context(), to, refs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Reset(t.Context()); err != nil {
		t.Fatal(err)
	}
	final := &bots.Message{Text: "The whole answer.", Buttons: []bots.Button{{ActionID: core.ApprovalActionID(uuid.New()), Value: "0", Label: "OK"}}}
	got, err := r.Finish(t.Context(), final)
	if err != nil {
		t.Fatal(err)
	}
	// The first stream's trailing edit, if any, must not land after.
	if _, err := s.Finish(t.Context(), final); err != nil {
		t.Fatal(err)
	}
	msgs := fake.BotMessages(42)
	if len(msgs) != 1 || len(got) != 1 || got[0] != refs[0] {
		t.Fatalf("the chat has %d bot messages (finish refs %v); want the one streamed message %v", len(msgs), got, refs)
	}
	if msgs[0].Text != "The whole answer." || msgs[0].Keyboard == nil {
		t.Errorf("the message reads %q with keyboard %v; want the final text and its button", msgs[0].Text, msgs[0].Keyboard)
	}
	times := append([]time.Time{msgs[0].SentAt}, msgs[0].EditTimes...)
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 900*time.Millisecond {
			t.Errorf("edits %d and %d are %s apart, under the chat's pace of one a second", i-1, i, gap)
		}
	}
}

// TestWebhookChecksTheSecret: an update without the secret is refused;
// with it, it reaches core once however often Telegram sends it.
func TestWebhookChecksTheSecret(t *testing.T) {
	fake := telegramtest.NewServer(t)
	sub := &submitter{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	const secret = "s3cret-token_of-enough-length"
	a := start(t, fake, sub, func(o *Options) { o.WebhookURL, o.WebhookSecret = srv.URL+WebhookPath, secret })
	a.Routes(mux)
	if u, s := fake.Webhook(); u != srv.URL+WebhookPath || s != secret {
		t.Fatalf("the webhook set is %q with secret %q", u, s)
	}
	body := `{"update_id": 9, "message": {"message_id": 1, "date": 1, "chat": {"id": 42, "type": "private"}, "from": {"id": 42, "is_bot": false, "first_name": "Alice"}, "text": "hi"}}`
	for _, tc := range []struct {
		secret string
		want   int
	}{{"", 401}, {"wrong", 401}, {secret, 200}, {secret, 200}} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+WebhookPath, strings.NewReader(body))
		if tc.secret != "" {
			req.Header.Set(SecretHeader, tc.secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("an update with secret %q answered %d, want %d", tc.secret, resp.StatusCode, tc.want)
		}
	}
	if n := len(sub.inbound()); n != 1 {
		t.Errorf("core got %d messages, want the update once", n)
	}
	// Updates Telegram pushes reach core too.
	fake.UserMessage(telegramtest.Send{Chat: telegramtest.Private(alice), From: alice, Text: "pushed"})
	fake.Wait(t, "the pushed update handled", func() bool { return fake.PendingUpdates() == 0 })
	if in := sub.inbound(); len(in) != 2 || in[1].Text != "pushed" || !in[1].IsDM || !in[1].Mentioned {
		t.Errorf("core got %+v; want the pushed DM", in)
	}
}

// lease is an in-memory Poller shared by adapters.
type lease struct {
	mu    sync.Mutex
	owner string
}

type leaseOf struct {
	l  *lease
	me string
}

func (p leaseOf) Lead(context.Context) (bool, error) {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	if p.l.owner == "" || p.l.owner == p.me {
		p.l.owner = p.me
		return true, nil
	}
	return false, nil
}

func (p leaseOf) Release(context.Context) error {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	if p.l.owner == p.me {
		p.l.owner = ""
	}
	return nil
}

// TestOnePollerAndTakeover: of two adapters only the lease holder polls
// (no 409 Conflict); when it stops, the other takes over and no update is
// lost or handled twice, even one the first handled without confirming.
func TestOnePollerAndTakeover(t *testing.T) {
	fake := telegramtest.NewServer(t)
	l := &lease{}
	sub := &submitter{}
	first, err := New(Options{Token: fake.Token, APIURL: fake.URL, Submitter: sub, PollTimeout: time.Second, Poller: leaseOf{l, "one"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	fake.Wait(t, "the first adapter to poll", func() bool { return len(fake.Calls("getupdates")) > 0 })
	second := start(t, fake, sub, func(o *Options) { o.Poller = leaseOf{l, "two"} })
	chat := telegramtest.Private(alice)
	for i := range 3 {
		fake.UserMessage(telegramtest.Send{Chat: chat, From: alice, Text: fmt.Sprintf("m%d", i)})
	}
	fake.Wait(t, "three messages handled", func() bool { return len(sub.inbound()) == 3 })
	first.Stop()
	for i := 3; i < 6; i++ {
		fake.UserMessage(telegramtest.Send{Chat: chat, From: alice, Text: fmt.Sprintf("m%d", i)})
	}
	fake.Wait(t, "the second adapter to handle the rest", func() bool { return len(sub.inbound()) == 6 })
	for i, in := range sub.inbound() {
		if in.Text != fmt.Sprintf("m%d", i) {
			t.Errorf("message %d reached core as %q, want m%d (in order, once)", i, in.Text, i)
		}
	}
	for _, c := range fake.Calls("getupdates") {
		if c.Status == http.StatusConflict {
			t.Errorf("a getUpdates was answered 409: two adapters polled at once")
		}
	}
	_ = second
}

// TestMentionsAndThreads: what is addressed to the bot, and where its
// answer goes.
func TestMentionsAndThreads(t *testing.T) {
	fake := telegramtest.NewServer(t)
	sub := &submitter{}
	start(t, fake, sub, nil)
	group := telegramtest.Supergroup(-1009, "g")
	forum := telegramtest.Forum(-1010, "f")
	m1 := fake.UserMessage(telegramtest.Send{Chat: group, From: alice, Text: "no mention here"})
	m2 := fake.UserMessage(telegramtest.Send{Chat: group, From: alice, Text: "hey @" + telegramtest.BotUsername + " what's up"})
	fake.UserMessage(telegramtest.Send{Chat: group, From: alice, Text: "in reply", ReplyTo: m2.ID})
	fake.UserMessage(telegramtest.Send{Chat: forum, From: alice, Text: "@" + strings.ToUpper(telegramtest.BotUsername) + " topic", Topic: 5})
	fake.Wait(t, "four messages handled", func() bool { return len(sub.inbound()) == 4 })
	in := sub.inbound()
	for i, want := range []struct {
		text, thread string
		mentioned    bool
	}{
		{"no mention here", fmt.Sprint(m1.ID), false},
		{"hey what's up", fmt.Sprint(m2.ID), true},
		{"in reply", fmt.Sprint(m2.ID), false},
		{"topic", "topic:5", true},
	} {
		if in[i].Text != want.text || in[i].Thread != want.thread && want.mentioned || in[i].Mentioned != want.mentioned {
			t.Errorf("message %d reached core as text %q thread %q mentioned %v; want %q, %q, %v", i, in[i].Text, in[i].Thread, in[i].Mentioned, want.text, want.thread, want.mentioned)
		}
	}
}
