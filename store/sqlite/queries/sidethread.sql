-- Side threads and delegations.

-- name: SideThreadInsert :one
INSERT INTO side_threads (id, parent_id, parent_seq, child_id, opener, peer, status, marker_entry_id, progress_at, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(parent_id), sqlc.arg(parent_seq), sqlc.arg(child_id), sqlc.arg(opener), sqlc.arg(peer), 'in_progress',
        sqlc.narg(marker_entry_id), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: SideThreadGet :one
SELECT * FROM side_threads WHERE id = sqlc.arg(id);

-- name: SideThreadFindOpen :one
SELECT * FROM side_threads
WHERE parent_id = sqlc.arg(parent_id) AND status = 'in_progress'
  AND ((opener = sqlc.arg(a) AND peer = sqlc.arg(b)) OR (opener = sqlc.arg(b) AND peer = sqlc.arg(a)))
ORDER BY created_at DESC
LIMIT 1;

-- name: SideThreadByChild :one
SELECT * FROM side_threads WHERE child_id = sqlc.arg(child_id);

-- name: SideThreadList :many
SELECT * FROM side_threads WHERE parent_id = sqlc.arg(parent_id) ORDER BY created_at, id;

-- name: SideThreadMark :one
UPDATE side_threads SET marker_entry_id = sqlc.arg(entry_id), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: SideThreadProgress :one
UPDATE side_threads SET
    progress_at = CASE WHEN status = 'in_progress' AND progress_at < CAST(sqlc.arg(now) AS INTEGER) THEN CAST(sqlc.arg(now) AS INTEGER) ELSE progress_at END,
    updated_at  = CASE WHEN status = 'in_progress' AND progress_at < CAST(sqlc.arg(now) AS INTEGER) THEN CAST(sqlc.arg(now) AS INTEGER) ELSE updated_at END
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: SideThreadFinish :one
UPDATE side_threads SET status = sqlc.arg(status), summary = sqlc.arg(summary), finished_by = sqlc.arg(finished_by),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND status = 'in_progress'
RETURNING *;

-- name: SideThreadListStale :many
SELECT * FROM side_threads
WHERE status = 'in_progress' AND progress_at < CAST(sqlc.arg(before) AS INTEGER)
ORDER BY progress_at, id
LIMIT sqlc.arg(max_rows);

-- name: DelegationInsert :one
INSERT INTO delegations (id, from_conversation, from_agent, to_agent, child_id, task, factors, status, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(from_conversation), sqlc.arg(from_agent), sqlc.arg(to_agent), sqlc.arg(child_id), sqlc.arg(task),
        sqlc.arg(factors), 'running', CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: DelegationGet :one
SELECT * FROM delegations WHERE id = sqlc.arg(id);

-- name: DelegationByChild :one
SELECT * FROM delegations WHERE child_id = sqlc.arg(child_id);

-- name: DelegationList :many
SELECT * FROM delegations WHERE from_conversation = sqlc.arg(from_conversation) ORDER BY created_at, id;

-- name: DelegationFinish :one
UPDATE delegations SET status = sqlc.arg(status), result = sqlc.arg(result), updated_at = CAST(sqlc.arg(now) AS INTEGER),
    finished_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND status = 'running'
RETURNING *;

-- name: DelegationTrackRecords :many
SELECT to_agent,
       CAST(count(*) AS INTEGER) AS delegated,
       CAST(sum(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) AS INTEGER) AS completed,
       CAST(sum(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS INTEGER) AS failed
FROM delegations
GROUP BY to_agent
ORDER BY to_agent;

-- name: AgentLoads :many
SELECT c.agent_id,
       CAST(count(*) AS INTEGER) AS open_work,
       CAST(sum(CASE WHEN w.state = 'running' THEN 1 ELSE 0 END) AS INTEGER) AS running
FROM work w JOIN conversations c ON c.id = w.conversation_id
WHERE w.state IN ('available', 'running') AND c.agent_id IS NOT NULL
GROUP BY c.agent_id
ORDER BY c.agent_id;

-- name: AgentLatencies :many
-- How long each agent's recent turns took, from the turn being queued to
-- its end: turns are the work items that made model calls (usage rows)
-- since the given time, the agent the one the calls were made for.
SELECT u.agent_id,
       CAST(count(*) AS INTEGER) AS turns,
       CAST(avg(w.finished_at - w.created_at) AS INTEGER) AS avg_micros
FROM work w
JOIN (SELECT DISTINCT turn_id, agent_id FROM usage
      WHERE agent_id IS NOT NULL AND turn_id IS NOT NULL AND created_at >= CAST(sqlc.arg(since) AS INTEGER)) u
  ON u.turn_id = w.id
WHERE w.kind = 'turn' AND w.state = 'done' AND w.finished_at IS NOT NULL
GROUP BY u.agent_id
ORDER BY u.agent_id;
