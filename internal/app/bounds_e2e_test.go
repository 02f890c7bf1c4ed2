package app_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// streamCallGap is the least time between two streaming calls on one Slack
// message.
const streamCallGap = 500 * time.Millisecond

// checkStreamPace fails the test when two chat.appendStream calls on one
// Slack message came less than streamCallGap apart, and returns how many
// were made.
func checkStreamPace(t *testing.T, srv *slacktest.Server) int {
	t.Helper()
	byTS := map[string][]time.Time{}
	appends := 0
	for _, c := range srv.Calls("chat.appendStream") {
		appends++
		ts := c.Params.Get("ts")
		byTS[ts] = append(byTS[ts], c.At)
	}
	for ts, at := range byTS {
		sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap < streamCallGap {
				t.Errorf("message %s: appendStream calls %d and %d came %s apart; want at least %s", ts, i, i+1, gap, streamCallGap)
			}
		}
	}
	return appends
}

// A model that dribbles its answer, never silent long enough for the idle
// timeout, is stopped at SWITCHBOARD_MODEL_TIMEOUT: the person sees one
// clear message in place of the partial text, the call is not retried, and
// the turn lets go of the conversation.
func TestSlackModelDeadline(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		// 10,000 words, one every 20ms: more than three minutes of answer.
		fake.Push(modeltest.Reply{Text: strings.Repeat("drip ", 10000), Delay: 20 * time.Millisecond})
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake), configure: func(c *app.Config) {
			c.ModelTimeout = 2 * time.Second
		}})
		e.mustPost(newEvent("EvDeadline", mention("C0SLOW", "1700000700.000001", "", alice, "take your time")))
		e.waitIdle()
		msgs := e.botMessages("C0SLOW")
		var all []string
		for _, m := range msgs {
			all = append(all, shown(m))
		}
		if len(msgs) != 1 {
			t.Fatalf("%d bot messages %q; want exactly one", len(msgs), all)
		}
		if got := shown(msgs[0]); !strings.HasPrefix(got, "⚠️") || !strings.Contains(got, "longer than 2s") || strings.Contains(got, "drip") {
			t.Fatalf("the reply shows %q; want one clear message that the model took longer than 2s, in place of the partial text", got)
		}
		if msgs[0].Streaming {
			t.Fatal("the stream was left open")
		}
		if n := len(fake.Requests()); n != 1 {
			t.Fatalf("%d model requests; a call stopped at its deadline is not retried", n)
		}
		conv := e.conversation("C0SLOW", "1700000700.000001")
		got, err := e.store.ConversationGet(context.Background(), conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.LeaseOwner != "" || got.Status != store.ConversationIdle {
			t.Fatalf("conversation %s with lease %q; want idle and free", got.Status, got.LeaseOwner)
		}
		es, err := e.store.EntryList(context.Background(), &store.EntryListParams{ConversationID: conv.ID, WithErrors: true})
		if err != nil {
			t.Fatal(err)
		}
		errs := 0
		for _, en := range es {
			if en.Kind == store.EntryError {
				errs++
				if !strings.Contains(string(en.Content), "longer than 2s") {
					t.Errorf("error entry %s; want the deadline named", en.Content)
				}
			}
		}
		if errs != 1 {
			t.Fatalf("%d error entries; want one", errs)
		}
	})
}

// A 50 MB answer in 1 KB deltas stops at SWITCHBOARD_MAX_REPLY_BYTES: the
// model call is cancelled early, the reply is cut with one note, what Slack
// holds is no longer than the cap and the note, and the stream is paced:
// a bounded number of appendStream calls, none within 0.5s of the last on
// the same message.
func TestSlackReplyCap(t *testing.T) {
	t.Parallel()
	const limit = 48 << 10
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		delta := strings.Repeat("all work ", 113) + "no play\n" // 1,024 bytes
		const repeat = 50 << 10                                 // 50 MB in all
		fake.Push(modeltest.Reply{Text: delta, Repeat: repeat})
		var whole atomic.Bool
		fake.OnStreamEnd(func() { whole.Store(true) })
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake), configure: func(c *app.Config) {
			c.MaxReplyBytes = limit
		}})
		e.mustPost(newEvent("EvHuge", mention("C0HUGE", "1700000800.000001", "", alice, "write it all")))
		e.waitIdle()

		if whole.Load() {
			t.Fatal("the fake streamed the whole 50 MB answer; want the model call cancelled at the cap")
		}
		// What the fake wrote ahead into the connection's buffers counts
		// too (a few MB on loopback).
		if sent := fake.TextSent(); sent > 10<<20 {
			t.Fatalf("the fake wrote %d bytes of answer before the call was cancelled; want far less than 50 MB", sent)
		}
		msgs := e.botMessages("C0HUGE")
		total := 0
		var text strings.Builder
		for _, m := range msgs {
			if m.Streaming {
				t.Fatalf("a stream was left open: %s", m.TS)
			}
			total += len(shown(m))
			text.WriteString(shown(m))
		}
		const note = "[reply cut: longer than 48 KB]"
		if n := strings.Count(text.String(), note); n != 1 {
			t.Fatalf("the reply carries the note %d times; want once at its end (%d messages, %d bytes)", n, len(msgs), total)
		}
		if !strings.HasSuffix(strings.TrimSpace(text.String()), note) {
			t.Fatalf("the reply ends %q; want the note last", tail(text.String(), 80))
		}
		if total > limit+len(note)+16 {
			t.Fatalf("Slack holds %d bytes of reply; want at most the cap (%d) and the note", total, limit)
		}
		appends := checkStreamPace(t, e.slack)
		if max := limit/12000 + 4; appends > max {
			t.Fatalf("%d appendStream calls; want at most %d for a %d-byte reply", appends, max, limit)
		}
		t.Logf("model wrote %d bytes before the cancel; Slack holds %d bytes in %d messages after %d appendStream calls", fake.TextSent(), total, len(msgs), appends)
		conv := e.conversation("C0HUGE", "1700000800.000001")
		es, err := e.store.EntryList(context.Background(), &store.EntryListParams{ConversationID: conv.ID, WithErrors: true})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, en := range es {
			kinds = append(kinds, string(en.Kind))
			if en.Kind == store.EntryAssistant && len(en.Content) > limit+1024 {
				t.Fatalf("the stored reply is %d bytes; want it cut at the cap", len(en.Content))
			}
		}
		if got := strings.Join(kinds, ","); got != "user,assistant" {
			t.Fatalf("log %s; want user,assistant", got)
		}
	})
}

