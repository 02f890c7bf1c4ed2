package postgres

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// migrationTable creates the version table; sqlc reads it as schema too.
//
//go:embed migration_table.sql
var migrationTable string

// Migrate applies the pending migrations shipped in migrations/postgres and
// returns the applied version. Safe to run from several instances at once.
func (d *driver) Migrate(ctx context.Context) (int, error) {
	ms, err := migrations.Load("postgres")
	if err != nil {
		return 0, fmt.Errorf("migrating: %w", err)
	}
	return d.migrate(ctx, ms)
}

// migrate applies ms in order. Each migration runs in its own transaction
// together with its version row, under a transaction-scoped advisory lock
// (see MigrationLock), and re-checks under that lock whether a concurrent
// migrator applied it first. A failed migration rolls back whole: the
// recorded version stays at the last one that succeeded.
func (d *driver) migrate(ctx context.Context, ms []migrations.Migration) (int, error) {
	for _, m := range ms {
		applied, err := d.applyMigration(ctx, m)
		if err != nil {
			return 0, err
		}
		if applied {
			d.logger.InfoContext(ctx, "applied migration", "version", m.Version, "name", m.Name)
		}
	}
	v, err := dbsqlc.New(d.pool).MigrationVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return int(v), nil
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
	if _, err := tx.Exec(ctx, migrationTable); err != nil {
		return false, fmt.Errorf("migration %s: creating the version table: %w", m.Name, err)
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
	err = db.MigrationRecord(ctx, &dbsqlc.MigrationRecordParams{Version: int32(m.Version), Name: m.Name, AppliedAt: ts(d.opts.Now())})
	if err != nil {
		return false, fmt.Errorf("migration %s: recording version %d: %w", m.Name, m.Version, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("migration %s: committing: %w", m.Name, err)
	}
	return true, nil
}

// SchemaVersion returns the applied version (0 on an empty database) and the
// latest version this binary ships.
func (d *driver) SchemaVersion(ctx context.Context) (applied, latest int, err error) {
	latest, err = migrations.Latest("postgres")
	if err != nil {
		return 0, 0, fmt.Errorf("reading shipped schema version: %w", err)
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
