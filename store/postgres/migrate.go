package postgres

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/migrations"
)

// Migrate applies the pending migrations shipped in migrations/postgres and
// returns the applied version. Safe to run from several instances at once.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	ms, err := migrations.Load("postgres")
	if err != nil {
		return 0, fmt.Errorf("migrating: %w", err)
	}
	return s.migrate(ctx, ms)
}

// migrate applies ms in order. Each migration runs in its own transaction
// together with its version row, under a transaction-scoped advisory lock
// (see MigrationLock), and re-checks under that lock whether a concurrent
// migrator applied it first. A failed migration rolls back whole: the
// recorded version stays at the last one that succeeded.
func (s *Store) migrate(ctx context.Context, ms []migrations.Migration) (int, error) {
	for _, m := range ms {
		applied, err := s.applyMigration(ctx, m)
		if err != nil {
			return 0, err
		}
		if applied {
			s.logger.InfoContext(ctx, "applied migration", "version", m.Version, "name", m.Name)
		}
	}
	var v int
	if err := s.pool.QueryRow(ctx, sqlq.Get("MigrationVersion")).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return v, nil
}

func (s *Store) applyMigration(ctx context.Context, m migrations.Migration) (applied bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("migration %s: beginning transaction: %w", m.Name, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if _, err := tx.Exec(ctx, sqlq.Get("MigrationLock")); err != nil {
		return false, fmt.Errorf("migration %s: taking the migration lock: %w", m.Name, err)
	}
	if _, err := tx.Exec(ctx, sqlq.Get("MigrationTableCreate")); err != nil {
		return false, fmt.Errorf("migration %s: creating the version table: %w", m.Name, err)
	}
	var done bool
	if err := tx.QueryRow(ctx, sqlq.Get("MigrationApplied"), m.Version).Scan(&done); err != nil {
		return false, fmt.Errorf("migration %s: reading the version table: %w", m.Name, err)
	}
	if done {
		return false, tx.Rollback(ctx)
	}
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("applying migration %s: %w", m.Name, err)
	}
	if _, err := tx.Exec(ctx, sqlq.Get("MigrationRecord"), m.Version, m.Name, ts(s.opts.Now())); err != nil {
		return false, fmt.Errorf("migration %s: recording version %d: %w", m.Name, m.Version, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("migration %s: committing: %w", m.Name, err)
	}
	return true, nil
}

// SchemaVersion returns the applied version (0 on an empty database) and the
// latest version this binary ships.
func (s *Store) SchemaVersion(ctx context.Context) (applied, latest int, err error) {
	latest, err = migrations.Latest("postgres")
	if err != nil {
		return 0, 0, fmt.Errorf("reading shipped schema version: %w", err)
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, sqlq.Get("MigrationTableExists")).Scan(&exists); err != nil {
		return 0, 0, fmt.Errorf("reading schema version: %w", err)
	}
	if !exists {
		return 0, latest, nil
	}
	if err := s.pool.QueryRow(ctx, sqlq.Get("MigrationVersion")).Scan(&applied); err != nil {
		return 0, 0, fmt.Errorf("reading schema version: %w", err)
	}
	return applied, latest, nil
}