// A reply streamed in many quick deltas reaches Slack in few calls: no
// more than one streaming call per 0.5s on a message, and the whole text.
func TestSlackStreamIsPaced(t *testing.T) {
	t.Parallel()
	fake := modeltest.NewAnthropic(t)
	var words []string
	for i := range 80 {
		words = append(words, fmt.Sprintf("w%02d%s", i, strings.Repeat("x", 300)))
	}
	text := strings.Join(words, " ")
	fake.Push(modeltest.Reply{Text: text, Delay: 25 * time.Millisecond})
	e := startSlack(t, sqliteDatabase(t), envOptions{env: anthropicEnv(fake)})
	e.mustPost(newEvent("EvPaced", mention("C0PACE", "1700000900.000001", "", alice, "go on")))
	e.waitIdle()
	msgs := e.botMessages("C0PACE")
	if len(msgs) != 1 || shown(msgs[0]) != text || msgs[0].Streaming {
		t.Fatalf("%d bot messages; want one showing the whole reply, stream stopped", len(msgs))
	}
	if appends := checkStreamPace(t, e.slack); appends > 8 {
		t.Fatalf("%d appendStream calls for a reply streamed over about 2s in 80 deltas; want a handful", appends)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// A failed model call shows people a classified sentence, never the text
// of a library or of the provider's error body; that goes to the log.
func TestSlackModelErrorsAreClassified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		replies []modeltest.Reply
		want    string
	}{
		{
			// One SSE line longer than the SDK's 32 MB scanner buffer.
			name:    "answer too large to read",
			replies: []modeltest.Reply{{Text: strings.Repeat("x", 33<<20), Repeat: 1}},
			want:    "answer was too large",
		},
		{
			name:    "key refused",
			replies: []modeltest.Reply{{Status: 401, ErrorType: "authentication_error", ErrorMessage: "Incorrect API key provided: nope"}},
			want:    "refused the key",
		},
		{
			name: "provider overloaded",
			replies: []modeltest.Reply{
				{Status: 529, ErrorMessage: "Overloaded"}, {Status: 529, ErrorMessage: "Overloaded"}, {Status: 529, ErrorMessage: "Overloaded"},
			},
			want: "provider is unavailable",
		},
	}
	library := []string{"bufio", "Scanner", "token too long", "anthropic:", "Incorrect API key", "Overloaded", "overloaded_error", "authentication_error", "calling "}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := modeltest.NewAnthropic(t)
			fake.Push(tt.replies...)
			e := startSlack(t, sqliteDatabase(t), envOptions{env: anthropicEnv(fake)})
			ch := fmt.Sprintf("C0ERR%d", i)
			e.mustPost(newEvent(fmt.Sprintf("EvErr%d", i), mention(ch, fmt.Sprintf("1700001000.%06d", i), "", alice, "hello")))
			e.waitIdle()
			msgs := e.botMessages(ch)
			if len(msgs) != 1 {
				t.Fatalf("%d bot messages; want one", len(msgs))
			}
			got := shown(msgs[0])
			if !strings.HasPrefix(got, "⚠️") || !strings.Contains(got, tt.want) {
				t.Fatalf("the reply shows %q; want a classified error saying %q", got, tt.want)
			}
			for _, bad := range library {
				if strings.Contains(got, bad) {
					t.Fatalf("the reply shows %q, which carries library or provider text %q", got, bad)
				}
			}
		})
	}
}
