-- The scheduler's tables (migration 0002). Every query returning a schedule
-- returns the whole row (dbsqlc.Schedule); likewise runs
-- (dbsqlc.ScheduleRun). A schedule's place is stored as store.Place.Columns
-- encodes it; schedules have no thread column (a schedule never targets a
-- thread).

-- name: ScheduleLock :exec
-- Serialises count-then-create for one agent and kind until the transaction
-- ends, so a per-agent limit cannot be passed by two creates at once.
SELECT pg_advisory_xact_lock(hashtextextended('switchboard.schedules:' || @agent::text || ':' || @kind::text, 0));

-- name: ScheduleCount :one
SELECT count(*) FROM schedules WHERE agent = @agent AND kind = @kind AND state <> 'done';

-- name: ScheduleCreate :one
-- Without upsert a taken name returns no row (ON CONFLICT ... WHERE false
-- updates nothing), and inside a caller's transaction that does not abort
-- it. With upsert an existing schedule gets the new definition and keeps its
-- state, data and run history; its next run is replaced only when the spec
-- or the time zone changed (every SET expression reads the old row).
INSERT INTO schedules (id, kind, agent, name, owner, platform, workspace, channel, spec,
                       time_zone, instruction, config, data, missed, source, state,
                       next_run_at, created_at, updated_at)
VALUES (@id, @kind, @agent, @name, @owner, @platform, @workspace, @channel, @spec,
        @time_zone, @instruction, @config, @data, @missed, @source, @state,
        @next_run_at, @now::timestamptz, @now::timestamptz)
ON CONFLICT (agent, kind, name) DO UPDATE
SET (owner, platform, workspace, channel, spec, time_zone, instruction, config, missed, source, updated_at)
      = (EXCLUDED.owner, EXCLUDED.platform, EXCLUDED.workspace, EXCLUDED.channel, EXCLUDED.spec,
         EXCLUDED.time_zone, EXCLUDED.instruction, EXCLUDED.config, EXCLUDED.missed, EXCLUDED.source,
         EXCLUDED.updated_at),
    next_run_at = CASE
        WHEN schedules.spec <> EXCLUDED.spec OR schedules.time_zone <> EXCLUDED.time_zone
        THEN EXCLUDED.next_run_at
        ELSE schedules.next_run_at
    END
WHERE @upsert::boolean
RETURNING *;

-- name: ScheduleGet :one
SELECT * FROM schedules WHERE id = @id;

-- name: ScheduleFind :one
SELECT * FROM schedules WHERE agent = @agent AND kind = @kind AND name = @name;

-- name: ScheduleList :many
-- '' and empty states match all; max_rows 0 means no limit.
SELECT * FROM schedules
WHERE (@agent::text = '' OR agent = @agent::text)
  AND (@kind::text = '' OR kind = @kind::text)
  AND (@owner::text = '' OR owner = @owner::text)
  AND (COALESCE(cardinality(@states::text[]), 0) = 0 OR state = ANY (@states::text[]))
ORDER BY created_at, id
LIMIT NULLIF(@max_rows::integer, 0);

-- name: ScheduleUpdate :one
-- NULL parameters leave their column as it is. No row back with the
-- schedule present means expect_state did not match.
UPDATE schedules
SET spec = COALESCE(sqlc.narg(spec)::text, spec),
    time_zone = COALESCE(sqlc.narg(time_zone)::text, time_zone),
    instruction = COALESCE(sqlc.narg(instruction)::text, instruction),
    platform = COALESCE(sqlc.narg(platform)::text, platform),
    workspace = COALESCE(sqlc.narg(workspace)::text, workspace),
    channel = COALESCE(sqlc.narg(channel)::text, channel),
    config = COALESCE(sqlc.narg(config)::json, config),
    data = COALESCE(sqlc.narg(data)::json, data),
    missed = COALESCE(sqlc.narg(missed)::text, missed),
    state = COALESCE(sqlc.narg(state)::text, state),
    state_reason = COALESCE(sqlc.narg(state_reason)::text, state_reason),
    next_run_at = CASE WHEN @clear_next_run::boolean THEN NULL
                       ELSE COALESCE(sqlc.narg(next_run_at)::timestamptz, next_run_at) END,
    updated_at = @now::timestamptz
