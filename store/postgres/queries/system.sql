-- Schema management, transactions and notifications.

-- name: SchemaCreateStatement :one
-- Identifiers cannot be bind parameters; the server quotes the schema name
-- (%I) and the driver runs the statement it returns.
SELECT format('CREATE SCHEMA IF NOT EXISTS %I', @schema::text)::text;

-- name: ListenStatement :one
SELECT format('LISTEN %I', @channel::text)::text;

-- name: MigrationLock :exec
-- Held to the end of each migration's transaction. A transaction-scoped lock
-- (not pg_advisory_lock) because a session lock taken through a transaction
-- pooler such as PgBouncer can outlive the migration on a server connection
-- nobody owns. The key is per schema so deployments sharing a database do not
-- wait on each other.
SELECT pg_advisory_xact_lock(1937007972, hashtext(COALESCE(current_schema(), '')));

-- name: MigrationApplied :one
SELECT EXISTS (SELECT 1 FROM switchboard_schema_migrations WHERE version = @version);

-- name: MigrationRecord :exec
INSERT INTO switchboard_schema_migrations (version, name, applied_at, binary_version, compat_floor)
VALUES (@version, @name, @applied_at, sqlc.narg(binary_version), @compat_floor);

-- name: MigrationRows :many
-- Every applied version with its floor and the binary that applied it. The
-- two are read through to_jsonb so that a table made by an earlier binary,
-- which has not been given those columns yet (see migration_table.sql),
-- reads as unknown (0, '') rather than failing: the doctor and the store
-- commands read this without migrating.
SELECT m.version,
       COALESCE((to_jsonb(m) ->> 'compat_floor')::integer, 0)::integer AS compat_floor,
       COALESCE(to_jsonb(m) ->> 'binary_version', '')::text AS binary_version
FROM switchboard_schema_migrations m
ORDER BY m.version;

-- name: MigrationTableReady :one
-- Whether the version table exists with every column this binary records,
-- so that starting instances need not lock it to add them.
SELECT (count(*) = 2)::boolean FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'switchboard_schema_migrations'
  AND column_name IN ('binary_version', 'compat_floor');

-- name: MigrationTableExists :one
SELECT (to_regclass('switchboard_schema_migrations') IS NOT NULL)::boolean;

-- name: MigrationVersion :one
SELECT COALESCE(max(version), 0)::integer FROM switchboard_schema_migrations;

-- name: Notify :batchexec
-- A batch of these is one transaction that only sends wake-ups: it commits
-- without waiting for its WAL to reach the disk (set_config(..., true) lasts
-- until the batch's commit). A crash can lose such a commit, which loses
-- only wake-ups, which listeners survive (they poll); waiting would cost the
-- server a WAL flush per batch, beside the flushes of the writes that caused
-- it.
SELECT pg_notify(@channel::text, @payload::text), set_config('synchronous_commit', 'off', true);

-- name: TxID :one
-- The id of the current transaction, 0 when it has written nothing (no id
-- assigned: nothing it did can commit). Read just before COMMIT so that a
-- lost answer to the COMMIT can be resolved with TxStatus. The txid_*
-- spellings work on every supported server (pg_current_xact_id needs 13).
SELECT COALESCE(txid_current_if_assigned(), 0)::bigint;

-- name: TxStatus :one
-- 'committed', 'aborted' or 'in progress'; '' when too old to know.
SELECT COALESCE(txid_status(@xid::bigint), '')::text;

