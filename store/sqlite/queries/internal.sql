-- Statements the driver itself runs: schema bookkeeping, connection checks
-- and the savepoints that make each call atomic inside a caller's transaction.

-- name: SchemaMigrationsCreate
CREATE TABLE IF NOT EXISTS switchboard_schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at INTEGER NOT NULL
);

-- name: SchemaMigrationsTableExists
SELECT COUNT(*) FROM sqlite_master
WHERE type = 'table' AND name = 'switchboard_schema_migrations';

-- name: SchemaMigrationsVersions
SELECT version FROM switchboard_schema_migrations ORDER BY version;

-- name: SchemaMigrationsMax
SELECT COALESCE(MAX(version), 0) FROM switchboard_schema_migrations;

-- name: SchemaMigrationsHas
SELECT COUNT(*) FROM switchboard_schema_migrations WHERE version = :version;

-- name: SchemaMigrationsInsert
INSERT INTO switchboard_schema_migrations (version, name, applied_at)
VALUES (:version, :name, :now);

-- name: JournalMode
PRAGMA journal_mode;

-- name: SavepointBegin
SAVEPOINT switchboard_call;

-- name: SavepointRelease
RELEASE switchboard_call;

-- name: SavepointRollback
-- Undoes the call's writes; SavepointRelease then closes the savepoint.
ROLLBACK TO switchboard_call;
