-- The migration runner's own table, created when the store opens (so that
-- SchemaVersion can read it on the read-only pool) and read by sqlc as part
-- of the schema. binary_version and compat_floor record who applied each
-- migration and the floor it sets (the lowest schema version a binary may
-- ship and still run on the schema); a table made before they were recorded
-- is given them when the store opens (bookkeepingColumns in sqlite.go), its
-- earlier rows keeping NULL.
CREATE TABLE IF NOT EXISTS switchboard_schema_migrations (
    version        INTEGER PRIMARY KEY,
    name           TEXT NOT NULL,
    applied_at     INTEGER NOT NULL,
    binary_version TEXT,
    compat_floor   INTEGER
);
