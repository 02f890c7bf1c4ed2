package core_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestSweepRetention: the sweep deletes a workspace's conversations past
// its retention, exporting each first; a failed export keeps the
// conversation until a later sweep exports it; conversations of other
// workspaces, and newer ones, stay; each run that deleted or kept
// something is in the audit.
func TestSweepRetention(t *testing.T) {
	// Not parallel: it failed beside the other core tests on a loaded machine.
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		clk := newClock()
		svc, err := core.New(core.Options{
			Store: st, Registry: tool.NewRegistry(), Tools: func(tool.ContextName) []*tool.Tool { return nil }, Logger: testenv.Logger(t), Now: clk.Now,
			Agents: &config.Config{Agents: []config.Agent{{Name: "atlas", Persona: "p", Model: "scripted:" + writeScript(t, "turns:\n  - text: hi\n"), MaxTokens: 100, StepBudget: 5, Answers: config.Answers{Default: true}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		team := func(name string) uuid.UUID {
			ws, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: name, Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New(), Now: clk.Now()})
			if err != nil {
				t.Fatal(err)
			}
			return ws.ID
		}
		conv := func(ws uuid.UUID, text string) uuid.UUID {
			c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Title: text, Now: clk.Now()})
			if err == nil {
				err = st.ConversationWorkspaceSet(ctx, &store.ConversationWorkspaceSetParams{ConversationID: c.ID, WorkspaceID: ws})
			}
			if err == nil {
				_, err = st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Author: "user:U1", Content: json.RawMessage(`{"text":"` + text + `"}`), Now: clk.Now()})
			}
			if err != nil {
				t.Fatal(err)
			}
			return c.ID
		}
		exists := func(id uuid.UUID) bool {
			_, err := st.ConversationGet(ctx, id)
			if err != nil && !strings.Contains(err.Error(), store.ErrNotFound.Error()) {
				t.Fatal(err)
			}
			return err == nil
		}

		a, b, c := team("a"), team("b"), team("c")
		exports := filepath.Join(t.TempDir(), "exports")
		blocked := filepath.Join(t.TempDir(), "not-a-dir")
		if err := os.WriteFile(blocked, []byte("a file where the directory should be"), 0o600); err != nil {
			t.Fatal(err)
		}
		for ws, dir := range map[uuid.UUID]string{a: exports, c: blocked} {
			if _, err := st.WorkspaceRetentionSet(ctx, &store.WorkspaceRetentionSetParams{WorkspaceID: ws, KeepDays: 30, ExportDir: dir, Now: clk.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		oldA, oldB, oldC := conv(a, "old in a"), conv(b, "old in b"), conv(c, "old in c")
		clk.Advance(31 * 24 * time.Hour)
		newA := conv(a, "new in a")

		res, err := svc.Sweep(ctx)
		if err != nil {
			t.Fatalf("sweeping: %v", err)
		}
		want := core.RetentionResult{Conversations: 1, Entries: 1, Exported: 1, ExportFailed: 1}
		if res.Retention != want {
			t.Fatalf("the retention of the first sweep: want %+v, got %+v", want, res.Retention)
		}
		if exists(oldA) || !exists(newA) || !exists(oldB) || !exists(oldC) {
			t.Fatalf("after the sweep: old in a %v (want gone), new in a %v, old in b %v, old in c (export failed) %v (want kept)", exists(oldA), exists(newA), exists(oldB), exists(oldC))
		}
		raw, err := os.ReadFile(filepath.Join(exports, "conversation-"+oldA.String()+".json"))
		if err != nil {
			t.Fatalf("the export of the deleted conversation: %v", err)
		}
		var doc transcript.Doc
		if err := json.Unmarshal(raw, &doc); err != nil || doc.Format != transcript.Format || len(doc.Entries) != 1 || !strings.Contains(string(doc.Entries[0].Content), "old in a") {
			t.Fatalf("the export is not the history export of the conversation (%v): %s", err, raw)
		}

		audit, err := st.AuditList(ctx, &store.AuditListParams{Action: store.AuditRetention})
		if err != nil {
			t.Fatal(err)
		}
		if len(audit) != 2 {
			t.Fatalf("audit rows of the retention: want one per workspace that did something (a, c), got %d", len(audit))
		}
		for _, r := range audit {
			switch *r.WorkspaceID {
			case a:
				if r.Outcome != store.AuditOK || !strings.Contains(string(r.Detail), `"conversations":1`) || strings.Contains(string(r.Detail), "old in a") {
					t.Fatalf("a's audit row: %+v %s", r, r.Detail)
				}
			case c:
				if r.Outcome != store.AuditFailed || !strings.Contains(string(r.Detail), `"export_failed":1`) {
					t.Fatalf("c's audit row: want failed with the export counted, got %+v %s", r, r.Detail)
				}
			default:
				t.Fatalf("an audit row of workspace %v", r.WorkspaceID)
			}
		}

		// The export directory can be made now: the next sweep exports and
		// deletes what the failed export kept.
		if err := os.Remove(blocked); err != nil {
			t.Fatal(err)
		}
		res, err = svc.Sweep(ctx)
		if err != nil {
			t.Fatalf("sweeping again: %v", err)
		}
		if want := (core.RetentionResult{Conversations: 1, Entries: 1, Exported: 1}); res.Retention != want {
			t.Fatalf("the retention of the second sweep: want %+v, got %+v", want, res.Retention)
		}
		if exists(oldC) {
			t.Fatal("the conversation whose export failed must go once its export succeeds")
		}
		if _, err := os.Stat(filepath.Join(blocked, "conversation-"+oldC.String()+".json")); err != nil {
			t.Fatalf("the export of c's conversation: %v", err)
		}
		res, err = svc.Sweep(ctx)
		if err != nil || res.Retention != (core.RetentionResult{}) {
			t.Fatalf("a third sweep: want nothing to do, got %+v, %v", res.Retention, err)
		}
		if audit, _ := st.AuditList(ctx, &store.AuditListParams{Action: store.AuditRetention}); len(audit) != 3 {
			t.Fatalf("audit rows after three sweeps: want 3 (a sweep with nothing to do records none), got %d", len(audit))
		}
	})
}
