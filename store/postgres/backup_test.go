package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
)

// The exported snapshot is one moment: what the store commits while fn
// runs is neither in the counts nor in what another session importing the
// snapshot (pg_dump --snapshot) reads.
func TestSnapshotIsOneMoment(t *testing.T) {
	schema := freshSchema(t)
	s := openUnmigrated(t, schema, nil)
	version, err := s.Migrate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	create := func() {
		t.Helper()
		if _, err := s.ConversationCreate(t.Context(), &store.ConversationCreateParams{Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		create()
	}
	err = s.Snapshot(t.Context(), func(ctx context.Context, snap *Snapshot) error {
		create() // committed after the snapshot
		create()
		if snap.Schema != schema || snap.SchemaVersion != version || snap.Conversations != 3 {
			t.Errorf("snapshot = %+v, want schema %s, version %d, 3 conversations", snap, schema, version)
		}
		conn := adminConn(t)
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+snap.ID+"'"); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+schema+".conversations").Scan(&n); err != nil {
			return err
		}
		if n != 3 {
			t.Errorf("a session on the snapshot counts %d conversations, want the 3 from before it", n)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	sum, err := s.Inspect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Conversations != 5 || sum.SchemaVersion != version || sum.Schema != schema {
		t.Fatalf("Inspect after = %+v, want 5 conversations at version %d in %s", sum, version, schema)
	}
}

func TestSnapshotOfNoStore(t *testing.T) {
	s := openUnmigrated(t, freshSchema(t), nil)
	err := s.Snapshot(t.Context(), func(context.Context, *Snapshot) error {
		t.Error("fn ran on a schema without a store")
		return nil
	})
	if !errors.Is(err, ErrNoStore) {
		t.Fatalf("Snapshot of an empty schema: %v, want ErrNoStore", err)
	}
	sum, err := s.Inspect(t.Context())
	if err != nil || sum.SchemaVersion != 0 {
		t.Fatalf("Inspect of an empty schema = %+v, %v; want version 0", sum, err)
	}
}

// Objects sees what a restore would collide with in a schema, and only in
// that schema.
func TestObjects(t *testing.T) {
	empty := freshSchema(t)
	e := openUnmigrated(t, empty, nil)
	names, total, err := e.Objects(t.Context(), empty)
	if err != nil || total != 0 || len(names) != 0 {
		t.Fatalf("Objects of a fresh schema = %v, %d, %v; want none", names, total, err)
	}
	full := freshSchema(t)
	f := openUnmigrated(t, full, nil)
	if _, err := f.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	names, total, err = f.Objects(t.Context(), full)
	if err != nil {
		t.Fatal(err)
	}
	if total < 20 || len(names) != 5 || !slices.IsSorted(names) || !strings.HasPrefix(names[0], full+".") {
		t.Fatalf("Objects of a migrated schema = %v, %d; want 5 names in %s of many", names, total, full)
	}
	// The migrated schema does not make the empty one hold anything.
	if _, total, _ := e.Objects(t.Context(), empty); total != 0 {
		t.Fatalf("Objects of the fresh schema = %d after another was migrated, want 0", total)
	}
	// "" is every schema but the system's: this database has the migrated one.
	if _, total, _ := e.Objects(t.Context(), ""); total == 0 {
		t.Fatal(`Objects("") = 0 on a database with a migrated schema`)
	}
}
