-- The scheduler's tables (migration 0002). Every query returning a schedule
-- lists the same columns, which scheduleRow scans by name; likewise runs and
-- scheduleRunRow.

-- name: ScheduleLockAgent
-- Serialises creates for one agent until the transaction ends, so the
-- per-agent limit is checked and the row inserted as one step.
-- $1 agent.
SELECT pg_advisory_xact_lock(hashtextextended('switchboard.schedules:' || $1::text, 0));

-- name: ScheduleCountLive
-- $1 agent, $2 kind, $3 name to leave out (the one being upserted).
SELECT count(*)
FROM schedules
WHERE agent = $1 AND kind = $2 AND state <> 'done' AND name <> $3;

-- name: ScheduleInsert
-- ON CONFLICT DO NOTHING, so a taken name inside a caller's transaction does
-- not abort it: no row back means the name is taken.
-- $1 id, $2 kind, $3 agent, $4 name, $5 owner, $6 platform, $7 workspace,
-- $8 channel, $9 spec, $10 time_zone, $11 instruction, $12 config, $13 data,
-- $14 missed, $15 source, $16 state, $17 next_run_at, $18 now.
INSERT INTO schedules (id, kind, agent, name, owner, platform, workspace, channel, spec,
                       time_zone, instruction, config, data, missed, source, state,
                       next_run_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18)
ON CONFLICT (agent, kind, name) DO NOTHING
RETURNING id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
          instruction, config, data, missed, source, state, state_reason, next_run_at,
          last_run_at, runs, created_at, updated_at;

-- name: ScheduleUpsert
-- Same parameters as ScheduleInsert. An existing schedule keeps its state,
-- data and run history; its next run is replaced only when the spec or the
-- time zone changed (every SET expression reads the old row).
INSERT INTO schedules (id, kind, agent, name, owner, platform, workspace, channel, spec,
                       time_zone, instruction, config, data, missed, source, state,
                       next_run_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18)
ON CONFLICT (agent, kind, name) DO UPDATE
SET owner = EXCLUDED.owner,
    platform = EXCLUDED.platform,
    workspace = EXCLUDED.workspace,
    channel = EXCLUDED.channel,
    spec = EXCLUDED.spec,
    time_zone = EXCLUDED.time_zone,
    instruction = EXCLUDED.instruction,
    config = EXCLUDED.config,
    missed = EXCLUDED.missed,
    source = EXCLUDED.source,
    next_run_at = CASE
        WHEN schedules.spec <> EXCLUDED.spec OR schedules.time_zone <> EXCLUDED.time_zone
        THEN EXCLUDED.next_run_at
        ELSE schedules.next_run_at
    END,
    updated_at = EXCLUDED.updated_at
RETURNING id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
          instruction, config, data, missed, source, state, state_reason, next_run_at,
          last_run_at, runs, created_at, updated_at;

-- name: ScheduleGet
SELECT id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
       instruction, config, data, missed, source, state, state_reason, next_run_at,
       last_run_at, runs, created_at, updated_at
FROM schedules
WHERE id = $1;

-- name: ScheduleFind
-- $1 agent, $2 kind, $3 name.
SELECT id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
       instruction, config, data, missed, source, state, state_reason, next_run_at,
       last_run_at, runs, created_at, updated_at
FROM schedules
WHERE agent = $1 AND kind = $2 AND name = $3;

-- name: ScheduleList
-- $1 agent, $2 kind, $3 owner ('' for any), $4 states (empty for any),
-- $5 limit (NULL: all).
SELECT id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
       instruction, config, data, missed, source, state, state_reason, next_run_at,
       last_run_at, runs, created_at, updated_at
FROM schedules
WHERE ($1::text = '' OR agent = $1)
  AND ($2::text = '' OR kind = $2)
  AND ($3::text = '' OR owner = $3)
  AND (COALESCE(cardinality($4::text[]), 0) = 0 OR state = ANY ($4::text[]))
ORDER BY created_at, id
LIMIT $5;

-- name: ScheduleUpdate
-- NULL parameters leave their column as it is.
-- $1 id, $2 spec, $3 time_zone, $4 instruction, $5 platform, $6 workspace,
-- $7 channel, $8 config, $9 data, $10 missed, $11 state, $12 state_reason,
-- $13 next_run_at, $14 clear next_run_at, $15 expected state, $16 now.
UPDATE schedules
SET spec = COALESCE($2::text, spec),
    time_zone = COALESCE($3::text, time_zone),
    instruction = COALESCE($4::text, instruction),
    platform = COALESCE($5::text, platform),
    workspace = COALESCE($6::text, workspace),
    channel = COALESCE($7::text, channel),
    config = COALESCE($8::json, config),
    data = COALESCE($9::json, data),
    missed = COALESCE($10::text, missed),
    state = COALESCE($11::text, state),
    state_reason = COALESCE($12::text, state_reason),
    next_run_at = CASE WHEN $14::boolean THEN NULL ELSE COALESCE($13::timestamptz, next_run_at) END,
    updated_at = $16
