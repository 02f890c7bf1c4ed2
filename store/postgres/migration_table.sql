-- The version table of the migration runner (migrate.go), created before
-- the first migration runs. It is not a migration itself: the runner
-- executes this file as it is, and sqlc reads it as part of the schema.
CREATE TABLE IF NOT EXISTS switchboard_schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
