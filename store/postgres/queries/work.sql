-- The work queue. Every query returning an item returns the whole row
-- (dbsqlc.WorkItem); those that release a conversation's lease add
-- next_kind, the kind of the conversation's next available item, else of the
-- next available item of the item's ordering key ('' for none), which the
-- release makes claimable: the driver wakes workers of that kind. (The
-- SELECT reads the statement's snapshot, where the item itself is still
-- running: hence the key's next item is found as the first available one
-- other than the item.)

-- name: WorkEnqueue :one
-- ON CONFLICT DO NOTHING rather than catching the unique violation, so that a
-- duplicate key inside a caller's transaction does not abort it; no row back
-- means the key exists (WorkGetByUniqueKey then reads it).
INSERT INTO work_items (id, kind, payload, conversation_id, agent_id, run_at, priority,
                        max_attempts, unique_key, ordering_key, state, created_at, updated_at)
VALUES (@id, @kind, @payload, @conversation_id, @agent_id, @run_at, @priority,
        @max_attempts, @unique_key, @ordering_key, 'available', @now::timestamptz, @now::timestamptz)
ON CONFLICT (unique_key) DO NOTHING
RETURNING *;

-- name: WorkEnqueueMany :many
-- WorkEnqueue of several items in one statement. item_rows is a JSON array of
-- the rows to insert, in insertion order (see the driver's enqueueRow).
-- Two items of one call with the same key: the first inserts, the second
-- does nothing. No row back for an item: its key exists
-- (WorkListByUniqueKeys then reads it).
INSERT INTO work_items (id, kind, payload, conversation_id, agent_id, run_at, priority,
                        max_attempts, unique_key, ordering_key, state, created_at, updated_at)
SELECT u.id, u.kind, u.payload, u.conversation_id, u.agent_id, u.run_at, u.priority,
       u.max_attempts, u.unique_key, u.ordering_key, 'available', u.now, u.now
FROM json_to_recordset(@item_rows::json)
     AS u(id uuid, kind text, payload json, conversation_id uuid, agent_id uuid, run_at timestamptz,
          priority integer, max_attempts integer, unique_key text, ordering_key text, now timestamptz, n bigint)
ORDER BY u.n
ON CONFLICT (unique_key) DO NOTHING
RETURNING *;

-- name: WorkListByUniqueKeys :many
SELECT * FROM work_items WHERE unique_key = ANY (@unique_keys::text[]);

-- name: WorkGetByUniqueKey :one
SELECT * FROM work_items WHERE unique_key = @unique_key;

-- name: WorkGet :one
SELECT * FROM work_items WHERE id = @id;

-- name: WorkExists :one
SELECT EXISTS (SELECT 1 FROM work_items WHERE id = @id);

-- name: WorkClaim :many
-- One statement, so a claim is atomic without an explicit transaction.
-- kinds empty means any kind; lease_expires_at is the new leases' expiry.
--
-- exhausted: running items whose lease expired on their last attempt are
--   failed here instead of being handed out again, so a job that kills its
--   worker cannot loop forever.
-- available / expired: the two sources of runnable items, each read in
--   claim order from its own partial index and stopped at its LIMIT (one
--   scan with an OR would sort the whole queue on every claim), locked with
--   SKIP LOCKED so concurrent claimers take disjoint sets. Items of a
--   conversation whose lease is held are left out: the conversation lease
--   alone says whether a turn runs there (every claim takes it, and it is
--   released only when its item stops running or by its owner). Over-fetched
--   (2x) because only one item per conversation survives the next step.
--   An item with an ordering key is left out while an item of its key runs
--   or one inserted before it (created_at, then id) is unfinished, read from
--   work_items_ordering_key_idx. A claimer that locked the key's first item
--   has not committed it as running, but that item is still available in
--   everyone's snapshot, so the next one stays out: one item of a key at a
--   time, without a lock of its own.
-- ranked: one item per conversation; an expired running item goes first (it
--   was already under way), then claim order.
-- convs: the conversations of the survivors, locked with SKIP LOCKED and
--   re-checked on their latest row version (a claimer that committed since
--   our snapshot has taken the lease, and its row now fails the test), so two
--   claimers never both take one conversation.
-- chosen / conv_lease / the final UPDATE: take the item and its
--   conversation's lease.
WITH exhausted AS (
    UPDATE work_items
    SET state = 'failed',
        last_error = 'lease expired on the final attempt',
        lease_expires_at = NULL,
        finished_at = @now::timestamptz,
        updated_at = @now::timestamptz
    WHERE work_items.id IN (
        SELECT x.id
        FROM work_items x
        WHERE x.state = 'running' AND x.lease_expires_at <= @now::timestamptz
          AND x.attempts >= x.max_attempts
          AND (COALESCE(cardinality(@kinds::text[]), 0) = 0 OR x.kind = ANY (@kinds::text[]))
        LIMIT 100
        FOR UPDATE SKIP LOCKED
    )
    RETURNING work_items.id
), available AS MATERIALIZED (
    SELECT w.id, w.conversation_id, w.state, w.priority, w.run_at, w.created_at
    FROM work_items w
    WHERE w.state = 'available' AND w.run_at <= @now::timestamptz
      AND (COALESCE(cardinality(@kinds::text[]), 0) = 0 OR w.kind = ANY (@kinds::text[]))
      AND (w.ordering_key IS NULL OR NOT EXISTS (
          SELECT 1 FROM work_items k
          WHERE k.ordering_key = w.ordering_key
            AND k.state IN ('available', 'running')
            AND k.id <> w.id
            AND (k.state = 'running' OR (k.created_at, k.id) < (w.created_at, w.id))))
      AND NOT EXISTS (
          SELECT 1 FROM conversations c
          WHERE c.id = w.conversation_id
            AND c.lease_owner <> '' AND c.lease_expires_at > @now::timestamptz)
    ORDER BY w.priority DESC, w.run_at, w.created_at, w.id
    LIMIT 2 * @max_items::integer
    FOR UPDATE OF w SKIP LOCKED
), expired AS MATERIALIZED (
    SELECT w.id, w.conversation_id, w.state, w.priority, w.run_at, w.created_at
    FROM work_items w
    WHERE w.state = 'running' AND w.lease_expires_at <= @now::timestamptz
      AND w.attempts < w.max_attempts
      AND (COALESCE(cardinality(@kinds::text[]), 0) = 0 OR w.kind = ANY (@kinds::text[]))
      AND (w.ordering_key IS NULL OR NOT EXISTS (
          SELECT 1 FROM work_items k
          WHERE k.ordering_key = w.ordering_key
            AND k.state IN ('available', 'running')
            AND k.id <> w.id
            AND (k.state = 'running' OR (k.created_at, k.id) < (w.created_at, w.id))))
      AND NOT EXISTS (
          SELECT 1 FROM conversations c
          WHERE c.id = w.conversation_id
            AND c.lease_owner <> '' AND c.lease_expires_at > @now::timestamptz)
    ORDER BY w.priority DESC, w.run_at, w.created_at, w.id
    LIMIT 2 * @max_items::integer
    FOR UPDATE OF w SKIP LOCKED
), candidates AS (
    SELECT * FROM available
    UNION ALL
    SELECT * FROM expired
), ranked AS (
    SELECT cand.*,
           row_number() OVER (
               PARTITION BY COALESCE(cand.conversation_id, cand.id)
               ORDER BY (cand.state = 'running') DESC, cand.priority DESC,
                        cand.run_at, cand.created_at, cand.id) AS rn
    FROM candidates cand
), convs AS MATERIALIZED (
    SELECT c.id
    FROM conversations c
    WHERE c.id IN (SELECT r.conversation_id FROM ranked r WHERE r.rn = 1)
      AND (c.lease_owner = '' OR c.lease_expires_at IS NULL OR c.lease_expires_at <= @now::timestamptz)
    FOR UPDATE SKIP LOCKED
), chosen AS MATERIALIZED (
    SELECT r.id, r.conversation_id
    FROM ranked r
    WHERE r.rn = 1
      AND (r.conversation_id IS NULL OR r.conversation_id IN (SELECT id FROM convs))
    ORDER BY r.priority DESC, r.run_at, r.created_at, r.id
    LIMIT @max_items::integer
), conv_lease AS (
    UPDATE conversations c
    SET lease_owner = @worker::text,
        lease_expires_at = @lease_expires_at::timestamptz,
        heartbeat_at = @now::timestamptz,
        lease_work_id = ch.id,
        status = CASE WHEN c.status = 'idle' THEN 'running' ELSE c.status END,
        updated_at = @now::timestamptz
    FROM chosen ch
    WHERE c.id = ch.conversation_id
)
UPDATE work_items w
SET state = 'running',
    claimed_by = @worker::text,
    lease_expires_at = @lease_expires_at::timestamptz,
    attempts = w.attempts + 1,
    updated_at = @now::timestamptz
FROM chosen ch
WHERE w.id = ch.id
RETURNING w.*;

-- name: WorkClaimAvailable :many
-- WorkClaim of available items only (store.WorkClaimParams.AvailableOnly):
-- running items whose lease expired are neither taken over nor failed
-- here, which a worker's claims leave to one claim in a while (see
-- core.Worker) instead of reading the running items on every claim. So
-- that such an item still goes before the rest of its conversation, a
-- conversation with any lease on it, live or expired, is left out (a lease
-- is held from an item's claim to its end: an expired one is an item to
-- take over). The rest is WorkClaim's statement, less its exhausted and
-- expired parts.
WITH available AS MATERIALIZED (
    SELECT w.id, w.conversation_id, w.priority, w.run_at, w.created_at
    FROM work_items w
    WHERE w.state = 'available' AND w.run_at <= @now::timestamptz
      AND (COALESCE(cardinality(@kinds::text[]), 0) = 0 OR w.kind = ANY (@kinds::text[]))
      AND (w.ordering_key IS NULL OR NOT EXISTS (
          SELECT 1 FROM work_items k
          WHERE k.ordering_key = w.ordering_key
            AND k.state IN ('available', 'running')
            AND k.id <> w.id
            AND (k.state = 'running' OR (k.created_at, k.id) < (w.created_at, w.id))))
      AND NOT EXISTS (
          SELECT 1 FROM conversations c
          WHERE c.id = w.conversation_id AND c.lease_owner <> '')
    ORDER BY w.priority DESC, w.run_at, w.created_at, w.id
    LIMIT 2 * @max_items::integer
    FOR UPDATE OF w SKIP LOCKED
), ranked AS (
    SELECT a.*,
           row_number() OVER (
               PARTITION BY COALESCE(a.conversation_id, a.id)
               ORDER BY a.priority DESC, a.run_at, a.created_at, a.id) AS rn
    FROM available a
), convs AS MATERIALIZED (
    SELECT c.id
    FROM conversations c
    WHERE c.id IN (SELECT r.conversation_id FROM ranked r WHERE r.rn = 1)
      AND c.lease_owner = ''
    FOR UPDATE SKIP LOCKED
), chosen AS MATERIALIZED (
    SELECT r.id, r.conversation_id
    FROM ranked r
    WHERE r.rn = 1
      AND (r.conversation_id IS NULL OR r.conversation_id IN (SELECT id FROM convs))
    ORDER BY r.priority DESC, r.run_at, r.created_at, r.id
    LIMIT @max_items::integer
), conv_lease AS (
    UPDATE conversations c
    SET lease_owner = @worker::text,
        lease_expires_at = @lease_expires_at::timestamptz,
        heartbeat_at = @now::timestamptz,
        lease_work_id = ch.id,
        status = CASE WHEN c.status = 'idle' THEN 'running' ELSE c.status END,
        updated_at = @now::timestamptz
    FROM chosen ch
    WHERE c.id = ch.conversation_id
)
UPDATE work_items w
SET state = 'running',
    claimed_by = @worker::text,
    lease_expires_at = @lease_expires_at::timestamptz,
    attempts = w.attempts + 1,
    updated_at = @now::timestamptz
