-- Backup and restore (see backup.go): the snapshot pg_dump copies, what a
-- store holds, and what a restore target already holds.

-- name: BackupSnapshotExport :one
-- The transaction's snapshot, for pg_dump --snapshot: the dump then sees
-- exactly what this transaction reads.
SELECT pg_export_snapshot()::text;

-- name: BackupCurrentSchema :one
-- The schema the store's tables resolve to (switchboard_schema, else the
-- first of the search_path that exists).
SELECT COALESCE(current_schema(), '')::text;

-- name: BackupConversationCount :one
-- How many conversations the store holds, forks included.
SELECT count(*)::bigint FROM conversations;

-- name: RestoreTargetObjects :many
-- What a restore would collide with: the tables, indexes, sequences, views,
-- functions and types of @schema, or of every schema but the system's when
-- @schema is empty, leaving out those an extension owns. At most five,
-- each with the total.
WITH objects AS (
    SELECT c.relnamespace AS ns, c.relname::text AS name, c.oid AS objid, 'pg_class'::regclass::oid AS classid
    FROM pg_catalog.pg_class AS c
    UNION ALL
    SELECT p.pronamespace, p.proname::text, p.oid, 'pg_proc'::regclass::oid
    FROM pg_catalog.pg_proc AS p
    UNION ALL
    SELECT t.typnamespace, t.typname::text, t.oid, 'pg_type'::regclass::oid
    FROM pg_catalog.pg_type AS t
    WHERE t.typtype IN ('d', 'e', 'm', 'r')
)
SELECT (n.nspname || '.' || o.name)::text AS name, count(*) OVER ()::bigint AS total
FROM objects AS o
JOIN pg_catalog.pg_namespace AS n ON n.oid = o.ns
WHERE CASE WHEN @schema::text = ''
           THEN n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'
           ELSE n.nspname = @schema::text END
  AND NOT EXISTS (
      SELECT 1 FROM pg_catalog.pg_depend AS d
      WHERE d.classid = o.classid AND d.objid = o.objid AND d.deptype = 'e')
ORDER BY 1
LIMIT 5;
