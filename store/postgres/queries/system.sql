-- Schema management and notifications.

-- name: SchemaCreateStatement
-- Identifiers cannot be bind parameters; the server quotes the schema name
-- (%I) and the driver runs the statement it returns.
SELECT format('CREATE SCHEMA IF NOT EXISTS %I', $1::text);

-- name: SchemaDropStatement
SELECT format('DROP SCHEMA IF EXISTS %I CASCADE', $1::text);

-- name: ListenStatement
SELECT format('LISTEN %I', $1::text);

-- name: MigrationLock
-- Held to the end of each migration's transaction. A transaction-scoped lock
-- (not pg_advisory_lock) because a session lock taken through a transaction
-- pooler such as PgBouncer can outlive the migration on a server connection
-- nobody owns. The key is per schema so deployments sharing a database do not
-- wait on each other.
SELECT pg_advisory_xact_lock(1937007972, hashtext(COALESCE(current_schema(), '')));

-- name: MigrationTableCreate
CREATE TABLE IF NOT EXISTS switchboard_schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- name: MigrationApplied
SELECT EXISTS (SELECT 1 FROM switchboard_schema_migrations WHERE version = $1);

-- name: MigrationRecord
INSERT INTO switchboard_schema_migrations (version, name, applied_at)
VALUES ($1, $2, $3);

-- name: MigrationTableExists
SELECT to_regclass('switchboard_schema_migrations') IS NOT NULL;

-- name: MigrationVersion
SELECT COALESCE(max(version), 0) FROM switchboard_schema_migrations;

-- name: Notify
SELECT pg_notify($1, $2);

-- name: TxID
-- The id of the current transaction, NULL when it has written nothing (no id
-- assigned: nothing it did can commit). Read just before COMMIT so that a
-- lost answer to the COMMIT can be resolved with TxStatus. The txid_*
-- spellings work on every supported server (pg_current_xact_id needs 13).
SELECT txid_current_if_assigned();

-- name: TxStatus
-- 'committed', 'aborted' or 'in progress'; NULL when too old to know.
SELECT txid_status($1);
