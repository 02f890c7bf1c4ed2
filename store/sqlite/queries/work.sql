-- The work queue. Column order of every work row returned here is the one
-- scanWork expects. Claims run inside one IMMEDIATE transaction on the single
-- writer connection, which is what SKIP LOCKED gives Postgres: no two callers
-- ever see the same candidate as free.

-- name: WorkInsert
INSERT INTO work (
    id, kind, payload, conversation_id, agent_id, run_at, priority,
    max_attempts, unique_key, state, created_at, updated_at
) VALUES (
    :id, :kind, :payload, :conversation_id, :agent_id, :run_at, :priority,
    :max_attempts, :unique_key, 'available', :now, :now
)
ON CONFLICT (unique_key) DO NOTHING
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at;

-- name: WorkGetByUniqueKey
SELECT id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at
FROM work
WHERE unique_key = :unique_key;

-- name: WorkGet
SELECT id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at
FROM work
WHERE id = :id;

-- name: WorkFailExhausted
-- A running item whose lease expired on its last allowed attempt is failed
-- for good instead of being handed out again, so an item that crashes its
-- worker cannot loop forever. Its conversation lease is left alone: the sweep
-- that fails dead turns finds it through ConversationListExpiredLeases.
UPDATE work
SET state = 'failed',
    lease_expires_at = NULL,
    last_error = CASE WHEN last_error = '' THEN 'lease expired on the last attempt' ELSE last_error END,
    finished_at = :now,
    updated_at = :now
WHERE state = 'running' AND lease_expires_at <= :now AND attempts >= max_attempts
  AND (:kinds IS NULL OR kind IN (SELECT value FROM json_each(:kinds)));

-- name: WorkClaimCandidates
-- Runnable items in claim order (priority, then run_at, then insertion),
-- skipping conversations whose live lease someone else holds or that already
-- have a running item with a live lease, and taking only the first runnable
-- item of each conversation (an expired running one first: it was already
-- under way). :kinds is NULL for any kind, else a JSON array.
-- Each arm of the UNION ALL reads in index order and the ORDER BY merges
-- them, so a claim reads about :limit rows, not the whole queue.
SELECT w.id, w.priority, w.run_at, w.rowid AS rid
FROM work AS w
WHERE w.state = 'available' AND w.run_at <= :now
  AND (:kinds IS NULL OR w.kind IN (SELECT value FROM json_each(:kinds)))
  AND (w.conversation_id IS NULL OR (
        NOT EXISTS (
            SELECT 1 FROM conversations AS c
            WHERE c.id = w.conversation_id
              AND c.lease_owner NOT IN ('', :worker)
              AND c.lease_expires_at > :now)
    AND NOT EXISTS (
            SELECT 1 FROM work AS r
            WHERE r.conversation_id = w.conversation_id
              AND r.state = 'running'
              AND r.lease_expires_at > :now)
    AND NOT EXISTS (
            -- an item of the conversation that goes first: an expired
            -- running one (it was already under way), or an earlier one
            SELECT 1 FROM work AS o
            WHERE o.conversation_id = w.conversation_id
              AND o.id <> w.id
              AND (:kinds IS NULL OR o.kind IN (SELECT value FROM json_each(:kinds)))
              AND ((o.state = 'running' AND o.lease_expires_at <= :now AND o.attempts < o.max_attempts)
                OR (o.state = 'available' AND o.run_at <= :now
                  AND (o.priority > w.priority
                    OR (o.priority = w.priority AND (o.run_at < w.run_at
                      OR (o.run_at = w.run_at AND o.rowid < w.rowid)))))))
  ))
UNION ALL
SELECT w.id, w.priority, w.run_at, w.rowid AS rid
FROM work AS w
WHERE w.state = 'running' AND w.lease_expires_at <= :now AND w.attempts < w.max_attempts
  AND (:kinds IS NULL OR w.kind IN (SELECT value FROM json_each(:kinds)))
  AND (w.conversation_id IS NULL OR (
        NOT EXISTS (
            SELECT 1 FROM conversations AS c
            WHERE c.id = w.conversation_id
              AND c.lease_owner NOT IN ('', :worker)
              AND c.lease_expires_at > :now)
    AND NOT EXISTS (
            SELECT 1 FROM work AS r
            WHERE r.conversation_id = w.conversation_id
              AND r.state = 'running'
              AND r.lease_expires_at > :now)
    AND NOT EXISTS (
            SELECT 1 FROM work AS o
            WHERE o.conversation_id = w.conversation_id
              AND o.id <> w.id
              AND (:kinds IS NULL OR o.kind IN (SELECT value FROM json_each(:kinds)))
              AND o.state = 'running' AND o.lease_expires_at <= :now AND o.attempts < o.max_attempts
              AND (o.priority > w.priority
                OR (o.priority = w.priority AND (o.run_at < w.run_at
                  OR (o.run_at = w.run_at AND o.rowid < w.rowid)))))
  ))
