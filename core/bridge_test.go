package core_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// recorder collects the events a bridge call emits.
type recorder struct {
	mu  sync.Mutex
	evs []model.Event
}

func (r *recorder) emit(ev model.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *recorder) kinds() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b []string
	for _, ev := range r.evs {
		s := string(ev.Kind)
		if ev.Text != "" {
			s += "(" + ev.Text + ")"
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

type generated struct {
	resp *model.Response
	err  error
}

func newBridges(t *testing.T, st store.Store, wait, lease time.Duration) *core.Bridges {
	return newBridgesOn(t, st, "instance-a", wait, lease)
}

func newBridgesOn(t *testing.T, st store.Store, instance string, wait, lease time.Duration) *core.Bridges {
	t.Helper()
	b, err := core.NewBridges(core.BridgesOptions{Store: st, Settings: func() config.Bridge { return config.Bridge{Wait: wait, Lease: lease} },
		Poll: 20 * time.Millisecond, Logger: testenv.Logger(t), Instance: instance})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// claimWithin claims for bridge id until a call comes, or fails.
func claimWithin(t *testing.T, b *core.Bridges, id, agent string, within time.Duration) *core.BridgeCall {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		calls, err := b.Claim(context.Background(), id, agent, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) == 1 {
			return calls[0]
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline, as a bridge does
	}
	t.Fatalf("%s claimed nothing within %s", id, within)
	return nil
}

// TestBridgeCall: a call of a bridge agent is claimed by a bridge of that
// agent only, streams its events into the turn, and ends with the
// bridge's response; a bridge that stops heartbeating loses the call to
// the next claim, the turn drops what it streamed, and the old holder's
// reports are refused; with no bridge, the turn gives up after the wait
// and the call is not run later.
func TestBridgeCall(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		agent := &config.Agent{Name: "ada", Model: "claude-code:sonnet", RunsOn: config.RunsOnBridge}

		t.Run("takeover", func(t *testing.T) {
			b := newBridges(t, st, 5*time.Second, time.Second)
			rec := &recorder{}
			done := make(chan generated, 1)
			go func() {
				resp, err := b.Backend(agent).Generate(ctx, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Kind: model.PartText, Text: "hi"}}}}}, rec.emit)
				done <- generated{resp, err}
			}()
			// Another agent's bridge finds nothing.
			if calls, err := b.Claim(ctx, "other-bridge", "bob", 1); err != nil || len(calls) != 0 {
				t.Fatalf("bob's bridge claimed %v, %v; want nothing", calls, err)
			}
			first := claimWithin(t, b, "b1", "ada", 5*time.Second)
			if first.Attempt != 1 || first.Args.Model != "claude-code:sonnet" || first.Args.Request.Messages[0].Parts[0].Text != "hi" {
				t.Fatalf("claimed %+v, want attempt 1 of ada's call with its request", first)
			}
			if err := b.Events(ctx, first.ID, "b1", "bob", 1, nil); !errors.Is(err, core.ErrBridgeAgent) {
				t.Fatalf("events as bob: %v, want ErrBridgeAgent", err)
			}
			if err := b.Events(ctx, first.ID, "b1", "ada", 1, []model.Event{{Kind: model.EventTextDelta, Text: "I was"}}); err != nil {
				t.Fatal(err)
			}
			if err := b.Heartbeat(ctx, first.ID, "b1", "ada"); err != nil {
				t.Fatal(err)
			}
			// b1 dies: no heartbeat; b2 takes the call once the lease expired.
			second := claimWithin(t, b, "b2", "ada", 5*time.Second)
			if second.ID != first.ID || second.Attempt != 2 {
				t.Fatalf("b2 claimed %s attempt %d, want %s attempt 2", second.ID, second.Attempt, first.ID)
			}
			if err := b.Events(ctx, first.ID, "b1", "ada", 1, []model.Event{{Kind: model.EventTextDelta, Text: " late"}}); !errors.Is(err, core.ErrBridgeLeaseLost) {
				t.Fatalf("b1's late events: %v, want ErrBridgeLeaseLost", err)
			}
			if err := b.Heartbeat(ctx, first.ID, "b1", "ada"); !errors.Is(err, core.ErrBridgeLeaseLost) {
				t.Fatalf("b1's heartbeat: %v, want ErrBridgeLeaseLost", err)
			}
			if err := b.Events(ctx, first.ID, "b2", "ada", 2, []model.Event{{Kind: model.EventTextDelta, Text: "Hello"}}); err != nil {
				t.Fatal(err)
			}
			want := &model.Response{Parts: []model.Part{{Kind: model.PartText, Text: "Hello"}}, StopReason: model.StopEndTurn, Usage: model.Usage{InputTokens: 100, OutputTokens: 12}}
			if err := b.Finish(ctx, first.ID, "b1", "ada", 1, want, nil); !errors.Is(err, core.ErrBridgeLeaseLost) {
				t.Fatalf("b1's result: %v, want ErrBridgeLeaseLost", err)
			}
			if err := b.Finish(ctx, first.ID, "b2", "ada", 2, want, nil); err != nil {
				t.Fatal(err)
			}
			var g generated
			select {
			case g = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Generate did not return after the result")
			}
			if g.err != nil || g.resp.Text() != "Hello" || g.resp.Usage.OutputTokens != 12 {
				t.Fatalf("Generate = %+v, %v; want b2's response", g.resp, g.err)
			}
			// The dead attempt's text, then a restart, then the new one's:
			// no late text of b1 in between.
			got := rec.kinds()
			i, j, k := strings.Index(got, "text_delta(I was)"), strings.Index(got, "restart"), strings.Index(got, "text_delta(Hello)")
			if i < 0 || j < i || k < j || strings.Count(got, "restart") != 1 || strings.Contains(got, "late") {
				t.Errorf("events %s: want b1's delta, a restart, then b2's delta only", got)
			}
			it, err := st.WorkGet(ctx, first.ID)
			if err != nil || it.State != store.WorkDone || it.ClaimedBy != core.BridgeWorker("b2") {
				t.Errorf("the call's item is %+v, %v; want done by b2", it, err)
			}
		})

		t.Run("no bridge", func(t *testing.T) {
			b := newBridges(t, st, 300*time.Millisecond, time.Second)
			rec := &recorder{}
			start := time.Now()
			_, err := b.Backend(agent).Generate(ctx, &model.Request{}, rec.emit)
			var bw *core.BridgeWaitError
			if !errors.As(err, &bw) || time.Since(start) < 300*time.Millisecond {
				t.Fatalf("Generate = %v after %s; want a BridgeWaitError after the 300ms wait", err, time.Since(start))
			}
			if !strings.Contains(rec.kinds(), "status(is waiting for the agent's machine…)") {
				t.Errorf("events %s: want the waiting status", rec.kinds())
			}
			// A bridge connecting later does not run the abandoned call.
			if calls, err := b.Claim(ctx, "late", "ada", 1); err != nil || len(calls) != 0 {
				t.Errorf("a late bridge claimed %v, %v; want nothing", calls, err)
			}
		})

		t.Run("another instance", func(t *testing.T) {
			a := newBridgesOn(t, st, "instance-a", 5*time.Second, time.Second)
			other := newBridgesOn(t, st, "instance-b", 5*time.Second, time.Second)
			done := make(chan generated, 1)
			go func() {
				resp, err := a.Backend(agent).Generate(ctx, &model.Request{}, nil)
				done <- generated{resp, err}
			}()
			available := func() []*store.WorkItem {
				items, err := st.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkAvailable}, Kind: core.BridgeKind("ada")})
				if err != nil {
					t.Fatal(err)
				}
				return items
			}
			for deadline := time.Now().Add(5 * time.Second); len(available()) == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the call was never queued")
				}
				time.Sleep(10 * time.Millisecond) // polling with a deadline
			}
			// A bridge connected to instance b sees the call, which a's
			// turn waits for, and gives it back uncounted, many times.
			for range 5 {
				if calls, err := other.Claim(ctx, "b-bridge", "ada", 1); err != nil || len(calls) != 0 {
					t.Fatalf("b's bridge claimed %v, %v; want nothing", calls, err)
				}
				items := available()
				if len(items) != 1 || items[0].Attempts != 0 {
					t.Fatalf("after b's claim the call is %+v, want available with 0 attempts", items)
				}
			}
			c := claimWithin(t, a, "a-bridge", "ada", 5*time.Second)
			if c.Attempt != 1 {
				t.Fatalf("a's bridge claimed attempt %d, want 1", c.Attempt)
			}
			if err := a.Finish(ctx, c.ID, "a-bridge", "ada", 1, &model.Response{Parts: []model.Part{{Kind: model.PartText, Text: "ok"}}}, nil); err != nil {
				t.Fatal(err)
			}
			if g := <-done; g.err != nil || g.resp.Text() != "ok" {
				t.Fatalf("Generate = %+v, %v", g.resp, g.err)
			}
		})

		t.Run("failure", func(t *testing.T) {
			b := newBridges(t, st, 5*time.Second, time.Second)
			done := make(chan generated, 1)
			go func() {
				resp, err := b.Backend(agent).Generate(ctx, &model.Request{}, nil)
				done <- generated{resp, err}
			}()
			c := claimWithin(t, b, "b1", "ada", 5*time.Second)
			if err := b.Finish(ctx, c.ID, "b1", "ada", c.Attempt, nil, &core.BridgeFailure{Provider: "claude-code", Type: model.ErrorTypeNeedsAuth, Message: "not logged in"}); err != nil {
				t.Fatal(err)
			}
			g := <-done
			text, ok := model.Describe(g.err)
			if !ok || !strings.Contains(text, "not logged in") {
				t.Errorf("Generate's error %v reads %q; want the CLI's not-logged-in sentence", g.err, text)
			}
		})
	})
}
