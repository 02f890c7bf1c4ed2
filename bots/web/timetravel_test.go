package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// stateOut is GET /api/conversations/{id}[?at=N] as the time-travel test
// reads it.
type stateOut struct {
	conversationOut
	At        int64              `json:"at"`
	Approvals []web.ApprovalJSON `json:"approvals"`
}

// TestConversationStateAt: GET /api/conversations/{id}?at=N answers the
// status, the pending calls and the approvals as they were when entry N was
// written, rebuilt by replay of the log up to N: a risky call waits for a
// person (paused, its approval pending) from the seq of its call until its
// result, though the approval row has been decided since; before the call
// a turn was under way (running); after the reply the conversation is idle.
// A bad at is refused with 400 naming at.
func TestConversationStateAt(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		register := func(r *tool.Registry) {
			tool.MustRegister(r, tool.Def{Name: "delete_everything", Description: "risky", Risk: tool.RiskHigh},
				func(ctx context.Context, _ *tool.Request, in struct {
					Target string `json:"target"`
				}) (map[string]string, error) {
					return map[string]string{"deleted": in.Target}, nil
				})
		}
		s := startWith(t, st, newClock(), writeScript(t, `
turns:
  - after_tool: delete_everything
    text: "Done."
  - tool_calls:
      - {name: delete_everything, input: {target: prod}}
`), web.Options{}, register)
		conv := s.create(t)
		s.post(t, conv, "clean up")
		waitStatus(t, st, conv, store.ConversationPaused)
		paused := s.get(t, conv)
		if len(paused.PendingCalls) != 1 {
			t.Fatalf("pending calls %+v; want the risky call", paused.PendingCalls)
		}
		call := paused.PendingCalls[0]
		ap, err := st.ApprovalFindByCall(context.Background(), &store.ApprovalFindByCallParams{ConversationID: conv, CallID: call.CallID})
		if err != nil {
			t.Fatal(err)
		}
		s.mustCall(t, http.MethodPost, "/api/approvals/"+ap.ID.String(), `{"choice": "approve"}`, http.StatusOK, nil)
		waitStatus(t, st, conv, store.ConversationIdle)

		log := s.entries(t, conv, "?errors=0")
		var resultSeq int64
		for _, e := range log {
			if e.Kind == "tool_result" {
				resultSeq = e.seqValue()
			}
		}
		last := log[len(log)-1].seqValue()
		if resultSeq == 0 || resultSeq <= call.Seq || last <= resultSeq {
			t.Fatalf("log %s; want the call, its result and a reply after it", kindsOf(log))
		}
		for n := int64(1); n <= last; n++ {
			var got stateOut
			s.mustCall(t, http.MethodGet, fmt.Sprintf("/api/conversations/%s?at=%d", conv, n), "", http.StatusOK, &got)
			if got.At != n || got.LastSeq != last {
				t.Fatalf("at=%d: answered at %d, last_seq %d; want at %d and the conversation's last seq %d", n, got.At, got.LastSeq, n, last)
			}
			switch {
			case n < call.Seq: // the person's message, not answered yet
				if got.Status != "running" || len(got.PendingCalls) != 0 || len(got.Approvals) != 0 {
					t.Fatalf("at=%d (before the call): %s, %+v, %+v; want running, nothing pending", n, got.Status, got.PendingCalls, got.Approvals)
				}
			case n < resultSeq: // the call waits for the person
				if got.Status != "paused" || len(got.PendingCalls) != 1 || got.PendingCalls[0].CallID != call.CallID ||
					got.PendingCalls[0].WaitingFor != "person" {
					t.Fatalf("at=%d (call waiting): %s, %+v; want paused on the call, waiting for a person", n, got.Status, got.PendingCalls)
				}
				if len(got.Approvals) != 1 || got.Approvals[0].ID != ap.ID.String() || got.Approvals[0].Status != "pending" || got.Approvals[0].DecidedBy != "" {
					t.Fatalf("at=%d (call waiting): approvals %+v; want the approval as it was then: pending, decided by nobody", n, got.Approvals)
				}
			case n < last: // the result is in; the reply is owed
				if got.Status != "running" || len(got.PendingCalls) != 0 || len(got.Approvals) != 0 {
					t.Fatalf("at=%d (after the result): %s, %+v, %+v; want running, nothing pending", n, got.Status, got.PendingCalls, got.Approvals)
				}
			default:
				if got.Status != "idle" || len(got.PendingCalls) != 0 || len(got.Approvals) != 0 {
					t.Fatalf("at=%d (the reply): %s, %+v, %+v; want idle, nothing pending", n, got.Status, got.PendingCalls, got.Approvals)
				}
			}
		}
		// Without at: the state now.
		if now := s.get(t, conv); now.Status != "idle" || len(now.PendingCalls) != 0 {
			t.Fatalf("now: %s, %+v; want idle", now.Status, now.PendingCalls)
		}
		for _, bad := range []string{"0", "-1", "1.5", "two", "", fmt.Sprint(last + 1)} {
			code, raw := s.call(t, http.MethodGet, fmt.Sprintf("/api/conversations/%s?at=%s", conv, bad), "", nil, nil)
			if bad == "" {
				// ?at= with no value is no time travel.
				if code != http.StatusOK {
					t.Fatalf("at= (empty) = %d %s; want 200, the state now", code, raw)
				}
				continue
			}
			if code != http.StatusBadRequest || !strings.Contains(raw, "at") {
				t.Fatalf("at=%s = %d %s; want 400 naming at", bad, code, raw)
			}
		}
	})
}

