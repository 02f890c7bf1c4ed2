package sqlite

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
)

// Migration 0010 carries the audit written before it: "error" reads as
// failed, the agent comes out of the actor, and the row counts as updated
// when it was made.
func TestAuditUpgradeOfEarlierRows(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "audit.db"))
	ctx := t.Context()
	shipped := s.d.migrations
	s.d.migrations = slices.DeleteFunc(slices.Clone(shipped), func(m migrations.Migration) bool { return m.Version >= 10 })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrating up to the audit's migration: %v", err)
	}
	made := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	insert := `INSERT INTO audit (id, actor, action, decision, result, created_at) VALUES (?, 'agent:atlas', 'lookup', 'auto', ?, ?)`
	if _, err := s.d.w.ExecContext(ctx, insert, uuid.NewString(), "error", made.UnixMicro()); err != nil {
		t.Fatalf("an audit row of the old shape: %v", err)
	}
	s.d.migrations = shipped
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("applying 0010: %v", err)
	}
	got, err := s.AuditList(ctx, &store.AuditListParams{Agent: "atlas", Outcome: store.AuditFailed})
	if err != nil || len(got) != 1 {
		t.Fatalf("the old failed row, by agent and outcome = %+v, %v; want it found", got, err)
	}
	if r := got[0]; !r.CreatedAt.Equal(made) || !r.UpdatedAt.Equal(made) || r.Action != "lookup" {
		t.Errorf("the old row after 0010 = %+v; want lookup, made and updated at %s", r, made)
	}
}
