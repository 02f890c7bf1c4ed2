-- The work queue. Claims run inside one IMMEDIATE transaction on the single
-- writer connection, which is what SKIP LOCKED gives Postgres: no two callers
-- ever see the same candidate as free. kinds, states and ids are JSON arrays
-- (kinds and states NULL for any).

-- name: WorkInsert :one
-- No row back: the unique key is taken. ON CONFLICT keeps the statement from
-- failing, so a caller's transaction goes on.
INSERT INTO work (
    id, kind, payload, conversation_id, agent_id, run_at, priority,
    max_attempts, unique_key, ordering_key, state, created_at, updated_at
) VALUES (
    sqlc.arg(id), sqlc.arg(kind), sqlc.arg(payload), sqlc.narg(conversation_id), sqlc.narg(agent_id),
    sqlc.arg(run_at), sqlc.arg(priority), sqlc.arg(max_attempts), sqlc.narg(unique_key),
    sqlc.narg(ordering_key), 'available', CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER)
)
ON CONFLICT (unique_key) DO NOTHING
RETURNING *;

-- name: WorkGetByUniqueKey :one
SELECT * FROM work WHERE unique_key = CAST(sqlc.arg(unique_key) AS TEXT);

-- name: WorkGet :one
SELECT * FROM work WHERE id = sqlc.arg(id);

-- name: WorkFailExhausted :exec
-- A running item whose lease expired on its last allowed attempt is failed
-- for good instead of being handed out again, so an item that crashes its
-- worker cannot loop forever. Its conversation lease is left alone: the sweep
-- that fails dead turns finds it through ConversationListExpiredLeases.
UPDATE work
SET state = 'failed',
    lease_expires_at = NULL,
    last_error = CASE WHEN last_error = '' THEN 'lease expired on the last attempt' ELSE last_error END,
    finished_at = CAST(sqlc.arg(now) AS INTEGER),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE state = 'running' AND lease_expires_at <= CAST(sqlc.arg(now) AS INTEGER) AND attempts >= max_attempts
  AND (CAST(sqlc.narg(kinds) AS TEXT) IS NULL OR kind IN (SELECT value FROM json_each(CAST(sqlc.narg(kinds) AS TEXT))));

-- name: WorkClaimCandidates :many
-- Runnable items in claim order (priority, then run_at, then insertion),
-- skipping conversations whose live lease someone else holds (or the
-- claimer holds while an item of theirs runs), and taking only the first runnable
-- item of each conversation (an expired running one first: it was already
-- under way). An item with an ordering key waits while an item of its key
-- runs or one inserted before it (rowid order) is not finished; that check
-- reads the key's unfinished items from work_ordering_key_idx. Each arm of
-- the UNION ALL reads in index order and the ORDER BY merges them, so a
-- claim reads about limit rows, not the whole queue.
SELECT w.id, w.priority, w.run_at, CAST(w._rowid_ AS INTEGER) AS rid
FROM work AS w
WHERE w.state = 'available' AND w.run_at <= CAST(sqlc.arg(now) AS INTEGER)
  AND (CAST(sqlc.narg(kinds) AS TEXT) IS NULL OR w.kind IN (SELECT value FROM json_each(CAST(sqlc.narg(kinds) AS TEXT))))
  AND (w.ordering_key IS NULL OR NOT EXISTS (
        -- an item of the key that goes first: a running one, or one
        -- inserted earlier and not finished (due or not: the key's order
        -- is strict)
        SELECT 1 FROM work AS k
        WHERE k.ordering_key = w.ordering_key
          AND k.state IN ('available', 'running')
          AND k.id <> w.id
          AND (k.state = 'running' OR k._rowid_ < w._rowid_)))
  AND (w.conversation_id IS NULL OR (
        NOT EXISTS (
            -- a live conversation lease: someone else's, or the claimer's
            -- own while one of its items runs
            SELECT 1 FROM conversations AS c
            WHERE c.id = w.conversation_id
              AND c.lease_owner <> '' AND c.lease_expires_at > CAST(sqlc.arg(now) AS INTEGER)
              AND (c.lease_owner <> sqlc.arg(worker) OR EXISTS (
                    SELECT 1 FROM work AS r
                    WHERE r.conversation_id = w.conversation_id
                      AND r.state = 'running'
                      AND r.lease_expires_at > CAST(sqlc.arg(now) AS INTEGER))))
    AND NOT EXISTS (
            -- an item of the conversation that goes first: an expired
            -- running one (it was already under way), or an earlier one
            SELECT 1 FROM work AS o
            WHERE o.conversation_id = w.conversation_id
              AND o.id <> w.id
              AND (CAST(sqlc.narg(kinds) AS TEXT) IS NULL OR o.kind IN (SELECT value FROM json_each(CAST(sqlc.narg(kinds) AS TEXT))))
              AND ((o.state = 'running' AND o.lease_expires_at <= CAST(sqlc.arg(now) AS INTEGER) AND o.attempts < o.max_attempts)
                OR (o.state = 'available' AND o.run_at <= CAST(sqlc.arg(now) AS INTEGER)
                  AND (o.priority > w.priority
                    OR (o.priority = w.priority AND (o.run_at < w.run_at
                      OR (o.run_at = w.run_at AND o._rowid_ < w._rowid_)))))))
  ))