ORDER BY 2 DESC, 3, 4
LIMIT :limit;

-- name: WorkClaimMark
-- :ids is a JSON array of the candidate ids.
UPDATE work
SET state = 'running',
    claimed_by = :worker,
    attempts = attempts + 1,
    lease_expires_at = :expires_at,
    updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids))
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at;

-- name: WorkClaimConversations
-- Takes the conversation lease of every claimed item.
UPDATE conversations
SET lease_owner = :worker,
    lease_expires_at = :expires_at,
    heartbeat_at = :now,
    status = CASE WHEN status = 'idle' THEN 'running' ELSE status END,
    updated_at = :now
WHERE id IN (
    SELECT conversation_id FROM work
    WHERE id IN (SELECT value FROM json_each(:ids)) AND conversation_id IS NOT NULL
);

-- name: WorkHeartbeat
UPDATE work
SET lease_expires_at = :expires_at, updated_at = :now
WHERE id = :id AND state = 'running' AND claimed_by = :worker
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at;

-- name: WorkComplete
UPDATE work
SET state = 'done', lease_expires_at = NULL, finished_at = :now, updated_at = :now
WHERE id = :id AND state = 'running' AND claimed_by = :worker
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at;

-- name: WorkFail
-- Attempts were counted at claim time, so attempts >= max_attempts means the
-- attempt that just failed was the last one.
UPDATE work
SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
    run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE :retry_at END,
    claimed_by = CASE WHEN attempts >= max_attempts THEN claimed_by ELSE '' END,
    finished_at = CASE WHEN attempts >= max_attempts THEN :now ELSE NULL END,
    lease_expires_at = NULL,
    last_error = :error,
    updated_at = :now
WHERE id = :id AND state = 'running' AND claimed_by = :worker
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at;

-- name: WorkRelease
-- A graceful stop gives back an item it cut off: available again, the
-- attempt not counted, run_at kept (it keeps its place in claim order). The
-- driver then releases the conversation's lease.
UPDATE work
SET state = 'available',
    attempts = MAX(attempts - 1, 0),
    claimed_by = '',
    lease_expires_at = NULL,
    updated_at = :now
WHERE id = :id AND state = 'running' AND claimed_by = :worker
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at;

-- name: WorkReclaim
-- An instance restarting under the same id hands back what its previous run
-- held, without waiting for the leases to expire. The crashed attempt
-- counts: an item on its last attempt is failed, as a claim fails an expired
-- one. The driver then releases every conversation lease the id holds.
UPDATE work
SET state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'available' END,
    claimed_by = CASE WHEN attempts >= max_attempts THEN claimed_by ELSE '' END,
    finished_at = CASE WHEN attempts >= max_attempts THEN :now ELSE NULL END,
    last_error = 'the instance restarted during this attempt',
    lease_expires_at = NULL,
    updated_at = :now
WHERE state = 'running' AND claimed_by = :worker
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at;

-- name: WorkCancel
UPDATE work
SET state = 'cancelled', lease_expires_at = NULL, finished_at = :now, updated_at = :now
WHERE id = :id AND state IN ('available', 'running')
RETURNING id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at;

-- name: WorkList
-- :states is NULL for any state, else a JSON array; :kind '' and
-- :conversation_id NULL match anything; :limit -1 means no limit.
SELECT id, kind, payload, conversation_id, agent_id, run_at, priority,
    attempts, max_attempts, unique_key, state, claimed_by, lease_expires_at,
    last_error, created_at, updated_at, finished_at
FROM work
WHERE (:states IS NULL OR state IN (SELECT value FROM json_each(:states)))
  AND (:kind = '' OR kind = :kind)
  AND (:conversation_id IS NULL OR conversation_id = :conversation_id)
ORDER BY created_at, rowid
LIMIT :limit;

-- name: WorkNextKind
-- The kind of the conversation's next available item: releasing the
-- conversation's lease makes it claimable, so workers of that kind are woken.
SELECT kind FROM work
WHERE conversation_id = :conversation_id AND state = 'available'
ORDER BY priority DESC, run_at, rowid
LIMIT 1;

-- name: WorkPrune
-- Keyed items too: a finished key past the cutoff cannot recur (see
-- store.WorkPruneParams).
DELETE FROM work
WHERE id IN (
    SELECT id FROM work
    WHERE state IN ('done', 'failed', 'cancelled') AND finished_at < :before
    LIMIT :limit);