FROM chosen ch
WHERE w.id = ch.id
RETURNING w.*;

-- name: WorkHeartbeat :one
-- Extends the item's lease and its conversation's. Refused when the item is
-- no longer running for worker, or when someone else took the
-- conversation's lease after ours expired.
WITH item AS (
    UPDATE work_items w
    SET lease_expires_at = @lease_expires_at::timestamptz, updated_at = @now::timestamptz
    WHERE w.id = @id AND w.state = 'running' AND w.claimed_by = @worker::text
      AND NOT EXISTS (
          SELECT 1 FROM conversations c
          WHERE c.id = w.conversation_id
            AND c.lease_owner <> '' AND c.lease_owner <> @worker::text
            AND c.lease_expires_at > @now::timestamptz)
    RETURNING w.*
), conv AS (
    UPDATE conversations c
    SET lease_owner = @worker::text,
        lease_expires_at = @lease_expires_at::timestamptz,
        heartbeat_at = @now::timestamptz,
        lease_work_id = item.id,
        status = CASE WHEN c.status = 'idle' THEN 'running' ELSE c.status END,
        updated_at = @now::timestamptz
    FROM item
    WHERE c.id = item.conversation_id
)
SELECT * FROM item;

-- name: WorkComplete :one
WITH item AS (
    UPDATE work_items
    SET state = 'done', lease_expires_at = NULL, finished_at = @now::timestamptz, updated_at = @now::timestamptz
    WHERE work_items.id = @id AND state = 'running' AND claimed_by = @worker::text
    RETURNING work_items.*
), conv AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = @now::timestamptz
    FROM item
    WHERE c.id = item.conversation_id AND c.lease_owner = @worker::text
)
SELECT item.*,
       COALESCE((SELECT n.kind FROM work_items n
                 WHERE n.conversation_id = item.conversation_id AND n.state = 'available'
                 ORDER BY n.priority DESC, n.run_at, n.created_at
                 LIMIT 1),
                (SELECT n.kind FROM work_items n
                 WHERE n.ordering_key = item.ordering_key AND n.state = 'available' AND n.id <> item.id
                 ORDER BY n.created_at, n.id
                 LIMIT 1), '')::text AS next_kind