UNION ALL
SELECT w.id, w.priority, w.run_at, CAST(w._rowid_ AS INTEGER) AS rid
FROM work AS w
WHERE w.state = 'running' AND w.lease_expires_at <= CAST(sqlc.arg(now) AS INTEGER) AND w.attempts < w.max_attempts
  AND (CAST(sqlc.narg(kinds) AS TEXT) IS NULL OR w.kind IN (SELECT value FROM json_each(CAST(sqlc.narg(kinds) AS TEXT))))
  AND (w.ordering_key IS NULL OR NOT EXISTS (
        -- an item of the key that goes first: a running one, or one
        -- inserted earlier and not finished (due or not: the key's order
        -- is strict)
        SELECT 1 FROM work AS k
        WHERE k.ordering_key = w.ordering_key
          AND k.state IN ('available', 'running')
          AND k.id <> w.id
          AND (k.state = 'running' OR k._rowid_ < w._rowid_)))
  AND (w.conversation_id IS NULL OR (
        NOT EXISTS (
            -- a live conversation lease: someone else's, or the claimer's
            -- own while one of its items runs
            SELECT 1 FROM conversations AS c
            WHERE c.id = w.conversation_id
              AND c.lease_owner <> '' AND c.lease_expires_at > CAST(sqlc.arg(now) AS INTEGER)
              AND (c.lease_owner <> sqlc.arg(worker) OR EXISTS (
                    SELECT 1 FROM work AS r
                    WHERE r.conversation_id = w.conversation_id
                      AND r.state = 'running'
                      AND r.lease_expires_at > CAST(sqlc.arg(now) AS INTEGER))))
    AND NOT EXISTS (
            SELECT 1 FROM work AS o
            WHERE o.conversation_id = w.conversation_id
              AND o.id <> w.id
              AND (CAST(sqlc.narg(kinds) AS TEXT) IS NULL OR o.kind IN (SELECT value FROM json_each(CAST(sqlc.narg(kinds) AS TEXT))))
              AND o.state = 'running' AND o.lease_expires_at <= CAST(sqlc.arg(now) AS INTEGER) AND o.attempts < o.max_attempts
              AND (o.priority > w.priority
                OR (o.priority = w.priority AND (o.run_at < w.run_at
                  OR (o.run_at = w.run_at AND o._rowid_ < w._rowid_)))))
  ))
ORDER BY 2 DESC, 3, 4
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: WorkClaimCandidatesAvailable :many
-- WorkClaimCandidates of available items only
-- (store.WorkClaimParams.AvailableOnly): no expired running item is taken
-- over, and a conversation with any lease on it, live or expired, is left
-- out, so that such an item still goes before the rest of its
-- conversation (a lease is held from an item's claim to its end).
SELECT w.id, w.priority, w.run_at, CAST(w._rowid_ AS INTEGER) AS rid
FROM work AS w
WHERE w.state = 'available' AND w.run_at <= CAST(sqlc.arg(now) AS INTEGER)
  AND (CAST(sqlc.narg(kinds) AS TEXT) IS NULL OR w.kind IN (SELECT value FROM json_each(CAST(sqlc.narg(kinds) AS TEXT))))
  AND (w.ordering_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM work AS k
        WHERE k.ordering_key = w.ordering_key
          AND k.state IN ('available', 'running')
          AND k.id <> w.id
          AND (k.state = 'running' OR k._rowid_ < w._rowid_)))
  AND (w.conversation_id IS NULL OR (
        NOT EXISTS (
            SELECT 1 FROM conversations AS c
            WHERE c.id = w.conversation_id AND c.lease_owner <> '')
    AND NOT EXISTS (
            -- an earlier available item of the conversation goes first
            SELECT 1 FROM work AS o
            WHERE o.conversation_id = w.conversation_id
              AND o.id <> w.id
              AND (CAST(sqlc.narg(kinds) AS TEXT) IS NULL OR o.kind IN (SELECT value FROM json_each(CAST(sqlc.narg(kinds) AS TEXT))))
              AND o.state = 'available' AND o.run_at <= CAST(sqlc.arg(now) AS INTEGER)
              AND (o.priority > w.priority
                OR (o.priority = w.priority AND (o.run_at < w.run_at
                  OR (o.run_at = w.run_at AND o._rowid_ < w._rowid_)))))
  ))
ORDER BY w.priority DESC, w.run_at, w._rowid_
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: WorkClaimMark :many
UPDATE work
SET state = 'running',
    claimed_by = sqlc.arg(worker),
    attempts = attempts + 1,
    lease_expires_at = CAST(sqlc.arg(expires_at) AS INTEGER),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id IN (SELECT value FROM json_each(CAST(sqlc.arg(ids) AS TEXT)))
RETURNING *;

