-- The work queue. Every query returning an item lists the same columns,
-- which workRow scans by name.

-- name: WorkEnqueue
-- ON CONFLICT DO NOTHING rather than catching the unique violation, so that a
-- duplicate key inside a caller's transaction does not abort it; no row back
-- means the key exists (WorkGetByUniqueKey then reads it).
-- $1 id, $2 kind, $3 payload, $4 conversation_id, $5 agent_id, $6 run_at,
-- $7 priority, $8 max_attempts, $9 unique_key, $10 now.
INSERT INTO work_items (id, kind, payload, conversation_id, agent_id, run_at, priority,
                        max_attempts, unique_key, state, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'available', $10, $10)
ON CONFLICT (unique_key) DO NOTHING
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
          max_attempts, unique_key, state, claimed_by, lease_expires_at, last_error,
          created_at, updated_at, finished_at;

-- name: WorkGetByUniqueKey
SELECT id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
       max_attempts, unique_key, state, claimed_by, lease_expires_at, last_error,
       created_at, updated_at, finished_at
FROM work_items
WHERE unique_key = $1;

-- name: WorkGet
SELECT id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
       max_attempts, unique_key, state, claimed_by, lease_expires_at, last_error,
       created_at, updated_at, finished_at
FROM work_items
WHERE id = $1;

-- name: WorkClaim
-- One statement, so a claim is atomic without an explicit transaction.
-- $1 worker, $2 kinds (empty: any), $3 limit, $4 now, $5 lease expiry.
--
-- exhausted: running items whose lease expired on their last attempt are
--   failed here instead of being handed out again, so a job that kills its
--   worker cannot loop forever.
-- available / expired: the two sources of runnable items, each read in
--   claim order from its own partial index and stopped at its LIMIT (one
--   scan with an OR would sort the whole queue on every claim), locked with
--   SKIP LOCKED so concurrent claimers take disjoint sets. Items of a
--   conversation that has a live running item, or whose lease another owner
--   holds, are left out. Over-fetched (2x) because only one item per
--   conversation survives the next step.
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
        finished_at = $4,
        updated_at = $4
    WHERE id IN (
        SELECT x.id
        FROM work_items x
        WHERE x.state = 'running' AND x.lease_expires_at <= $4
          AND x.attempts >= x.max_attempts
          AND (COALESCE(cardinality($2::text[]), 0) = 0 OR x.kind = ANY ($2::text[]))
        LIMIT 100
        FOR UPDATE SKIP LOCKED
    )
    RETURNING id
), available AS MATERIALIZED (
    SELECT w.id, w.conversation_id, w.state, w.priority, w.run_at, w.created_at
    FROM work_items w
    WHERE w.state = 'available' AND w.run_at <= $4
      AND (COALESCE(cardinality($2::text[]), 0) = 0 OR w.kind = ANY ($2::text[]))
      AND NOT EXISTS (
          SELECT 1 FROM work_items r
          WHERE r.conversation_id = w.conversation_id
            AND r.state = 'running' AND r.lease_expires_at > $4)
      AND NOT EXISTS (
          SELECT 1 FROM conversations c
          WHERE c.id = w.conversation_id
            AND c.lease_owner <> '' AND c.lease_expires_at > $4
            AND (c.lease_owner <> $1 OR c.lease_work_id IS NOT NULL))
    ORDER BY w.priority DESC, w.run_at, w.created_at, w.id
    LIMIT $3::integer * 2
    FOR UPDATE OF w SKIP LOCKED
), expired AS MATERIALIZED (
    SELECT w.id, w.conversation_id, w.state, w.priority, w.run_at, w.created_at
    FROM work_items w
    WHERE w.state = 'running' AND w.lease_expires_at <= $4
      AND w.attempts < w.max_attempts
      AND (COALESCE(cardinality($2::text[]), 0) = 0 OR w.kind = ANY ($2::text[]))
      AND NOT EXISTS (
          SELECT 1 FROM work_items r
          WHERE r.conversation_id = w.conversation_id
            AND r.state = 'running' AND r.lease_expires_at > $4)
      AND NOT EXISTS (
          SELECT 1 FROM conversations c
          WHERE c.id = w.conversation_id
            AND c.lease_owner <> '' AND c.lease_expires_at > $4
            AND (c.lease_owner <> $1 OR c.lease_work_id IS NOT NULL))
    ORDER BY w.priority DESC, w.run_at, w.created_at, w.id
    LIMIT $3::integer * 2
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
      AND (c.lease_owner = '' OR c.lease_expires_at IS NULL OR c.lease_expires_at <= $4
           OR (c.lease_owner = $1 AND c.lease_work_id IS NULL))
    FOR UPDATE SKIP LOCKED
), chosen AS MATERIALIZED (
    SELECT r.id, r.conversation_id
    FROM ranked r
    WHERE r.rn = 1
      AND (r.conversation_id IS NULL OR r.conversation_id IN (SELECT id FROM convs))
    ORDER BY r.priority DESC, r.run_at, r.created_at, r.id
    LIMIT $3::integer
), conv_lease AS (
    UPDATE conversations c
    SET lease_owner = $1,
        lease_expires_at = $5,
        heartbeat_at = $4,
        lease_work_id = ch.id,
        status = CASE WHEN c.status = 'idle' THEN 'running' ELSE c.status END,
        updated_at = $4
    FROM chosen ch
    WHERE c.id = ch.conversation_id
)
UPDATE work_items w
SET state = 'running',
    claimed_by = $1,
    lease_expires_at = $5,
    attempts = w.attempts + 1,
    updated_at = $4
