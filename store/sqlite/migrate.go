package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/migrations"
)

// Migrate applies the pending migrations shipped in migrations/sqlite and
// returns the schema version.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	return s.migrate(ctx, s.migrations)
}

// SchemaVersion returns the highest version applied (0 on an empty database)
// and the highest version this binary ships.
func (s *Store) SchemaVersion(ctx context.Context) (applied, latest int, err error) {
	if len(s.migrations) > 0 {
		latest = s.migrations[len(s.migrations)-1].Version
	}
	applied, err = s.appliedVersion(ctx, poolRunner{s.rstmts})
	if err != nil {
		return 0, latest, fmt.Errorf("reading schema version: %w", err)
	}
	return applied, latest, nil
}

func (s *Store) appliedVersion(ctx context.Context, db dbtx) (int, error) {
	n, err := count(ctx, db, "SchemaMigrationsTableExists")
	if err != nil || n == 0 {
		return 0, err
	}
	v, err := count(ctx, db, "SchemaMigrationsMax")
	return int(v), err
}

// migrate applies each migration of ms not yet recorded, in order, each in
// its own transaction together with its version row: a failure leaves the
// schema and the version as they were before that file.
func (s *Store) migrate(ctx context.Context, ms []migrations.Migration) (int, error) {
	if _, err := exec(ctx, textRunner{s.w}, "SchemaMigrationsCreate"); err != nil {
		return 0, fmt.Errorf("creating the schema migrations table: %w", err)
	}
	applied := map[int]bool{}
	versions, err := queryList(ctx, textRunner{s.w}, "SchemaMigrationsVersions", func(r scanner) (int, error) {
		var v int
		return v, r.Scan(&v)
	})
	if err != nil {
		return 0, fmt.Errorf("reading applied migrations: %w", err)
	}
	for _, v := range versions {
		applied[v] = true
	}
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		ran, err := s.applyMigration(ctx, m)
		if err != nil {
			return 0, fmt.Errorf("applying migration %s: %w", m.Name, err)
		}
		if ran {
			s.logger.InfoContext(ctx, "applied migration",
				slog.Int("version", m.Version), slog.String("name", m.Name))
		}
	}
	v, err := s.appliedVersion(ctx, textRunner{s.w})
	if err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return v, nil
}

// applyMigration runs one migration in an IMMEDIATE transaction. It reports
// false when another process applied it first (the check runs under the
// write lock, so two processes cannot both apply it).
func (s *Store) applyMigration(ctx context.Context, m migrations.Migration) (ran bool, err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("beginning transaction: %w", mapErr(err))
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	run := newTxRunner(tx, nil)
	n, err := count(ctx, run, "SchemaMigrationsHas", sql.Named("version", m.Version))
	if err != nil {
		return false, err
	}
	if n > 0 {
		return false, mapErr(tx.Commit())
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, mapErr(err)
	}
	if _, err := exec(ctx, run, "SchemaMigrationsInsert",
		sql.Named("version", m.Version),
		sql.Named("name", m.Name),
		sql.Named("now", micros(s.nowFunc()))); err != nil {
		return false, fmt.Errorf("recording version %d: %w", m.Version, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("committing: %w", mapErr(err))
	}
	return true, nil
}
