package slack

import (
	"context"
	"net/http"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

func TestStreamNative(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	to := bots.Target{Channel: "C1", Thread: "1700000000.000001", UserID: "U1", Workspace: "T0FAKE"}
	st, err := env.a.StartStream(ctx, to, &bots.Identity{Name: "Helper"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(env.srv.Calls()); n != 1 { // auth.test only: the stream starts with text
		t.Fatalf("StartStream made %d calls before any text, want none", n-1)
	}
	if err := st.Append(ctx, "Hello "); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, "there"); err != nil { // buffered: too soon, too short
		t.Fatal(err)
	}
	env.clock.Advance(1100 * time.Millisecond)
	if err := st.Append(ctx, ", **friend**"); err != nil {
		t.Fatal(err)
	}
	refs, err := st.Finish(ctx, &bots.Message{Text: "Hello there, **friend**. Done.", Buttons: []bots.Button{{ActionID: "fb", Value: "up", Label: "👍"}}})
	if err != nil {
		t.Fatal(err)
	}

	start := env.srv.Calls("chat.startStream")
	if len(start) != 1 || start[0].Params.Get("markdown_text") != "Hello " || start[0].Params.Get("thread_ts") != to.Thread ||
		start[0].Params.Get("recipient_user_id") != "U1" || start[0].Params.Get("recipient_team_id") != "T0FAKE" || start[0].Params.Get("username") != "Helper" {
		t.Fatalf("startStream calls %+v, want one with the first text, thread, recipient and identity", start)
	}
	appends := env.srv.Calls("chat.appendStream")
	if len(appends) != 1 || appends[0].Params.Get("markdown_text") != "there, **friend**" {
		t.Fatalf("appendStream calls %+v, want one carrying the buffered text", appends)
	}
	stop := env.srv.Calls("chat.stopStream")
	if len(stop) != 1 || stop[0].Params.Get("markdown_text") != ". Done." || !strings.Contains(stop[0].Params.Get("blocks"), `"action_id":"fb"`) {
		t.Fatalf("stopStream calls %+v, want the rest of the text and the buttons", stop)
	}
	msg, _ := env.srv.Message("C1", refs[0].ID)
	if len(refs) != 1 || msg.Markdown != "Hello there, **friend**. Done." || msg.Streaming {
		t.Fatalf("streamed message %+v (refs %+v), want the whole final text, stopped", msg, refs)
	}
	if n := len(env.srv.Calls("chat.postMessage", "chat.update")); n != 0 {
		t.Fatalf("native stream also made %d post/update calls", n)
	}
}

func TestStreamNativeFinalDiffers(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	st, _ := env.a.StartStream(ctx, bots.Target{Channel: "D1", Thread: "1.0"}, nil) // a DM needs no recipient
	if err := st.Append(ctx, "draft answer"); err != nil {
		t.Fatal(err)
	}
	refs, err := st.Finish(ctx, &bots.Message{Text: "**final** answer"})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := env.srv.Message("D1", refs[0].ID)
	if msg.Streaming || msg.Text != "*final* answer" {
		t.Fatalf("message %+v, want the stream stopped and replaced by the final mrkdwn", msg)
	}
}

func TestStreamFallback(t *testing.T) {
	tests := []struct {
		name   string
		to     bots.Target
		fail   bool
		starts int
	}{
		{"startStream fails", bots.Target{Channel: "C1", Thread: "1.0", UserID: "U1", Workspace: "T0FAKE"}, true, 1},
		{"no recipient outside a DM", bots.Target{Channel: "C1", Thread: "1.0"}, false, 0},
		{"no thread", bots.Target{Channel: "C1"}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, nil)
			if tt.fail {
				env.srv.Fail("chat.startStream", slacktest.Fault{Error: "not_allowed"})
			}
			ctx := context.Background()
			st, err := env.a.StartStream(ctx, tt.to, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range []string{"Hel", "lo", " wor", "ld"} {
				if i == 2 {
					env.clock.Advance(time.Second)
				}
				if err := st.Append(ctx, d); err != nil {
					t.Fatalf("Append %q: %v", d, err)
				}
			}
			refs, err := st.Finish(ctx, &bots.Message{Text: "Hello **world**"})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(env.srv.Calls("chat.startStream")); n != tt.starts {
				t.Fatalf("startStream called %d times, want %d", n, tt.starts)
			}
			posts, updates := env.srv.Calls("chat.postMessage"), env.srv.Calls("chat.update")
			// One post for "Hel", one throttled edit after a second, one final edit.
			if len(posts) != 1 || len(updates) != 2 || updates[0].Params.Get("text") != "Hello wor" {
				t.Fatalf("%d posts and updates %+v, want 1 post then edits \"Hello wor\" and the final text", len(posts), updates)
			}
			msg, _ := env.srv.Message("C1", refs[0].ID)
			if len(refs) != 1 || msg.Text != "Hello *world*" || msg.ThreadTS != tt.to.Thread {
				t.Fatalf("final message %+v (refs %+v), want one message with the final mrkdwn in the thread", msg, refs)
			}
		})
	}
}

func TestStreamFallbackGrowsAndShrinks(t *testing.T) {
	env := newEnv(t, func(o *Options) { o.TextLimit = 100 })
	ctx := context.Background()
	st, _ := env.a.StartStream(ctx, bots.Target{Channel: "C1", Thread: "1.0"}, nil)
	for range 5 {
		if err := st.Append(ctx, strings.Repeat("word ", 12)+"\n"); err != nil {
			t.Fatal(err)
		}
		env.clock.Advance(time.Second)
	}
	if n := len(env.srv.Messages("C1")); n < 3 {
		t.Fatalf("a 300-character stream with a 100-character limit made %d messages, want ≥3", n)
	}
	refs, err := st.Finish(ctx, &bots.Message{Text: "Short in the end."})
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, m := range env.srv.Messages("C1") {
		if !m.Deleted {
			live++
		}
	}
	if len(refs) != 1 || live != 1 {
		t.Fatalf("after a shorter final: refs %+v, %d messages left, want exactly one", refs, live)
	}
}

func TestStreamNothingAppended(t *testing.T) {
	env := newEnv(t, nil)
	ctx := context.Background()
	st, _ := env.a.StartStream(ctx, bots.Target{Channel: "C1", Thread: "1.0", UserID: "U1", Workspace: "T0FAKE"}, nil)
	refs, err := st.Finish(ctx, &bots.Message{Text: "answer"})
	if err != nil || len(refs) != 1 {
		t.Fatalf("Finish without deltas = %+v, %v; want one posted message", refs, err)
	}
	if n := len(env.srv.Calls("chat.startStream")); n != 0 {
		t.Fatalf("startStream called %d times for a reply with no deltas", n)
	}
}

// callClock records when, on the adapter's clock, each Slack method was
// called.
type callClock struct {
	clock *clock
	next  http.RoundTripper
	mu    sync.Mutex
	at    map[string][]time.Time
}

func (c *callClock) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.clock != nil { // set once the adapter has started
		m := path.Base(r.URL.Path)
		c.at[m] = append(c.at[m], c.clock.Now())
	}
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// Deltas that come faster than StreamUpdateInterval go out together, one
// call per interval at most, each within Slack's per-call limit; Finish
// sends what is left at the same pace, and nothing is lost.
func TestStreamNativeIsPaced(t *testing.T) {
	var env *testEnv
	calls := &callClock{next: http.DefaultTransport, at: map[string][]time.Time{}}
	env = newEnv(t, func(o *Options) {
		o.SleepFunc = func(ctx context.Context, d time.Duration) error {
			env.clock.Advance(d)
			return ctx.Err()
		}
		o.HTTPClient = &http.Client{Transport: calls}
	})
	calls.mu.Lock()
	calls.clock = env.clock
	calls.mu.Unlock()
	ctx := context.Background()
	to := bots.Target{Channel: "D1", Thread: "1700000000.000001"}
	st, err := env.a.StartStream(ctx, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	delta := strings.Repeat("abcdefg ", 127) + "z\n" // 1 KB
	var want strings.Builder
	for range 100 { // 100 KB over 2 seconds
		want.WriteString(delta)
		if err := st.Append(ctx, delta); err != nil {
			t.Fatal(err)
		}
		env.clock.Advance(20 * time.Millisecond)
	}
	refs, err := st.Finish(ctx, &bots.Message{Text: want.String()})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := env.srv.Message("D1", refs[0].ID)
	if len(refs) != 1 || msg.Markdown != want.String() || msg.Streaming {
		t.Fatalf("%d messages, %d of %d bytes shown; want the whole reply in one stopped message", len(refs), len(msg.Markdown), want.Len())
	}
	appends := env.srv.Calls("chat.appendStream")
	// 100 KB needs 9 calls of 12,000 characters; two seconds of streaming
	// allow two more, one a second.
	if len(appends) > 10 {
		t.Fatalf("%d appendStream calls for 100 deltas; want them batched", len(appends))
	}
	calls.mu.Lock()
	defer calls.mu.Unlock()
	at := append(calls.at["chat.startStream"], calls.at["chat.appendStream"]...)
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < time.Second {
			t.Fatalf("calls %d and %d on one message came %s apart; want at least StreamUpdateInterval (1s)", i, i+1, gap)
		}
	}
	if stops := calls.at["chat.stopStream"]; len(stops) != 1 || stops[0].Before(at[len(at)-1]) {
		t.Fatalf("chat.stopStream at %v; want once, after the last append", stops)
	}
}
