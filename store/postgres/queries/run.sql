-- Runs, their steps and their events (migration 0021).

-- name: RunInsert :one
INSERT INTO runs (id, conversation_id, workspace_id, lead_agent, goal, status, check_spec, created_at, updated_at)
VALUES (@id, @conversation_id, sqlc.narg(workspace_id)::uuid, @lead_agent, @goal, 'running', @check_spec,
        @now::timestamptz, @now::timestamptz)
RETURNING *;

-- name: RunStepInsert :exec
INSERT INTO run_steps (id, run_id, position, step_key, title, agent, class, inputs, depends_on, status, created_at, updated_at)
VALUES (@id, @run_id, @position, @step_key, @title, @agent, @class, @inputs, @depends_on, 'pending',
        @now::timestamptz, @now::timestamptz);

-- name: RunGet :one
SELECT * FROM runs WHERE id = @id;

-- name: RunList :many
SELECT * FROM runs
WHERE (sqlc.narg(workspace_id)::uuid IS NULL OR workspace_id = sqlc.narg(workspace_id)::uuid)
  AND (sqlc.narg(conversation_id)::uuid IS NULL OR conversation_id = sqlc.narg(conversation_id)::uuid)
  AND (@status::text = '' OR status = @status::text)
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: RunFinish :one
UPDATE runs SET status = @status, result = @result, updated_at = @now::timestamptz, finished_at = @now::timestamptz
WHERE id = @id AND status = 'running'
RETURNING *;

-- name: RunReopen :one
UPDATE runs SET status = 'running', result = '', updated_at = @now::timestamptz, finished_at = NULL
WHERE id = @id AND status IN ('failed', 'cancelled')
RETURNING *;

-- name: RunStepList :many
SELECT * FROM run_steps WHERE run_id = @run_id ORDER BY position;

-- name: RunStepGet :one
SELECT * FROM run_steps WHERE id = @id;

-- name: RunStepByConversation :one
SELECT * FROM run_steps WHERE conversation_id = @conversation_id ORDER BY updated_at DESC LIMIT 1;

-- name: RunSlotLock :exec
-- Serialises count-then-start for one class until the transaction ends,
-- so two starts at once cannot both take the last slot.
SELECT pg_advisory_xact_lock(hashtextextended('switchboard.run_slots:' || @class::text, 0));

-- name: RunSlotsWorking :one
SELECT count(*) FROM run_steps WHERE class = @class AND status = 'working';

-- name: RunStepStart :one
UPDATE run_steps SET status = 'working', conversation_id = @conversation_id, model = @model,
    attempts = attempts + 1, started_at = @now::timestamptz, finished_at = NULL, updated_at = @now::timestamptz
WHERE id = @id AND status = 'pending'
RETURNING *;

-- name: RunStepFinish :one
UPDATE run_steps SET status = @status, output = @output, error = @error, input_tokens = @input_tokens,
    output_tokens = @output_tokens, cost_micro_usd = @cost_micro_usd, finished_at = @now::timestamptz,
    updated_at = @now::timestamptz
WHERE id = @id AND (status = 'working' OR (status = 'pending' AND @status::text = 'cancelled'))
RETURNING *;

-- name: RunStepReset :one
UPDATE run_steps SET status = 'pending', output = '', error = '', input_tokens = 0, output_tokens = 0,
    cost_micro_usd = 0, started_at = NULL, finished_at = NULL, updated_at = @now::timestamptz
WHERE id = @id AND status IN ('failed', 'cancelled')
RETURNING *;

-- name: RunEventInsert :one
INSERT INTO run_events (run_id, step_key, kind, status, detail, created_at)
VALUES (@run_id, @step_key, @kind, @status, @detail, @now::timestamptz)
RETURNING *;

-- name: RunEventList :many
SELECT * FROM run_events WHERE run_id = @run_id AND id > @after_id ORDER BY id LIMIT @max_rows;

-- name: RunStepChangesSet :one
UPDATE run_steps SET changes = @changes, updated_at = @now::timestamptz
WHERE id = @id
RETURNING *;
