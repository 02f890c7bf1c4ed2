package postgres

import (
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
)

// Rows written before migration 0010 (one per event, the result "error" for
// a failure, the agent only in the actor) read back after it: the outcome
// named as now, the agent taken from the actor, updated when created.
func TestAuditMigrationKeepsOldRows(t *testing.T) {
	t.Parallel()
	s := openUnmigrated(t, freshSchema(t), nil)
	ctx := t.Context()
	all, err := migrations.Load("postgres")
	if err != nil {
		t.Fatal(err)
	}
	var before []migrations.Migration
	for _, m := range all {
		if m.Version < 10 {
			before = append(before, m)
		}
	}
	if _, err := s.d.migrate(ctx, before); err != nil {
		t.Fatalf("migrating to the schema before the audit's: %v", err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, result := range []string{"pending", "error"} {
		if _, err := s.Pool().Exec(ctx, `INSERT INTO audit_records (id, actor, action, risk, decision, result, detail, created_at)
			VALUES (gen_random_uuid(), 'agent:atlas', 'lookup', 'low', 'auto', $1, '{}', $2)`, result, at.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("writing an old audit row: %v", err)
		}
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrating the rest: %v", err)
	}
	rows, err := s.AuditList(ctx, &store.AuditListParams{Agent: "atlas"})
	if err != nil || len(rows) != 2 {
		t.Fatalf("the old rows after the migration = %+v, %v; want both, found by their agent", rows, err)
	}
	if rows[0].Outcome != store.AuditFailed || rows[1].Outcome != store.AuditPending {
		t.Errorf("old outcomes = %s, %s; want failed (was error), pending", rows[0].Outcome, rows[1].Outcome)
	}
	if !rows[0].UpdatedAt.Equal(rows[0].CreatedAt) || rows[0].CallID != "" {
		t.Errorf("an old row = %+v; want updated when created and no call id", rows[0])
	}
}
