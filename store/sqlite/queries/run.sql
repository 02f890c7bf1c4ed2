-- Runs, their steps and their events (migration 0021). SQLite has one
-- writer, so RunStepStart's count and update need no lock.

-- name: RunInsert :one
INSERT INTO runs (id, conversation_id, workspace_id, lead_agent, goal, status, check_spec, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(conversation_id), sqlc.narg(workspace_id), sqlc.arg(lead_agent), sqlc.arg(goal), 'running',
        sqlc.arg(check_spec), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: RunStepInsert :exec
INSERT INTO run_steps (id, run_id, position, step_key, title, agent, class, inputs, depends_on, status, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(run_id), sqlc.arg(position), sqlc.arg(step_key), sqlc.arg(title), sqlc.arg(agent), sqlc.arg(class),
        sqlc.arg(inputs), sqlc.arg(depends_on), 'pending', CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER));

-- name: RunGet :one
SELECT * FROM runs WHERE id = sqlc.arg(id);

-- name: RunList :many
SELECT * FROM runs
WHERE (CAST(sqlc.arg(any_workspace) AS INTEGER) = 1 OR workspace_id = sqlc.narg(workspace_id))
  AND (CAST(sqlc.arg(any_conversation) AS INTEGER) = 1 OR conversation_id = sqlc.arg(conversation_id))
  AND (CAST(sqlc.arg(status) AS TEXT) = '' OR status = sqlc.arg(status))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(max_rows);

-- name: RunFinish :one
UPDATE runs SET status = sqlc.arg(status), result = sqlc.arg(result), updated_at = CAST(sqlc.arg(now) AS INTEGER),
    finished_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND status = 'running'
RETURNING *;

-- name: RunReopen :one
UPDATE runs SET status = 'running', result = '', updated_at = CAST(sqlc.arg(now) AS INTEGER), finished_at = NULL
WHERE id = sqlc.arg(id) AND status IN ('failed', 'cancelled')
RETURNING *;

-- name: RunStepList :many
SELECT * FROM run_steps WHERE run_id = sqlc.arg(run_id) ORDER BY position;

-- name: RunStepGet :one
SELECT * FROM run_steps WHERE id = sqlc.arg(id);

-- name: RunStepByConversation :one
SELECT * FROM run_steps WHERE conversation_id = sqlc.arg(conversation_id) ORDER BY updated_at DESC LIMIT 1;

-- name: RunSlotsWorking :one
SELECT CAST(count(*) AS INTEGER) FROM run_steps WHERE class = sqlc.arg(class) AND status = 'working';

-- name: RunStepStart :one
UPDATE run_steps SET status = 'working', conversation_id = sqlc.arg(conversation_id), model = sqlc.arg(model),
    attempts = attempts + 1, started_at = CAST(sqlc.arg(now) AS INTEGER), finished_at = NULL,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND status = 'pending'
RETURNING *;

-- name: RunStepFinish :one
UPDATE run_steps SET status = sqlc.arg(status), output = sqlc.arg(output), error = sqlc.arg(error),
    input_tokens = sqlc.arg(input_tokens), output_tokens = sqlc.arg(output_tokens), cost_micro_usd = sqlc.arg(cost_micro_usd),
    finished_at = CAST(sqlc.arg(now) AS INTEGER), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND (status = 'working' OR (status = 'pending' AND sqlc.arg(status) = 'cancelled'))
RETURNING *;

-- name: RunStepReset :one
UPDATE run_steps SET status = 'pending', output = '', error = '', input_tokens = 0, output_tokens = 0,
    cost_micro_usd = 0, started_at = NULL, finished_at = NULL, updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND status IN ('failed', 'cancelled')
RETURNING *;

-- name: RunEventInsert :one
INSERT INTO run_events (run_id, step_key, kind, status, detail, created_at)
VALUES (sqlc.arg(run_id), sqlc.arg(step_key), sqlc.arg(kind), sqlc.arg(status), sqlc.arg(detail), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: RunEventList :many
SELECT * FROM run_events WHERE run_id = sqlc.arg(run_id) AND id > sqlc.arg(after_id) ORDER BY id LIMIT sqlc.arg(max_rows);

-- name: RunStepChangesSet :one
UPDATE run_steps SET changes = sqlc.arg(changes), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
RETURNING *;