-- name: WorkClaimConversations :exec
-- Takes the conversation lease of every claimed item.
UPDATE conversations
SET lease_owner = sqlc.arg(worker),
    lease_expires_at = CAST(sqlc.arg(expires_at) AS INTEGER),
    heartbeat_at = CAST(sqlc.arg(now) AS INTEGER),
    status = CASE WHEN status = 'idle' THEN 'running' ELSE status END,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id IN (
    SELECT w.conversation_id FROM work AS w
    WHERE w.id IN (SELECT value FROM json_each(CAST(sqlc.arg(ids) AS TEXT))) AND w.conversation_id IS NOT NULL
);

-- name: WorkHeartbeat :one
UPDATE work
SET lease_expires_at = CAST(sqlc.arg(expires_at) AS INTEGER), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND state = 'running' AND claimed_by = sqlc.arg(worker)
RETURNING *;

-- name: WorkComplete :one
UPDATE work
SET state = 'done', lease_expires_at = NULL, finished_at = CAST(sqlc.arg(now) AS INTEGER), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND state = 'running' AND claimed_by = sqlc.arg(worker)
RETURNING *;

-- name: WorkCompleteMany :many
-- WorkComplete for a batch (ids: a JSON array). The driver then releases
-- the conversations' leases.
UPDATE work
SET state = 'done', lease_expires_at = NULL, finished_at = CAST(sqlc.arg(now) AS INTEGER), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id IN (SELECT value FROM json_each(CAST(sqlc.arg(ids) AS TEXT)))
  AND state = 'running' AND claimed_by = sqlc.arg(worker)
RETURNING *;

-- name: WorkFail :one
-- Attempts were counted at claim time, so attempts >= max_attempts means the
-- attempt that just failed was the last one.
UPDATE work
SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
    run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE CAST(sqlc.arg(retry_at) AS INTEGER) END,
    claimed_by = CASE WHEN attempts >= max_attempts THEN claimed_by ELSE '' END,
    finished_at = CASE WHEN attempts >= max_attempts THEN CAST(sqlc.arg(now) AS INTEGER) ELSE NULL END,
    lease_expires_at = NULL,
    last_error = sqlc.arg(error),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND state = 'running' AND claimed_by = sqlc.arg(worker)
RETURNING *;

-- name: WorkRelease :one
-- A graceful stop gives back an item it cut off: available again, the
-- attempt not counted, run_at kept (it keeps its place in claim order). The
-- driver then releases the conversation's lease.
UPDATE work
SET state = 'available',
    attempts = MAX(attempts - 1, 0),
    claimed_by = '',
    lease_expires_at = NULL,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND state = 'running' AND claimed_by = sqlc.arg(worker)
RETURNING *;

-- name: WorkReclaim :many
-- An instance restarting under the same id hands back what its previous run
-- held, without waiting for the leases to expire. The crashed attempt
-- counts: an item on its last attempt is failed, as a claim fails an expired
-- one. The driver then releases every conversation lease the id holds.
UPDATE work
SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
    claimed_by = CASE WHEN attempts >= max_attempts THEN claimed_by ELSE '' END,
    finished_at = CASE WHEN attempts >= max_attempts THEN CAST(sqlc.arg(now) AS INTEGER) ELSE NULL END,
    last_error = 'the instance restarted during this attempt',
    lease_expires_at = NULL,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE state = 'running' AND claimed_by = sqlc.arg(worker)
RETURNING *;

-- name: WorkList :many
-- kind '' and conversation_id NULL match anything; limit -1 means no limit.
SELECT * FROM work
WHERE (CAST(sqlc.narg(states) AS TEXT) IS NULL OR state IN (SELECT value FROM json_each(CAST(sqlc.narg(states) AS TEXT))))
  AND (CAST(sqlc.arg(kind) AS TEXT) = '' OR kind = sqlc.arg(kind))
  AND (sqlc.narg(conversation_id) IS NULL OR conversation_id = sqlc.narg(conversation_id))
ORDER BY created_at, rowid
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: WorkNextKind :one
-- The kind of the conversation's next available item: releasing the
-- conversation's lease makes it claimable, so workers of that kind are woken.
SELECT kind FROM work
WHERE conversation_id = sqlc.arg(conversation_id) AND state = 'available'
ORDER BY priority DESC, run_at, rowid
LIMIT 1;

-- name: WorkNextKindOfKey :one
-- The kind of the next unfinished item of an ordering key: finishing an item
-- of the key makes it claimable, so workers of that kind are woken.
SELECT kind FROM work
WHERE ordering_key = CAST(sqlc.arg(ordering_key) AS TEXT) AND state IN ('available', 'running')
ORDER BY _rowid_
LIMIT 1;

-- name: WorkPrune :execrows
-- Keyed items too: a finished key past the cutoff cannot recur (see
-- store.WorkPruneParams).
DELETE FROM work
WHERE id IN (
    SELECT w.id FROM work AS w
    WHERE w.state IN ('done', 'failed', 'cancelled') AND w.finished_at < CAST(sqlc.arg(before) AS INTEGER)
    LIMIT CAST(sqlc.arg(limit) AS INTEGER));
