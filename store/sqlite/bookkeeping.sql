-- The migration runner's own table, created when the store opens (so that
-- SchemaVersion can read it on the read-only pool) and read by sqlc as part
-- of the schema.
CREATE TABLE IF NOT EXISTS switchboard_schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at INTEGER NOT NULL
);
