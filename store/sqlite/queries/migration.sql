-- The migration runner's bookkeeping (the table is in bookkeeping.sql).

-- name: SchemaMigrationsVersions :many
SELECT version FROM switchboard_schema_migrations ORDER BY version;

-- name: SchemaMigrationsMax :one
SELECT CAST(COALESCE(MAX(version), 0) AS INTEGER) FROM switchboard_schema_migrations;

-- name: SchemaMigrationsHas :one
SELECT COUNT(*) FROM switchboard_schema_migrations WHERE version = sqlc.arg(version);

-- name: SchemaMigrationsInsert :exec
INSERT INTO switchboard_schema_migrations (version, name, applied_at, binary_version, compat_floor)
VALUES (sqlc.arg(version), sqlc.arg(name), CAST(sqlc.arg(now) AS INTEGER), sqlc.narg(binary_version), sqlc.arg(compat_floor));

-- name: SchemaMigrationsRows :many
-- Every applied version with its floor and the binary that applied it
-- (0 and '' where unknown).
SELECT version,
       CAST(COALESCE(compat_floor, 0) AS INTEGER) AS compat_floor,
       CAST(COALESCE(binary_version, '') AS TEXT) AS binary_version
FROM switchboard_schema_migrations
ORDER BY version;
