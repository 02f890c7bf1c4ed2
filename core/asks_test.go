package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// recordingReplier is a platform's AskReplier: it records each outcome,
// and fails the first failFirst calls as a platform that is down would.
type recordingReplier struct {
	mu        sync.Mutex
	failFirst int
	calls     int
	outcomes  map[string][]core.AskOutcome // by reply
}

func (r *recordingReplier) ReplyAsk(_ context.Context, reply json.RawMessage, out *core.AskOutcome) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls <= r.failFirst {
		return errors.New("platform down")
	}
	if r.outcomes == nil {
		r.outcomes = map[string][]core.AskOutcome{}
	}
	r.outcomes[string(reply)] = append(r.outcomes[string(reply)], *out)
	return nil
}

func (r *recordingReplier) of(reply string) []core.AskOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.AskOutcome(nil), r.outcomes[reply]...)
}

// An ask runs a turn and hands its outcome to the platform's replier once
// it is over: the answer, or the failure people would have seen. The same
// key asked again is a Duplicate that starts nothing; a replier that fails
// is called again until it takes the outcome; an unknown agent is refused
// at once.
func TestAskHandsTheOutcomeBackOnce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		s := &setup{st: st, clock: newClock(), tools: &testTools{}}
		script := "turns:\n  - when_last_user_contains: \"please fail\"\n    failure: {status: 400, message: refused}\n" +
			"fallback:\n  text: \"answer: {{last_user}}\"\n"
		in := s.start(t, script)
		rep := &recordingReplier{failFirst: 1}
		in.svc.SetAskReplier("slack", rep)

		ask := &core.AskParams{Platform: "slack", Key: "Fx1", Text: "What is two and two?", Reply: json.RawMessage(`"fx1"`)}
		res, err := in.svc.Ask(ctx, ask)
		if err != nil || res.Duplicate {
			t.Fatalf("Ask = %+v, %v; want a new ask", res, err)
		}
		if again, err := in.svc.Ask(ctx, ask); err != nil || !again.Duplicate {
			t.Fatalf("the same ask again = %+v, %v; want Duplicate", again, err)
		}
		// The first reply fails (after the turn: the ask's item runs once
		// it is over); its retry waits out a backoff on the service's
		// clock, moved on only now so that no lease of the turn expires.
		waitFor(t, "the first reply", func() bool {
			rep.mu.Lock()
			defer rep.mu.Unlock()
			return rep.calls > 0
		})
		waitFor(t, "the answer handed back", func() bool {
			s.clock.Advance(10 * time.Second)
			return len(rep.of(`"fx1"`)) > 0
		})
		got := rep.of(`"fx1"`)
		if len(got) != 1 || !strings.Contains(got[0].Answer, "What is two and two?") || got[0].Failure != "" || got[0].ConversationID != res.ConversationID {
			t.Fatalf("outcomes %+v; want one answer to the question from conversation %s", got, res.ConversationID)
		}

		if _, err := in.svc.Ask(ctx, &core.AskParams{Platform: "slack", Key: "Fx2", Text: "please fail", Reply: json.RawMessage(`"fx2"`)}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the failure handed back", func() bool { return len(rep.of(`"fx2"`)) > 0 })
		if f := rep.of(`"fx2"`); len(f) != 1 || f[0].Failure == "" || f[0].Answer != "" {
			t.Fatalf("outcomes %+v; want one failure with its reason", f)
		}

		if _, err := in.svc.Ask(ctx, &core.AskParams{Platform: "slack", Key: "Fx3", Agent: "nobody", Text: "hi"}); !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("an ask of an unknown agent: %v; want ErrInvalid", err)
		}
		if _, err := in.svc.Ask(ctx, &core.AskParams{Platform: "slack", Key: "Fx4", Text: " "}); !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("an empty ask: %v; want ErrInvalid", err)
		}
	})
}