// TestConversationStateAtWhileACallRuns: an approval decided before entry N
// was written shows its decision at N, and its call as running on the
// server: a person's message that arrived while the approved tool ran
// (seq N) sees the approval approved and the conversation running, while
// the seq of the call still sees it pending.
func TestConversationStateAtWhileACallRuns(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		clk := newClock()
		running, release := make(chan struct{}), make(chan struct{})
		register := func(r *tool.Registry) {
			tool.MustRegister(r, tool.Def{Name: "delete_everything", Description: "risky", Risk: tool.RiskHigh},
				func(ctx context.Context, _ *tool.Request, in struct {
					Target string `json:"target"`
				}) (map[string]string, error) {
					close(running)
					select {
					case <-release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return map[string]string{"deleted": in.Target}, nil
				})
		}
		s := startWith(t, st, clk, writeScript(t, `
turns:
  - after_tool: delete_everything
    text: "Done."
  - when_last_user_contains: "clean up"
    tool_calls:
      - {name: delete_everything, input: {target: prod}}
fallback:
  text: "Noted."
`), web.Options{}, register)
		advance := func() {
			clk.mu.Lock()
			clk.t = clk.t.Add(time.Minute)
			clk.mu.Unlock()
		}
		conv := s.create(t)
		s.post(t, conv, "clean up")
		waitStatus(t, st, conv, store.ConversationPaused)
		call := s.get(t, conv).PendingCalls[0]
		ap, err := st.ApprovalFindByCall(context.Background(), &store.ApprovalFindByCallParams{ConversationID: conv, CallID: call.CallID})
		if err != nil {
			t.Fatal(err)
		}
		advance()
		s.mustCall(t, http.MethodPost, "/api/approvals/"+ap.ID.String(), `{"choice": "approve"}`, http.StatusOK, nil)
		<-running
		advance()
		during := s.post(t, conv, "how is it going")
		close(release)
		waitFor(t, "the turn to end", func() bool {
			c, err := st.ConversationGet(context.Background(), conv)
			return err == nil && c.Status == store.ConversationIdle && c.LastSeq > during+1
		})

		var atCall, atMessage stateOut
		s.mustCall(t, http.MethodGet, fmt.Sprintf("/api/conversations/%s?at=%d", conv, call.Seq), "", http.StatusOK, &atCall)
		if atCall.Status != "paused" || len(atCall.Approvals) != 1 || atCall.Approvals[0].Status != "pending" || atCall.Approvals[0].DecidedBy != "" {
			t.Fatalf("at the call (#%d): %s, approvals %+v; want paused with the approval pending", call.Seq, atCall.Status, atCall.Approvals)
		}
		s.mustCall(t, http.MethodGet, fmt.Sprintf("/api/conversations/%s?at=%d", conv, during), "", http.StatusOK, &atMessage)
		if atMessage.Status != "running" || len(atMessage.PendingCalls) != 1 || atMessage.PendingCalls[0].WaitingFor != "server" {
			t.Fatalf("at the message during the run (#%d): %s, %+v; want running, the call running on the server", during, atMessage.Status, atMessage.PendingCalls)
		}
		if len(atMessage.Approvals) != 1 || atMessage.Approvals[0].Status != "approved" || atMessage.Approvals[0].DecidedBy == "" {
			t.Fatalf("at the message during the run (#%d): approvals %+v; want the approval approved, with who decided", during, atMessage.Approvals)
		}
	})
}