FROM item;

-- name: WorkCompleteMany :many
-- WorkComplete for a batch: the batch completer's one statement per flush.
-- Ids not running under worker match nothing and come back absent.
WITH item AS (
    UPDATE work_items
    SET state = 'done', lease_expires_at = NULL, finished_at = @now::timestamptz, updated_at = @now::timestamptz
    WHERE work_items.id = ANY (CAST(@ids::text[] AS uuid[])) AND state = 'running' AND claimed_by = @worker::text
    RETURNING work_items.*
), conv AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = @now::timestamptz
    FROM item
    WHERE c.id = item.conversation_id AND c.lease_owner = @worker::text
)
SELECT item.*,
       COALESCE((SELECT n.kind FROM work_items n
                 WHERE item.conversation_id IS NOT NULL
                   AND n.conversation_id = item.conversation_id AND n.state = 'available'
                 ORDER BY n.priority DESC, n.run_at, n.created_at
                 LIMIT 1),
                (SELECT n.kind FROM work_items n
                 WHERE item.ordering_key IS NOT NULL
                   AND n.ordering_key = item.ordering_key AND n.state = 'available' AND n.id <> item.id
                 ORDER BY n.created_at, n.id
                 LIMIT 1), '')::text AS next_kind
FROM item;

-- name: WorkFail :one
-- Back to available at retry_at, or failed for good once attempts reach
-- max_attempts. Releases the leases like WorkComplete.
WITH item AS (
    UPDATE work_items
    SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
        run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE @retry_at::timestamptz END,
        claimed_by = CASE WHEN attempts >= max_attempts THEN claimed_by ELSE '' END,
        finished_at = CASE WHEN attempts >= max_attempts THEN @now::timestamptz END,
        lease_expires_at = NULL,
        last_error = @last_error,
        updated_at = @now::timestamptz
    WHERE work_items.id = @id AND state = 'running' AND claimed_by = @worker::text
    RETURNING work_items.*
), conv AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = @now::timestamptz
    FROM item
    WHERE c.id = item.conversation_id AND c.lease_owner = @worker::text
)
SELECT item.*,
       COALESCE((SELECT n.kind FROM work_items n
                 WHERE n.conversation_id = item.conversation_id AND n.state = 'available'
                 ORDER BY n.priority DESC, n.run_at, n.created_at
                 LIMIT 1),
                (SELECT n.kind FROM work_items n
                 WHERE n.ordering_key = item.ordering_key AND n.state = 'available' AND n.id <> item.id
                 ORDER BY n.created_at, n.id
                 LIMIT 1), '')::text AS next_kind
