package core_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// auditOf returns the one audit row of a conversation's call.
func auditOf(t *testing.T, st store.Store, conv uuid.UUID) *store.AuditRecord {
	t.Helper()
	rows, err := st.AuditList(context.Background(), &store.AuditListParams{ConversationID: &conv})
	if err != nil || len(rows) != 1 {
		t.Fatalf("audit of %s = %+v, %v; want exactly one row (one call)", conv, rows, err)
	}
	return rows[0]
}

// A call the configured policy denies is audited as denied by the policy,
// and the handler never runs.
func TestAuditPolicyDenial(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, configure: func(o *core.Options) {
			o.Policies = tool.Policies{Platform: tool.Policy{Deny: []string{"slack:lookup"}}}
		}}
		in := s.start(t, `
turns:
  - text: Checking.
    tool_calls:
      - {id: call-1, name: lookup, input: {query: weather}}
  - text: Refused.
`)
		res, err := in.svc.Submit(context.Background(), slackMessage("Ev1", "U1", "look it up"))
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, res.ConversationID, store.ConversationIdle)
		r := auditOf(t, s.st, res.ConversationID)
		if r.CallID != "call-1" || r.Action != "lookup" || r.Agent != "atlas" || r.Decision != "deny" ||
			r.Outcome != store.AuditDenied || r.DecidedBy != store.DecidedByPolicy {
			t.Fatalf("audit = %+v; want call-1 of lookup by atlas, decision deny, denied by the policy", r)
		}
		s.tools.mu.Lock()
		ran := len(s.tools.ran)
		s.tools.mu.Unlock()
		if ran != 0 {
			t.Fatalf("the denied lookup ran %d times, want never", ran)
		}
	})
}

// A call waiting for a client is pending until the client's result settles
// it, and cancelled by the system when the person writes something else.
func TestAuditClientResultAndMovedOn(t *testing.T) {
	t.Parallel()
	demo, err := os.ReadFile(filepath.Join("model", "scripts", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := &setup{st: st, clock: newClock(), tools: &testTools{}}
		in := s.start(t, string(demo))
		ctx := context.Background()
		chart := func() (uuid.UUID, core.PendingCall) {
			t.Helper()
			conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "show me a chart"); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, st, conv.ID, store.ConversationPaused)
			pending, err := in.svc.PendingCalls(ctx, conv.ID)
			if err != nil || len(pending) != 1 {
				t.Fatalf("pending = %+v, %v; want the chart waiting for the client", pending, err)
			}
			if r := auditOf(t, st, conv.ID); r.Outcome != store.AuditPending || r.CallID != pending[0].CallID || r.DecidedBy != store.DecidedByPolicy {
				t.Fatalf("audit of the waiting call = %+v; want pending, its call id, let through by the policy", r)
			}
			return conv.ID, pending[0]
		}

		answered, call := chart()
		if _, err := in.svc.PostToolResults(ctx, answered, "alice", []core.ToolResultInput{{CallID: call.CallID, Output: json.RawMessage(`{"shown": true}`)}}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, answered, store.ConversationIdle)
		if r := auditOf(t, st, answered); r.Outcome != store.AuditOK || r.DecidedBy != store.DecidedByPolicy {
			t.Fatalf("audit after the client's result = %+v; want ok, still the policy's decision", r)
		}

		left, _ := chart()
		if _, err := in.svc.PostMessage(ctx, left, "alice", "help"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, left, store.ConversationIdle)
		if r := auditOf(t, st, left); r.Outcome != store.AuditCancelled || r.DecidedBy != store.DecidedBySystem || r.Decision == "" {
			t.Fatalf("audit after the person moved on = %+v; want cancelled by the system, the guard's decision kept", r)
		}
	})
}
