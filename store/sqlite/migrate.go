package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Migrate applies the pending migrations shipped in migrations/sqlite, each
// in its own IMMEDIATE transaction together with its version row (a failure
// leaves the schema and the version as they were before that file), and
// returns the schema version. It applies nothing to a schema too new for
// this binary (see store.Driver.Migrate), and reads the schema again at the
// end, as another process may have migrated it meanwhile.
func (d *driver) Migrate(ctx context.Context) (int, error) {
	before, err := d.SchemaState(ctx)
	if err != nil {
		return 0, err
	}
	if err := before.Err(); err != nil {
		return 0, err
	}
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
				BinaryVersion: sql.NullString{String: d.binary, Valid: d.binary != ""},
				CompatFloor:   sql.NullInt64{Int64: int64(m.Floor), Valid: true},
			})
		})
		if err != nil {
			return 0, fmt.Errorf("applying migration %s: %w", m.Name, err)
		}
		if ran {
			d.logger.InfoContext(ctx, "applied migration", slog.Int("version", m.Version), slog.String("name", m.Name))
		}
	}
	after, err := d.SchemaState(ctx)
	if err != nil {
		return 0, err
	}
	if err := after.Err(); err != nil {
		return 0, err
	}
	if after.Newer() {
		d.logger.WarnContext(ctx, "the schema is newer than this binary, and compatible with it: running on it",
			slog.Int("schema_version", after.Applied), slog.String("applied_by", after.AppliedBy), slog.Int("binary_schema", after.Latest),
			slog.Int("schema_floor", after.Floor), slog.String("binary_version", d.binary))
	}
	return after.Applied, nil
}

func (d *driver) latest() int {
	if len(d.migrations) == 0 {
		return 0
	}
	return d.migrations[len(d.migrations)-1].Version
}

// SchemaVersion returns the highest version applied (0 on an empty database)
// and the highest version this binary ships.
func (d *driver) SchemaVersion(ctx context.Context) (applied, latest int, err error) {
	latest = d.latest()
	v, err := dbsqlc.New(d.r).SchemaMigrationsMax(ctx)
	if err != nil {
		return 0, latest, fmt.Errorf("reading schema version: %w", mapErr(err))
	}
	return int(v), latest, nil
}

// SchemaState reads the version table: see store.Driver.SchemaState.
func (d *driver) SchemaState(ctx context.Context) (*store.SchemaState, error) {
	rows, err := dbsqlc.New(d.r).SchemaMigrationsRows(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the schema's version table: %w", mapErr(err))
	}
	out := make([]store.SchemaMigration, len(rows))
	for i, r := range rows {
		out[i] = store.SchemaMigration{Version: int(r.Version), Floor: int(r.CompatFloor), AppliedBy: r.BinaryVersion}
	}
	return store.NewSchemaState(out, d.latest(), d.binary), nil
}