FROM item;

-- name: WorkRelease :one
-- A graceful stop gives back an item it cut off: available again, the
-- attempt not counted, run_at kept (it keeps its place in claim order), and
-- the leases released like WorkComplete.
WITH item AS (
    UPDATE work_items
    SET state = 'available',
        attempts = GREATEST(attempts - 1, 0),
        claimed_by = '',
        lease_expires_at = NULL,
        updated_at = @now::timestamptz
    WHERE work_items.id = @id AND state = 'running' AND claimed_by = @worker::text
    RETURNING work_items.*
), conv AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = @now::timestamptz
    FROM item
    WHERE c.id = item.conversation_id AND c.lease_owner = @worker::text
)
SELECT * FROM item;

-- name: WorkReclaim :many
-- An instance restarting under the same id hands back what its previous run
-- held, without waiting for the leases to expire. The crashed attempt
-- counts: an item on its last attempt is failed, as WorkClaim fails an
-- expired one. Every conversation lease the id holds is released.
WITH items AS (
    UPDATE work_items
    SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
        claimed_by = CASE WHEN attempts >= max_attempts THEN claimed_by ELSE '' END,
        finished_at = CASE WHEN attempts >= max_attempts THEN @now::timestamptz END,
        last_error = 'the instance restarted during this attempt',
        lease_expires_at = NULL,
        updated_at = @now::timestamptz
    WHERE state = 'running' AND claimed_by = @worker::text
    RETURNING work_items.*
), convs AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = @now::timestamptz
    WHERE c.lease_owner = @worker::text
)
SELECT * FROM items;

-- name: WorkList :many
-- Empty states, '' kind and NULL conversation_id match all; max_rows 0 means
-- no limit.
SELECT * FROM work_items
WHERE (COALESCE(cardinality(@states::text[]), 0) = 0 OR state = ANY (@states::text[]))
  AND (@kind::text = '' OR kind = @kind::text)
  AND (sqlc.narg(conversation_id)::uuid IS NULL OR conversation_id = sqlc.narg(conversation_id)::uuid)
ORDER BY created_at, id
LIMIT NULLIF(@max_rows::integer, 0);

-- name: WorkPrune :execrows
-- Keyed items too: a finished key past the cutoff cannot recur (see
-- store.WorkPruneParams).
DELETE FROM work_items
WHERE id IN (
    SELECT p.id FROM work_items p
    WHERE p.state IN ('done', 'failed', 'cancelled') AND p.finished_at < @finished_before::timestamptz
    LIMIT @max_rows);
