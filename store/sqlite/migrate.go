package sqlite

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Migrate applies the pending migrations shipped in migrations/sqlite, each
// in its own IMMEDIATE transaction together with its version row (a failure
// leaves the schema and the version as they were before that file), and
// returns the schema version.
func (d *driver) Migrate(ctx context.Context) (int, error) {
	done, err := dbsqlc.New(d.w).SchemaMigrationsVersions(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading applied migrations: %w", mapErr(err))
	}
	applied := map[int64]bool{}
	for _, v := range done {
		applied[v] = true
	}
	for _, m := range d.migrations {
		if applied[int64(m.Version)] {
			continue
		}
		// The check runs again under the write lock, so two processes cannot
		// both apply a migration.
		ran, err := transact(ctx, d, false, func(q *queries) (bool, error) {
			if n, err := q.tx.SchemaMigrationsHas(ctx, int64(m.Version)); err != nil || n > 0 {
				return false, err
			}
			if _, err := q.raw.ExecContext(ctx, m.SQL); err != nil {
				return false, err
			}
			return true, q.tx.SchemaMigrationsInsert(ctx, dbsqlc.SchemaMigrationsInsertParams{
				Version: int64(m.Version), Name: m.Name, Now: micros(d.now()),
			})
		})
		if err != nil {
			return 0, fmt.Errorf("applying migration %s: %w", m.Name, err)
		}
		if ran {
			d.logger.InfoContext(ctx, "applied migration", slog.Int("version", m.Version), slog.String("name", m.Name))
		}
	}
	v, err := dbsqlc.New(d.w).SchemaMigrationsMax(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading schema version: %w", mapErr(err))
	}
	return int(v), nil
}

// SchemaVersion returns the highest version applied (0 on an empty database)
// and the highest version this binary ships.
func (d *driver) SchemaVersion(ctx context.Context) (applied, latest int, err error) {
	if len(d.migrations) > 0 {
		latest = d.migrations[len(d.migrations)-1].Version
	}
	v, err := dbsqlc.New(d.r).SchemaMigrationsMax(ctx)
	if err != nil {
		return 0, latest, fmt.Errorf("reading schema version: %w", mapErr(err))
	}
	return int(v), latest, nil
}