WHERE id = $1 AND ($15::text IS NULL OR state = $15::text)
RETURNING id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
          instruction, config, data, missed, source, state, state_reason, next_run_at,
          last_run_at, runs, created_at, updated_at;

-- name: ScheduleAdvance
-- The compare-and-set of a fire: only the caller that saw next_run_at = $2
-- moves it. Under READ COMMITTED a second caller blocked on the row lock
-- re-checks the WHERE against the new row and updates nothing.
-- $1 id, $2 expected next_run_at, $3 new next_run_at, $4 last_run_at
-- (NULL: unchanged), $5 done, $6 now.
UPDATE schedules
SET next_run_at = $3,
    last_run_at = COALESCE($4, last_run_at),
    state = CASE WHEN $5::boolean THEN 'done' ELSE state END,
    updated_at = $6
WHERE id = $1 AND state = 'active' AND next_run_at = $2
RETURNING id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
          instruction, config, data, missed, source, state, state_reason, next_run_at,
          last_run_at, runs, created_at, updated_at;

-- name: ScheduleDelete
DELETE FROM schedules WHERE id = $1;

-- name: ScheduleDue
-- $1 now, $2 limit (NULL: all).
SELECT id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
       instruction, config, data, missed, source, state, state_reason, next_run_at,
       last_run_at, runs, created_at, updated_at
FROM schedules
WHERE state = 'active' AND next_run_at IS NOT NULL AND next_run_at <= $1
ORDER BY next_run_at, id
LIMIT $2;

-- name: ScheduleRunNextSeq
-- Bumps the run counter under the schedule's row lock: concurrent run
-- creates get consecutive numbers.
UPDATE schedules SET runs = runs + 1 WHERE id = $1 RETURNING runs;

-- name: ScheduleRunInsert
-- $1 id, $2 schedule_id, $3 seq, $4 due_at, $5 conversation_id, $6 status,
-- $7 input_hash, $8 note, $9 now.
INSERT INTO schedule_runs (id, schedule_id, seq, due_at, conversation_id, status,
                           input_hash, note, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
RETURNING id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
          note, created_at, updated_at;

-- name: ScheduleRunUpdate
-- $1 id, $2 status, $3 conversation_id, $4 report, $5 note, $6 now.
UPDATE schedule_runs
SET status = COALESCE($2::text, status),
    conversation_id = COALESCE($3::uuid, conversation_id),
    report = COALESCE($4::json, report),
    note = COALESCE($5::text, note),
    updated_at = $6
WHERE id = $1
RETURNING id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
          note, created_at, updated_at;

-- name: ScheduleRunGet
SELECT id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
       note, created_at, updated_at
FROM schedule_runs
WHERE id = $1;

-- name: ScheduleRunByConversation
SELECT id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
       note, created_at, updated_at
FROM schedule_runs
WHERE conversation_id = $1
ORDER BY created_at DESC, id DESC
LIMIT 1;

-- name: ScheduleRunList
-- $1 schedule_id, $2 limit (NULL: all).
SELECT id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
       note, created_at, updated_at
FROM schedule_runs
WHERE schedule_id = $1
ORDER BY seq DESC
LIMIT $2;

-- name: ScheduleUsageTotal
SELECT count(u.id) AS calls,
       COALESCE(sum(u.input_tokens), 0)::bigint AS input_tokens,
       COALESCE(sum(u.output_tokens), 0)::bigint AS output_tokens,
       COALESCE(sum(u.cached_tokens), 0)::bigint AS cached_tokens,
       COALESCE(sum(u.reasoning_tokens), 0)::bigint AS reasoning_tokens,
       COALESCE(sum(u.cost_micro_usd), 0)::bigint AS cost_micro_usd
FROM usage_records u
WHERE u.conversation_id IN (
    SELECT r.conversation_id FROM schedule_runs r
    WHERE r.schedule_id = $1 AND r.conversation_id IS NOT NULL);

-- name: ScheduleSweepInbound
-- $1 before, $2 limit.
DELETE FROM inbound_events
WHERE (platform, event_id) IN (
    SELECT platform, event_id FROM inbound_events WHERE seen_at < $1 LIMIT $2);

-- name: ScheduleSweepWork
-- Keyed items stay: enqueue is idempotent on the key for ever.
DELETE FROM work_items
WHERE id IN (
    SELECT id FROM work_items
    WHERE state IN ('done', 'cancelled') AND unique_key IS NULL AND finished_at < $1
    LIMIT $2);

-- name: ScheduleSweepLeases
DELETE FROM named_leases
WHERE name IN (SELECT name FROM named_leases WHERE expires_at < $1 LIMIT $2);

-- name: ScheduleSweepReminders
DELETE FROM schedules
WHERE id IN (
    SELECT id FROM schedules
    WHERE kind = 'reminder' AND state = 'done' AND updated_at < $1
    LIMIT $2);
