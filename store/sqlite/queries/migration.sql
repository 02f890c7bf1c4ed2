-- The migration runner's bookkeeping (the table is in bookkeeping.sql).

-- name: SchemaMigrationsVersions :many
SELECT version FROM switchboard_schema_migrations ORDER BY version;

-- name: SchemaMigrationsMax :one
SELECT CAST(COALESCE(MAX(version), 0) AS INTEGER) FROM switchboard_schema_migrations;

-- name: SchemaMigrationsHas :one
SELECT COUNT(*) FROM switchboard_schema_migrations WHERE version = sqlc.arg(version);

-- name: SchemaMigrationsInsert :exec
INSERT INTO switchboard_schema_migrations (version, name, applied_at)
VALUES (sqlc.arg(version), sqlc.arg(name), CAST(sqlc.arg(now) AS INTEGER));
