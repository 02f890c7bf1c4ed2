package core_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// syncBuffer is a log sink that the service's goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// fakeAgent points the agent at a fake OpenAI server through the default
// backend (core.NewBackend), with key as its injected credentials.
func fakeAgent(fake *modeltest.Fake, key string) func(*core.Options) {
	return func(o *core.Options) {
		a := &o.Agents.Agents[0]
		a.Model = "openai:gpt-4.1-mini"
		o.Credentials = func(*config.Agent) (model.Credentials, error) {
			return model.Credentials{APIKey: key, BaseURL: fake.URL}, nil
		}
	}
}

// collect gathers a conversation's hub events until its turn ends.
func collect(t *testing.T, events <-chan core.Event) []core.Event {
	t.Helper()
	var out []core.Event
	for {
		select {
		case ev := <-events:
			out = append(out, ev)
			if ev.Kind == core.EventTurnEnd {
				return out
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no turn_end event; got %d events", len(out))
		}
	}
}

// TestModelErrorQuotingTheKey: a provider's 401 that quotes the configured
// key ("Incorrect API key provided: ...") is recorded and published without
// it, and the service log does not carry it either. The log here has no
// redact.Handler: the engine's own redaction is what is tested.
func TestModelErrorQuotingTheKey(t *testing.T) {
	t.Parallel()
	keys := []struct{ name, key string }{
		{"short", "k9x2q"},
		{"openai shaped", "sk-core-t3st"},
		{"long opaque", "core/Test+Key_0123456789abcdefghijklmnopqrstuvwxyz=="},
	}
	for _, tc := range keys {
		t.Run(tc.name, func(t *testing.T) {
			redact.AddSecrets(tc.key) // as app.Open does
			testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
				st := open(t)
				fake := modeltest.NewOpenAI(t)
				fake.Push(modeltest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: " + tc.key + ". You can find your API key at https://platform.openai.com/account/api-keys."})
				logs := &syncBuffer{}
				s := &setup{st: st, clock: newClock(), tools: &testTools{}, configure: func(o *core.Options) {
					fakeAgent(fake, tc.key)(o)
					o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				}}
				in := s.start(t, "turns: []\n")
				conv, err := in.svc.CreateConversation(context.Background(), "", "api", "alice")
				if err != nil {
					t.Fatal(err)
				}
				events, unsubscribe := in.svc.Hub().Subscribe(conv.ID, 1024)
				defer unsubscribe()
				if _, err := in.svc.PostMessage(context.Background(), conv.ID, "alice", "hi"); err != nil {
					t.Fatal(err)
				}
				published := collect(t, events)
				waitStatus(t, s.st, conv.ID, store.ConversationIdle)

				es := entries(t, s.st, conv.ID, true)
				last := es[len(es)-1]
				if last.Kind != store.EntryError || !strings.Contains(string(last.Content), "401") {
					t.Fatalf("log = %s, last = %s; want a 401 error entry", kinds(es), last.Content)
				}
				for _, e := range es {
					if strings.Contains(string(e.Content), tc.key) {
						t.Errorf("%s entry quotes the key: %s", e.Kind, e.Content)
					}
				}
				for _, ev := range published {
					if strings.Contains(ev.Text, tc.key) || (ev.Entry != nil && strings.Contains(string(ev.Entry.Content), tc.key)) {
						t.Errorf("published %s event quotes the key: %+v", ev.Kind, ev)
					}
				}
				if !strings.Contains(logs.String(), "turn failed") {
					t.Errorf("service log lacks the turn failure:\n%s", logs.String())
				}
				if strings.Contains(logs.String(), tc.key) {
					t.Errorf("service log quotes the key:\n%s", logs.String())
				}
			})
		})
	}
}

// TestStalledModelStreamIsRetried: the idle timeout set in Options.Model
// reaches the agent's backend, a stream that stalls mid-answer is retried,
// live viewers are told to drop the partial text, and the reply is the
// retry's.
func TestStalledModelStreamIsRetried(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		fake := modeltest.NewOpenAI(t)
		const text = "Here is the whole answer."
		fake.Push(modeltest.Reply{Text: "Here is half", Stall: true}, modeltest.Reply{Text: text})
		s := &setup{st: st, clock: newClock(), tools: &testTools{}, configure: func(o *core.Options) {
			fakeAgent(fake, "stall-test-key")(o)
			o.Model = model.Options{
				IdleTimeout: 200 * time.Millisecond,
				Retry:       model.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
			}
		}}
		in := s.start(t, "turns: []\n")
		conv, err := in.svc.CreateConversation(context.Background(), "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		events, unsubscribe := in.svc.Hub().Subscribe(conv.ID, 1024)
		defer unsubscribe()
		if _, err := in.svc.PostMessage(context.Background(), conv.ID, "alice", "hi"); err != nil {
			t.Fatal(err)
		}
		var shown strings.Builder
		restarts := 0
		for _, ev := range collect(t, events) {
			switch ev.Kind {
			case core.EventRestart:
				restarts++
				shown.Reset()
			case core.EventDelta:
				shown.WriteString(ev.Text)
			}
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		es := entries(t, s.st, conv.ID, true)
		if got := kinds(es); got != "user,assistant" {
			t.Fatalf("log = %s, want user,assistant", got)
		}
		if final := textOf(t, es[1]); final != text || shown.String() != text || restarts != 1 {
			t.Errorf("final %q, shown %q after %d restarts; want %q after 1", final, shown.String(), restarts, text)
		}
		if n := len(fake.Requests()); n != 2 {
			t.Errorf("made %d model requests, want 2", n)
		}
	})
}
