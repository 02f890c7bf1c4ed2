package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// An audit write through AuditingStore commits with one delivery item per
// webhook and reaches the file sink after the commit; a transaction that
// fails after the write leaves neither row, item nor line; a retried
// transaction ships its committed attempt only.
func TestAuditingStoreShipsWithTheRow(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		ctx := context.Background()
		raw := open(t)
		file := filepath.Join(t.TempDir(), "audit.jsonl")
		sinks, err := audit.New(audit.Options{
			Config: config.Audit{Sinks: []config.AuditSink{
				{Webhook: "http://127.0.0.1:9/a", SecretEnv: "K"}, {Webhook: "http://127.0.0.1:9/b", SecretEnv: "K"}, {File: file},
			}},
			Getenv: func(string) string { return "k" },
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sinks.Close() })
		st := core.AuditingStore(raw, sinks, time.Now)
		conv, err := raw.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "t", Provider: "scripted", Model: "m", Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		row := func(call string) *store.AuditRecord {
			return &store.AuditRecord{ConversationID: &conv.ID, CallID: call, Agent: "atlas", Actor: "agent:atlas", Action: "deploy",
				Decision: "confirm", Outcome: store.AuditPending, CreatedAt: time.Now()}
		}
		deliveries := func() []core.AuditDeliverArgs {
			items, err := raw.WorkList(ctx, &store.WorkListParams{Kind: core.WorkAuditDeliver})
			if err != nil {
				t.Fatal(err)
			}
			var out []core.AuditDeliverArgs
			for _, it := range items {
				var a core.AuditDeliverArgs
				if err := json.Unmarshal(it.Payload, &a); err != nil {
					t.Fatal(err)
				}
				out = append(out, a)
			}
			return out
		}
		lines := func() int {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			return strings.Count(string(b), "\n")
		}

		// A failed transaction: nothing at all.
		boom := errors.New("boom")
		if err := st.InTx(ctx, func(q store.Queries) error {
			if err := q.AuditRecord(ctx, row("call-0")); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("the failing transaction: %v", err)
		}
		if d, n := deliveries(), lines(); len(d) != 0 || n != 0 {
			t.Fatalf("after a rolled back write: %d deliveries, %d file lines; want none", len(d), n)
		}

		// A write, then its settle inside a transaction.
		if err := st.AuditRecord(ctx, row("call-1")); err != nil {
			t.Fatal(err)
		}
		if err := st.InTx(ctx, func(q store.Queries) error {
			_, err := q.AuditSettle(ctx, &store.AuditSettleParams{ConversationID: conv.ID, CallID: "call-1", Outcome: store.AuditOK, DecidedBy: "user:U1", Now: time.Now()})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		d := deliveries()
		if len(d) != 4 || lines() != 2 {
			t.Fatalf("%d deliveries, %d file lines; want two writes × two webhooks, and two lines", len(d), lines())
		}
		sinkOf := map[string]int{}
		outcomes := map[string]string{}
		for _, a := range d {
			sinkOf[a.Sink]++
			outcomes[a.Event.ID] = a.Event.Outcome
			if a.Event.ConversationID == nil || *a.Event.ConversationID != conv.ID || a.Event.CallID != "call-1" {
				t.Errorf("delivery of %+v: want call-1 of the conversation", a.Event)
			}
		}
		if sinkOf[audit.SinkID("http://127.0.0.1:9/a")] != 2 || sinkOf[audit.SinkID("http://127.0.0.1:9/b")] != 2 || len(outcomes) != 2 {
			t.Errorf("deliveries by sink %v, events %v; want both events to each webhook", sinkOf, outcomes)
		}
	})
}
