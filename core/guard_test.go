package core_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// notices are the notify lines in a conversation's log.
func notices(t *testing.T, st store.Store, conv uuid.UUID) []string {
	t.Helper()
	var out []string
	for _, e := range entries(t, st, conv, true) {
		if e.Kind != store.EntrySystem {
			continue
		}
		c, err := core.Decode[core.SystemContent](e)
		if err != nil {
			t.Fatal(err)
		}
		if c.Notice {
			out = append(out, c.Text)
		}
	}
	return out
}

// TestNotifyLineOnceAcrossACrash: the process dies right after the commit
// that records a notify call's result; the next instance finishes the turn.
// The conversation has the "ran lookup" line exactly once: it was committed
// with the result (not lost with the dead process), and the retried turn,
// which never runs the call again, never writes it again.
func TestNotifyLineOnceAcrossACrash(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		var conv atomic.Pointer[uuid.UUID]
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, ttl: 3 * time.Second, configure: func(o *core.Options) {
			o.Policies = tool.Policies{Platform: tool.Policy{Tools: map[string]tool.Decision{"lookup": tool.DecisionNotify}}}
		}}
		raw := s.st
		s.dieAfter = func() bool {
			id := conv.Load()
			return id != nil && strings.Contains(kinds(entries(t, raw, *id, false)), "tool_result")
		}
		dying := s.start(t, `
turns:
  - tool_calls:
      - {name: lookup, input: {query: invoices}}
  - text: never written
`)
		c, err := dying.svc.CreateConversation(context.Background(), "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		conv.Store(&c.ID)
		if _, err := dying.svc.PostMessage(context.Background(), c.ID, "alice", "find my invoices"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the process to die after the result's commit", func() bool {
			return strings.Contains(kinds(entries(t, raw, c.ID, false)), "tool_result")
		})
		dying.kill()

		s.dieAfter = nil
		s.clock.Advance(10 * time.Second) // past the lease TTL
		s.start(t, "turns:\n  - text: Found them.\n")
		waitStatus(t, s.st, c.ID, store.ConversationIdle)

		if got := s.tools.ranQueries(); len(got) != 1 {
			t.Fatalf("lookup ran %d times; want once", len(got))
		}
		ns := notices(t, s.st, c.ID)
		if len(ns) != 1 || !strings.Contains(ns[0], "ran `lookup` with") || !strings.Contains(ns[0], "invoices") {
			t.Fatalf("notify lines = %q; want exactly one saying lookup ran with its arguments", ns)
		}
		if got := kinds(entries(t, s.st, c.ID, false)); got != "user,tool_call,tool_result,system,assistant" {
			t.Fatalf("log = %s; want the line right after the result and one reply", got)
		}
		if item := turnItem(t, s.st, c.ID); item.State != store.WorkDone || item.Attempts != 2 {
			t.Fatalf("turn item %s after %d attempts; want done on the second (the crash counts)", item.State, item.Attempts)
		}
		// The call's audit row committed with its result: the process that
		// died right after that commit left it, and the retried turn, which
		// finds the result, never audits the call again.
		rows, err := s.st.AuditList(context.Background(), &store.AuditListParams{ConversationID: &c.ID, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Action != "lookup" || rows[0].Outcome != store.AuditOK {
			t.Fatalf("audit rows = %+v; want lookup's one row, ok", rows)
		}
	})
}
