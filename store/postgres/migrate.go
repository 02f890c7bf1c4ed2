package postgres

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// migrationTable makes the version table ready; sqlc reads it as schema too.
//
//go:embed migration_table.sql
var migrationTable string

// Migrate applies the pending migrations shipped in migrations/postgres and
// returns the applied version. Safe to run from several instances at once,
// and beside instances of the release before (see store.Driver.Migrate).
func (d *driver) Migrate(ctx context.Context) (int, error) {
	ms := d.opts.migrations
	if ms == nil {
		var err error
		if ms, err = migrations.Load("postgres"); err != nil {
			return 0, fmt.Errorf("migrating: %w", err)
		}
	}
	return d.migrate(ctx, ms)
}

// migrate applies ms in order. Each migration runs in its own transaction
// together with its version row, under a transaction-scoped advisory lock
// (see MigrationLock), and re-checks under that lock whether a concurrent
// migrator applied it first. A failed migration rolls back whole: the
// recorded version stays at the last one that succeeded.
//
// Nothing is applied to a schema too new for this binary. The schema is
// read again at the end: a newer binary may have migrated it meanwhile.
func (d *driver) migrate(ctx context.Context, ms []migrations.Migration) (int, error) {
	latest := 0
	if len(ms) > 0 {
		latest = ms[len(ms)-1].Version
	}
	if err := d.prepareMigrationTable(ctx); err != nil {
		return 0, err
	}
	rows, err := d.versionRows(ctx)
	if err != nil {
		return 0, err
	}
	before := store.NewSchemaState(rows, latest, d.opts.BinaryVersion)
	if err := before.Err(); err != nil {
		return 0, err
	}
	// Only what the version table does not list yet: an instance starting
	// on an up-to-date schema runs no migration transaction at all.
	// applyMigration checks again under the lock, for a migrator beside.
	done := make(map[int]bool, len(rows))
	for _, r := range rows {
		done[r.Version] = true
	}
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		applied, err := d.applyMigration(ctx, m)
		if err != nil {
			return 0, err
		}
		if applied {
			d.logger.InfoContext(ctx, "applied migration", "version", m.Version, "name", m.Name)
		}
	}
	after, err := d.schemaState(ctx, latest)
	if err != nil {
		return 0, err
	}
	if err := after.Err(); err != nil {
		return 0, err
	}
	if after.Newer() {
		d.logger.WarnContext(ctx, "the schema is newer than this binary, and compatible with it: running on it",
			"schema_version", after.Applied, "applied_by", after.AppliedBy, "binary_schema", after.Latest,
			"schema_floor", after.Floor, "binary_version", d.opts.BinaryVersion)
	}
	return after.Applied, nil
}

// prepareMigrationTable creates the version table, or gives one made by an
// earlier binary the columns this one records, in a short transaction of its
// own under the migration lock: the ALTER locks the table, which the other
// instances read for their readiness, only for that moment, and only once.
func (d *driver) prepareMigrationTable(ctx context.Context) (err error) {
	ready, err := dbsqlc.New(d.pool).MigrationTableReady(ctx)
	if err != nil {
		return fmt.Errorf("reading the version table's columns: %w", err)
	}
	if ready {
		return nil
	}
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("preparing the version table: beginning transaction: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := dbsqlc.New(tx).MigrationLock(ctx); err != nil {
		return fmt.Errorf("preparing the version table: taking the migration lock: %w", err)
	}
	if _, err := tx.Exec(ctx, migrationTable); err != nil {
		return fmt.Errorf("preparing the version table: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("preparing the version table: committing: %w", err)
	}
	return nil
}

func (d *driver) applyMigration(ctx context.Context, m migrations.Migration) (applied bool, err error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("migration %s: beginning transaction: %w", m.Name, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	db := dbsqlc.New(tx)
	if err := db.MigrationLock(ctx); err != nil {
		return false, fmt.Errorf("migration %s: taking the migration lock: %w", m.Name, err)
	}
	done, err := db.MigrationApplied(ctx, int32(m.Version))
	if err != nil {
		return false, fmt.Errorf("migration %s: reading the version table: %w", m.Name, err)
	}
	if done {
		return false, tx.Rollback(ctx)
	}
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("applying migration %s: %w", m.Name, err)
	}
	floor := int32(m.Floor)
	err = db.MigrationRecord(ctx, &dbsqlc.MigrationRecordParams{
		Version: int32(m.Version), Name: m.Name, AppliedAt: ts(d.opts.Now()),
		BinaryVersion: nonEmpty(d.opts.BinaryVersion), CompatFloor: &floor,
	})
	if err != nil {
		return false, fmt.Errorf("migration %s: recording version %d: %w", m.Name, m.Version, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("migration %s: committing: %w", m.Name, err)
	}
	return true, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// SchemaVersion returns the applied version (0 on an empty database) and the
// latest version this binary ships.
func (d *driver) SchemaVersion(ctx context.Context) (applied, latest int, err error) {
	latest, err = d.latest()
	if err != nil {
		return 0, 0, err
	}
	db := dbsqlc.New(d.pool)
	var v int32
	exists, err := db.MigrationTableExists(ctx)
	if err == nil && exists {
		v, err = db.MigrationVersion(ctx)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading schema version: %w", err)
	}
	return int(v), latest, nil
}

// SchemaState reads the version table: see store.Driver.SchemaState.
func (d *driver) SchemaState(ctx context.Context) (*store.SchemaState, error) {
	latest, err := d.latest()
	if err != nil {
		return nil, err
	}
	return d.schemaState(ctx, latest)
}

func (d *driver) latest() (int, error) {
	if ms := d.opts.migrations; ms != nil {
		if len(ms) == 0 {
			return 0, nil
		}
		return ms[len(ms)-1].Version, nil
	}
	latest, err := migrations.Latest("postgres")
	if err != nil {
		return 0, fmt.Errorf("reading shipped schema version: %w", err)
	}
	return latest, nil
}

func (d *driver) schemaState(ctx context.Context, latest int) (*store.SchemaState, error) {
	rows, err := d.versionRows(ctx)
	if err != nil {
		return nil, err
	}
	return store.NewSchemaState(rows, latest, d.opts.BinaryVersion), nil
}

// versionRows reads the version table: none on an empty database.
func (d *driver) versionRows(ctx context.Context) ([]store.SchemaMigration, error) {
	db := dbsqlc.New(d.pool)
	exists, err := db.MigrationTableExists(ctx)
	var rows []dbsqlc.MigrationRowsRow
	if err == nil && exists {
		rows, err = db.MigrationRows(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the schema's version table: %w", err)
	}
	out := make([]store.SchemaMigration, len(rows))
	for i, r := range rows {
		out[i] = store.SchemaMigration{Version: int(r.Version), Floor: int(r.CompatFloor), AppliedBy: r.BinaryVersion}
	}
	return out, nil
}
