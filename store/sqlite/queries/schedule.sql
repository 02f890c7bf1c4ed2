-- The scheduler's tables (migration 0002). The single writer serialises
-- every write, so a count-then-create and the run counter need no locking.

-- name: ScheduleCount :one
SELECT COUNT(*) FROM schedules
WHERE agent = sqlc.arg(agent) AND kind = sqlc.arg(kind) AND state <> 'done';

-- name: ScheduleInsert :one
-- No row back means (agent, kind, name) is taken.
INSERT INTO schedules (id, kind, agent, name, owner, platform, workspace, channel, spec,
                       time_zone, instruction, config, data, missed, source, state,
                       next_run_at, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(kind), sqlc.arg(agent), sqlc.arg(name), sqlc.arg(owner),
        sqlc.arg(platform), sqlc.arg(workspace), sqlc.arg(channel), sqlc.arg(spec),
        sqlc.arg(time_zone), sqlc.arg(instruction), sqlc.arg(config), sqlc.arg(data),
        sqlc.arg(missed), sqlc.arg(source), sqlc.arg(state), sqlc.narg(next_run_at),
        CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (agent, kind, name) DO NOTHING
RETURNING *;

-- name: ScheduleUpsert :one
-- An existing schedule keeps its state, data and runs; its next run is
-- replaced only when the spec or the time zone changed.
INSERT INTO schedules (id, kind, agent, name, owner, platform, workspace, channel, spec,
                       time_zone, instruction, config, data, missed, source, state,
                       next_run_at, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(kind), sqlc.arg(agent), sqlc.arg(name), sqlc.arg(owner),
        sqlc.arg(platform), sqlc.arg(workspace), sqlc.arg(channel), sqlc.arg(spec),
        sqlc.arg(time_zone), sqlc.arg(instruction), sqlc.arg(config), sqlc.arg(data),
        sqlc.arg(missed), sqlc.arg(source), sqlc.arg(state), sqlc.narg(next_run_at),
        CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (agent, kind, name) DO UPDATE
SET owner = excluded.owner,
    platform = excluded.platform,
    workspace = excluded.workspace,
    channel = excluded.channel,
    spec = excluded.spec,
    time_zone = excluded.time_zone,
    instruction = excluded.instruction,
    config = excluded.config,
    missed = excluded.missed,
    source = excluded.source,
    next_run_at = CASE
        WHEN schedules.spec <> excluded.spec OR schedules.time_zone <> excluded.time_zone
        THEN excluded.next_run_at
        ELSE schedules.next_run_at
    END,
    updated_at = excluded.updated_at
RETURNING *;

-- name: ScheduleGet :one
SELECT * FROM schedules WHERE id = sqlc.arg(id);

-- name: ScheduleFind :one
SELECT * FROM schedules WHERE agent = sqlc.arg(agent) AND kind = sqlc.arg(kind) AND name = sqlc.arg(name);

-- name: ScheduleList :many
-- states is a JSON array of states, NULL for any; limit -1 for no limit.
SELECT * FROM schedules
WHERE (CAST(sqlc.arg(agent) AS TEXT) = '' OR agent = sqlc.arg(agent))
  AND (CAST(sqlc.arg(kind) AS TEXT) = '' OR kind = sqlc.arg(kind))
  AND (CAST(sqlc.arg(owner) AS TEXT) = '' OR owner = sqlc.arg(owner))
  AND (CAST(sqlc.narg(states) AS TEXT) IS NULL OR state IN (SELECT value FROM json_each(CAST(sqlc.narg(states) AS TEXT))))
ORDER BY created_at, rowid
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: ScheduleUpdate :one
-- NULL parameters leave their column as it is.
UPDATE schedules
SET spec = COALESCE(sqlc.narg(spec), spec),
    time_zone = COALESCE(sqlc.narg(time_zone), time_zone),
    instruction = COALESCE(sqlc.narg(instruction), instruction),
    platform = COALESCE(sqlc.narg(platform), platform),
    workspace = COALESCE(sqlc.narg(workspace), workspace),
    channel = COALESCE(sqlc.narg(channel), channel),
    config = COALESCE(sqlc.narg(config), config),
    data = COALESCE(sqlc.narg(data), data),
    missed = COALESCE(sqlc.narg(missed), missed),
    state = COALESCE(sqlc.narg(state), state),
    state_reason = COALESCE(sqlc.narg(state_reason), state_reason),
    next_run_at = CASE WHEN CAST(sqlc.arg(clear_next) AS BOOLEAN) THEN NULL ELSE COALESCE(sqlc.narg(next_run_at), next_run_at) END,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND (CAST(sqlc.narg(expect_state) AS TEXT) IS NULL OR state = CAST(sqlc.narg(expect_state) AS TEXT))
RETURNING *;

-- name: ScheduleAdvance :one
-- The compare-and-set of a fire: only the caller that saw next_run_at =
-- expect_next moves it.
UPDATE schedules
SET next_run_at = sqlc.narg(next_run_at),
    last_run_at = COALESCE(sqlc.narg(last_run_at), last_run_at),
    state = CASE WHEN CAST(sqlc.arg(done) AS BOOLEAN) THEN 'done' ELSE state END,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND state = 'active' AND next_run_at = CAST(sqlc.arg(expect_next) AS INTEGER)
RETURNING *;

-- name: ScheduleDelete :execrows
DELETE FROM schedules WHERE id = sqlc.arg(id);

-- name: ScheduleDue :many
SELECT * FROM schedules
WHERE state = 'active' AND next_run_at IS NOT NULL AND next_run_at <= CAST(sqlc.arg(now) AS INTEGER)
ORDER BY next_run_at, rowid
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: SchedulePrune :execrows
-- Their runs go with them (ON DELETE CASCADE).
DELETE FROM schedules
WHERE id IN (
    SELECT s.id FROM schedules AS s
    WHERE s.kind = 'reminder' AND s.state = 'done' AND s.updated_at < CAST(sqlc.arg(before) AS INTEGER)
    LIMIT CAST(sqlc.arg(limit) AS INTEGER));

-- name: ScheduleRunNextSeq :one
UPDATE schedules SET runs = runs + 1 WHERE id = sqlc.arg(id) RETURNING runs;

-- name: ScheduleRunInsert :one
INSERT INTO schedule_runs (id, schedule_id, seq, due_at, conversation_id, status,
                           input_hash, note, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(schedule_id), CAST(sqlc.arg(seq) AS INTEGER), sqlc.arg(due_at), sqlc.narg(conversation_id),
        sqlc.arg(status), sqlc.arg(input_hash), sqlc.arg(note), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: ScheduleRunUpdate :one
-- No row back with the run present means expect_note did not match (the
-- compare-and-set of a reminder's Snooze and Done buttons).
UPDATE schedule_runs
SET status = COALESCE(sqlc.narg(status), status),
    conversation_id = COALESCE(sqlc.narg(conversation_id), conversation_id),
    report = COALESCE(sqlc.narg(report), report),
    note = COALESCE(sqlc.narg(note), note),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND (CAST(sqlc.narg(expect_note) AS TEXT) IS NULL OR note = CAST(sqlc.narg(expect_note) AS TEXT))
RETURNING *;

-- name: ScheduleRunGet :one
SELECT * FROM schedule_runs WHERE id = sqlc.arg(id);

-- name: ScheduleRunByConversation :one
SELECT * FROM schedule_runs
WHERE conversation_id = sqlc.arg(conversation_id)
ORDER BY created_at DESC, rowid DESC
LIMIT 1;

-- name: ScheduleRunList :many
SELECT * FROM schedule_runs WHERE schedule_id = sqlc.arg(schedule_id) ORDER BY seq DESC LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: ScheduleUsageTotal :one
SELECT COUNT(u.id) AS calls,
       CAST(COALESCE(SUM(u.input_tokens), 0) AS INTEGER) AS input_tokens,
       CAST(COALESCE(SUM(u.output_tokens), 0) AS INTEGER) AS output_tokens,
       CAST(COALESCE(SUM(u.cached_tokens), 0) AS INTEGER) AS cached_tokens,
       CAST(COALESCE(SUM(u.reasoning_tokens), 0) AS INTEGER) AS reasoning_tokens,
       CAST(COALESCE(SUM(u.cost_micro_usd), 0) AS INTEGER) AS cost_micro_usd,
       CAST(COALESCE(SUM(u.cache_write_tokens), 0) AS INTEGER) AS cache_write_tokens
FROM usage AS u
WHERE u.conversation_id IN (
    SELECT r.conversation_id FROM schedule_runs AS r
    WHERE r.schedule_id = sqlc.arg(schedule_id) AND r.conversation_id IS NOT NULL);
