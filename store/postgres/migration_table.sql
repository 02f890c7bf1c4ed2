-- The version table of the migration runner (migrate.go), made ready before
-- the first migration runs. It is not a migration itself: the runner
-- executes this file as it is, and sqlc reads it as part of the schema.
CREATE TABLE IF NOT EXISTS switchboard_schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
-- Who applied each migration and the floor it sets (the lowest schema
-- version a binary may ship and still run on the schema). Added to tables
-- made before they were recorded, where the earlier rows keep NULL; a
-- binary from before them inserts rows without them, which NULL allows.
ALTER TABLE switchboard_schema_migrations ADD COLUMN IF NOT EXISTS binary_version text;
ALTER TABLE switchboard_schema_migrations ADD COLUMN IF NOT EXISTS compat_floor integer;