WHERE id = @id AND (sqlc.narg(expect_state)::text IS NULL OR state = sqlc.narg(expect_state)::text)
RETURNING *;

-- name: ScheduleAdvance :one
-- The compare-and-set of a fire: only the caller that saw next_run_at =
-- expect_next_run_at moves it. Under READ COMMITTED a second caller blocked
-- on the row lock re-checks the WHERE against the new row and updates
-- nothing. A NULL last_run_at leaves it unchanged.
UPDATE schedules
SET next_run_at = sqlc.narg(next_run_at)::timestamptz,
    last_run_at = COALESCE(sqlc.narg(last_run_at)::timestamptz, last_run_at),
    state = CASE WHEN @done::boolean THEN 'done' ELSE state END,
    updated_at = @now::timestamptz
WHERE id = @id AND state = 'active' AND next_run_at = @expect_next_run_at::timestamptz
RETURNING *;

-- name: ScheduleDelete :execrows
DELETE FROM schedules WHERE id = @id;

-- name: ScheduleDue :many
SELECT * FROM schedules
WHERE state = 'active' AND next_run_at IS NOT NULL AND next_run_at <= @now::timestamptz
ORDER BY next_run_at, id
LIMIT @max_rows;

-- name: SchedulePrune :execrows
-- Runs go with their schedule (ON DELETE CASCADE).
DELETE FROM schedules
WHERE id IN (
    SELECT s.id FROM schedules s
    WHERE s.kind = 'reminder' AND s.state = 'done' AND s.updated_at < @before::timestamptz
    LIMIT @max_rows);

-- name: ScheduleRunCreate :one
-- Bumps the run counter under the schedule's row lock, so concurrent run
-- creates get consecutive numbers, and records the run at the new number.
-- No row back means the schedule is missing.
WITH s AS (
    UPDATE schedules SET runs = runs + 1 WHERE schedules.id = @schedule_id RETURNING schedules.id, runs
)
INSERT INTO schedule_runs (id, schedule_id, seq, due_at, conversation_id, status,
                           input_hash, note, created_at, updated_at)
SELECT @id, s.id, s.runs, @due_at, @conversation_id, @status, @input_hash, @note, @now::timestamptz, @now::timestamptz
FROM s
RETURNING *;

-- name: ScheduleRunUpdate :one
-- No row back with the run present means expect_note did not match (the
-- compare-and-set of a reminder's Snooze and Done buttons).
UPDATE schedule_runs
SET status = COALESCE(sqlc.narg(status)::text, status),
    conversation_id = COALESCE(sqlc.narg(conversation_id)::uuid, conversation_id),
    report = COALESCE(sqlc.narg(report)::json, report),
    note = COALESCE(sqlc.narg(note)::text, note),
    updated_at = @now::timestamptz
WHERE id = @id AND (sqlc.narg(expect_note)::text IS NULL OR note = sqlc.narg(expect_note)::text)
RETURNING *;

-- name: ScheduleRunGet :one
SELECT * FROM schedule_runs WHERE id = @id;

-- name: ScheduleRunByConversation :one
SELECT * FROM schedule_runs
WHERE conversation_id = @conversation_id
ORDER BY created_at DESC, id DESC
LIMIT 1;

-- name: ScheduleRunList :many
SELECT * FROM schedule_runs
WHERE schedule_id = @schedule_id
ORDER BY seq DESC
LIMIT NULLIF(@max_rows::integer, 0);

-- name: ScheduleUsageTotal :one
SELECT count(u.id) AS calls,
       COALESCE(sum(u.input_tokens), 0)::bigint AS input_tokens,
       COALESCE(sum(u.output_tokens), 0)::bigint AS output_tokens,
       COALESCE(sum(u.cached_tokens), 0)::bigint AS cached_tokens,
       COALESCE(sum(u.reasoning_tokens), 0)::bigint AS reasoning_tokens,
       COALESCE(sum(u.cost_micro_usd), 0)::bigint AS cost_micro_usd,
       COALESCE(sum(u.cache_write_tokens), 0)::bigint AS cache_write_tokens
FROM usage_records u
WHERE u.conversation_id IN (
    SELECT r.conversation_id FROM schedule_runs r
    WHERE r.schedule_id = @schedule_id AND r.conversation_id IS NOT NULL);