FROM chosen ch
WHERE w.id = ch.id
RETURNING w.id, w.kind, w.payload, w.conversation_id, w.agent_id, w.run_at, w.priority,
          w.attempts, w.max_attempts, w.unique_key, w.state, w.claimed_by,
          w.lease_expires_at, w.last_error, w.created_at, w.updated_at, w.finished_at;

-- name: WorkHeartbeat
-- Extends the item's lease and its conversation's. Refused when the item is
-- no longer running for $2, or when someone else took the conversation's
-- lease after ours expired.
-- $1 id, $2 worker, $3 now, $4 lease expiry.
WITH item AS (
    UPDATE work_items w
    SET lease_expires_at = $4, updated_at = $3
    WHERE w.id = $1 AND w.state = 'running' AND w.claimed_by = $2
      AND NOT EXISTS (
          SELECT 1 FROM conversations c
          WHERE c.id = w.conversation_id
            AND c.lease_owner <> '' AND c.lease_owner <> $2
            AND c.lease_expires_at > $3)
    RETURNING w.id, w.kind, w.payload, w.conversation_id, w.agent_id, w.run_at,
              w.priority, w.attempts, w.max_attempts, w.unique_key, w.state,
              w.claimed_by, w.lease_expires_at, w.last_error, w.created_at,
              w.updated_at, w.finished_at
), conv AS (
    UPDATE conversations c
    SET lease_owner = $2,
        lease_expires_at = $4,
        heartbeat_at = $3,
        lease_work_id = item.id,
        status = CASE WHEN c.status = 'idle' THEN 'running' ELSE c.status END,
        updated_at = $3
    FROM item
    WHERE c.id = item.conversation_id
)
SELECT * FROM item;

-- name: WorkComplete
-- $1 id, $2 worker, $3 now. next_kind is the kind of the conversation's next
-- available item, which the release makes claimable: the driver wakes
-- workers of that kind.
WITH item AS (
    UPDATE work_items
    SET state = 'done', lease_expires_at = NULL, finished_at = $3, updated_at = $3
    WHERE id = $1 AND state = 'running' AND claimed_by = $2
    RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
              max_attempts, unique_key, state, claimed_by, lease_expires_at,
              last_error, created_at, updated_at, finished_at
), conv AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = $3
    FROM item
    WHERE c.id = item.conversation_id AND c.lease_owner = $2
)
SELECT item.*,
       (SELECT n.kind FROM work_items n
        WHERE n.conversation_id = item.conversation_id AND n.state = 'available'
        ORDER BY n.priority DESC, n.run_at, n.created_at
        LIMIT 1) AS next_kind
FROM item;

-- name: WorkFail
-- Back to available at $5, or failed for good once attempts reach
-- max_attempts. Releases the leases like WorkComplete.
-- $1 id, $2 worker, $3 error, $4 now, $5 retry_at.
WITH item AS (
    UPDATE work_items
    SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
        run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE $5 END,
        claimed_by = CASE WHEN attempts >= max_attempts THEN claimed_by ELSE '' END,
        finished_at = CASE WHEN attempts >= max_attempts THEN $4::timestamptz END,
        lease_expires_at = NULL,
        last_error = $3,
        updated_at = $4
    WHERE id = $1 AND state = 'running' AND claimed_by = $2
    RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
              max_attempts, unique_key, state, claimed_by, lease_expires_at,
              last_error, created_at, updated_at, finished_at
), conv AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = $4
    FROM item
    WHERE c.id = item.conversation_id AND c.lease_owner = $2
)
SELECT item.*,
       (SELECT n.kind FROM work_items n
        WHERE n.conversation_id = item.conversation_id AND n.state = 'available'
        ORDER BY n.priority DESC, n.run_at, n.created_at
        LIMIT 1) AS next_kind
