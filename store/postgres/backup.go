package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Backup and restore run pg_dump and pg_restore (the caller does); the
// driver gives them a snapshot to copy and says what a store or a restore
// target holds.

// Snapshot is a consistent view of the store that pg_dump can copy.
type Snapshot struct {
	// ID is the exported snapshot, for pg_dump --snapshot=ID: the dump
	// sees exactly what this transaction sees.
	ID string
	// Schema is where the store's tables are: switchboard_schema, or the
	// schema the search_path resolves to.
	Schema string
	// SchemaVersion and Conversations are as of the snapshot.
	SchemaVersion int
	Conversations int64
}

// ErrNoStore: the schema holds no Switchboard store (no migration applied).
var ErrNoStore = errors.New("no switchboard store here")

// Snapshot holds a read-only REPEATABLE READ transaction open while fn
// runs, and gives fn the transaction's exported snapshot with what it
// sees. Writers are not blocked; the snapshot stays valid until fn returns.
func (s *Store) Snapshot(ctx context.Context, fn func(ctx context.Context, snap *Snapshot) error) error {
	tx, err := s.d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres: beginning the snapshot transaction: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	q := dbsqlc.New(tx)
	// First, so the snapshot is taken by this statement and every read
	// below sees the same.
	snap := &Snapshot{}
	if snap.ID, err = q.BackupSnapshotExport(ctx); err != nil {
		return fmt.Errorf("postgres: exporting a snapshot: %w", err)
	}
	if snap.Schema, err = q.BackupCurrentSchema(ctx); err != nil {
		return fmt.Errorf("postgres: reading the current schema: %w", err)
	}
	exists, err := q.MigrationTableExists(ctx)
	if err != nil {
		return fmt.Errorf("postgres: reading the schema version: %w", err)
	}
	if !exists {
		return fmt.Errorf("postgres: schema %q: %w", snap.Schema, ErrNoStore)
	}
	v, err := q.MigrationVersion(ctx)
	if err != nil {
		return fmt.Errorf("postgres: reading the schema version: %w", err)
	}
	snap.SchemaVersion = int(v)
	if snap.SchemaVersion == 0 {
		return fmt.Errorf("postgres: schema %q: %w", snap.Schema, ErrNoStore)
	}
	if snap.Conversations, err = q.BackupConversationCount(ctx); err != nil {
		return fmt.Errorf("postgres: counting conversations: %w", err)
	}
	if err := fn(ctx, snap); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Summary is what the store holds, as Inspect reads it.
type Summary struct {
	Schema        string
	SchemaVersion int // 0: no store
	Conversations int64
}

// Inspect reads what the store holds: after a restore, what came back.
func (s *Store) Inspect(ctx context.Context) (*Summary, error) {
	var sum *Summary
	err := s.Snapshot(ctx, func(_ context.Context, snap *Snapshot) error {
		sum = &Summary{Schema: snap.Schema, SchemaVersion: snap.SchemaVersion, Conversations: snap.Conversations}
		return nil
	})
	if errors.Is(err, ErrNoStore) {
		schema, serr := dbsqlc.New(s.d.pool).BackupCurrentSchema(ctx)
		if serr != nil {
			return nil, fmt.Errorf("postgres: reading the current schema: %w", serr)
		}
		return &Summary{Schema: schema}, nil
	}
	return sum, err
}

// Objects lists what schema holds that a restore would collide with
// (tables, indexes, sequences, views, functions, types; not those an
// extension owns), or what every schema but the system's holds when schema
// is "": at most five names (schema.name) and how many there are in all.
func (s *Store) Objects(ctx context.Context, schema string) (names []string, total int64, err error) {
	rows, err := dbsqlc.New(s.d.pool).RestoreTargetObjects(ctx, schema)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: listing what the database holds: %w", err)
	}
	for _, r := range rows {
		names = append(names, r.Name)
		total = r.Total
	}
	return names, total, nil
}
