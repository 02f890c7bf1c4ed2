-- Side threads and delegations.

-- name: SideThreadInsert :one
INSERT INTO side_threads (id, parent_id, parent_seq, child_id, opener, peer, status, marker_entry_id, progress_at, created_at, updated_at)
VALUES (@id, @parent_id, @parent_seq, @child_id, @opener, @peer, 'in_progress', sqlc.narg(marker_entry_id)::uuid,
        @now::timestamptz, @now::timestamptz, @now::timestamptz)
RETURNING *;

-- name: SideThreadGet :one
SELECT * FROM side_threads WHERE id = @id;

-- name: SideThreadFindOpen :one
SELECT * FROM side_threads
WHERE parent_id = @parent_id AND status = 'in_progress'
  AND ((opener = @a AND peer = @b) OR (opener = @b AND peer = @a))
ORDER BY created_at DESC
LIMIT 1;

-- name: SideThreadByChild :one
SELECT * FROM side_threads WHERE child_id = @child_id;

-- name: SideThreadList :many
SELECT * FROM side_threads WHERE parent_id = @parent_id ORDER BY created_at, id;

-- name: SideThreadMark :one
UPDATE side_threads SET marker_entry_id = @entry_id, updated_at = @now::timestamptz
WHERE id = @id
RETURNING *;

-- name: SideThreadProgress :one
UPDATE side_threads SET
    progress_at = CASE WHEN status = 'in_progress' AND progress_at < @now::timestamptz THEN @now::timestamptz ELSE progress_at END,
    updated_at  = CASE WHEN status = 'in_progress' AND progress_at < @now::timestamptz THEN @now::timestamptz ELSE updated_at END
WHERE id = @id
RETURNING *;

-- name: SideThreadFinish :one
UPDATE side_threads SET status = @status, summary = @summary, finished_by = @finished_by, updated_at = @now::timestamptz
WHERE id = @id AND status = 'in_progress'
RETURNING *;

-- name: SideThreadListStale :many
SELECT * FROM side_threads
WHERE status = 'in_progress' AND progress_at < @before::timestamptz
ORDER BY progress_at, id
LIMIT @max_rows;

-- name: DelegationInsert :one
INSERT INTO delegations (id, from_conversation, from_agent, to_agent, child_id, task, factors, status, created_at, updated_at)
VALUES (@id, @from_conversation, @from_agent, @to_agent, @child_id, @task, @factors, 'running', @now::timestamptz, @now::timestamptz)
RETURNING *;

-- name: DelegationGet :one
SELECT * FROM delegations WHERE id = @id;

-- name: DelegationByChild :one
SELECT * FROM delegations WHERE child_id = @child_id;

-- name: DelegationList :many
SELECT * FROM delegations WHERE from_conversation = @from_conversation ORDER BY created_at, id;

-- name: DelegationFinish :one
UPDATE delegations SET status = @status, result = @result, updated_at = @now::timestamptz, finished_at = @now::timestamptz
WHERE id = @id AND status = 'running'
RETURNING *;

-- name: DelegationTrackRecords :many
SELECT to_agent,
       count(*)::bigint AS delegated,
       count(*) FILTER (WHERE status = 'completed')::bigint AS completed,
       count(*) FILTER (WHERE status = 'failed')::bigint AS failed
FROM delegations
GROUP BY to_agent
ORDER BY to_agent;

-- name: AgentLoads :many
SELECT c.agent_id::uuid AS agent_id,
       count(*)::bigint AS open_work,
       count(*) FILTER (WHERE w.state = 'running')::bigint AS running
FROM work_items w JOIN conversations c ON c.id = w.conversation_id
WHERE w.state IN ('available', 'running') AND c.agent_id IS NOT NULL
GROUP BY c.agent_id
ORDER BY c.agent_id;

-- name: AgentLatencies :many
-- How long each agent's recent turns took, from the turn being queued to
-- its end: turns are the work items that made model calls (usage rows)
-- since the given time, the agent the one the calls were made for.
SELECT u.agent_id::uuid AS agent_id,
       count(*)::bigint AS turns,
       (avg(EXTRACT(EPOCH FROM (w.finished_at - w.created_at))) * 1000000)::bigint AS avg_micros
FROM work_items w
JOIN (SELECT DISTINCT turn_id, agent_id FROM usage_records
      WHERE agent_id IS NOT NULL AND turn_id IS NOT NULL AND created_at >= @since::timestamptz) u
  ON u.turn_id = w.id
WHERE w.kind = 'turn' AND w.state = 'done' AND w.finished_at IS NOT NULL
GROUP BY u.agent_id
ORDER BY u.agent_id;