FROM item;

-- name: WorkRelease
-- A graceful stop gives back an item it cut off: available again, the
-- attempt not counted, run_at kept (it keeps its place in claim order), and
-- the leases released like WorkComplete.
-- $1 id, $2 worker, $3 now.
WITH item AS (
    UPDATE work_items
    SET state = 'available',
        attempts = GREATEST(attempts - 1, 0),
        claimed_by = '',
        lease_expires_at = NULL,
        updated_at = $3
    WHERE id = $1 AND state = 'running' AND claimed_by = $2
    RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
              max_attempts, unique_key, state, claimed_by, lease_expires_at,
              last_error, created_at, updated_at, finished_at
), conv AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = $3
    FROM item
    WHERE c.id = item.conversation_id AND c.lease_owner = $2
)
SELECT * FROM item;

-- name: WorkReclaim
-- An instance restarting under the same id hands back what its previous run
-- held, without waiting for the leases to expire. The crashed attempt
-- counts: an item on its last attempt is failed, as WorkClaim fails an
-- expired one. Every conversation lease the id holds is released.
-- $1 worker, $2 now.
WITH items AS (
    UPDATE work_items
    SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
        claimed_by = CASE WHEN attempts >= max_attempts THEN claimed_by ELSE '' END,
        finished_at = CASE WHEN attempts >= max_attempts THEN $2::timestamptz END,
        last_error = 'the instance restarted during this attempt',
        lease_expires_at = NULL,
        updated_at = $2
    WHERE state = 'running' AND claimed_by = $1
    RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
              max_attempts, unique_key, state, claimed_by, lease_expires_at,
              last_error, created_at, updated_at, finished_at
), convs AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = $2
    WHERE c.lease_owner = $1
)
SELECT * FROM items;

-- name: WorkCancel
-- $1 id, $2 now. A running item's conversation lease is released with it.
WITH item AS (
    UPDATE work_items
    SET state = 'cancelled', lease_expires_at = NULL, finished_at = $2, updated_at = $2
    WHERE id = $1 AND state IN ('available', 'running')
    RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
              max_attempts, unique_key, state, claimed_by, lease_expires_at,
              last_error, created_at, updated_at, finished_at
), conv AS (
    UPDATE conversations c
    SET lease_owner = '',
        lease_expires_at = NULL,
        heartbeat_at = NULL,
        lease_work_id = NULL,
        status = CASE WHEN c.status = 'running' THEN 'idle' ELSE c.status END,
        updated_at = $2
    FROM item
    WHERE c.id = item.conversation_id AND c.lease_work_id = item.id
)
SELECT item.*,
       (SELECT n.kind FROM work_items n
        WHERE n.conversation_id = item.conversation_id AND n.state = 'available'
        ORDER BY n.priority DESC, n.run_at, n.created_at
        LIMIT 1) AS next_kind
FROM item;

-- name: WorkExists
SELECT EXISTS (SELECT 1 FROM work_items WHERE id = $1);

-- name: WorkList
-- $1 states (empty: all), $2 kind ('' : any), $3 conversation_id (NULL: any),
-- $4 limit (NULL: all).
SELECT id, kind, payload, conversation_id, agent_id, run_at, priority, attempts,
       max_attempts, unique_key, state, claimed_by, lease_expires_at, last_error,
       created_at, updated_at, finished_at
FROM work_items
WHERE (COALESCE(cardinality($1::text[]), 0) = 0 OR state = ANY ($1::text[]))
  AND ($2::text = '' OR kind = $2::text)
  AND ($3::uuid IS NULL OR conversation_id = $3::uuid)
ORDER BY created_at, id
LIMIT $4;

-- name: WorkPrune
-- Keyed items too: a finished key past the cutoff cannot recur (see
-- store.WorkPruneParams). $1 finished before, $2 limit.
DELETE FROM work_items
WHERE id IN (
    SELECT id FROM work_items
    WHERE state IN ('done', 'failed', 'cancelled') AND finished_at < $1
    LIMIT $2);
