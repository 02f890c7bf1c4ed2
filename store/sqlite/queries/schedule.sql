-- The scheduler's tables (migration 0002). Every query returning a schedule
-- lists the same columns in the same order, which scanSchedule reads;
-- likewise runs and scanScheduleRun. The single writer serialises every
-- write, so the per-agent limit and the run counter need no extra locking.

-- name: ScheduleCountLive
SELECT count(*)
FROM schedules
WHERE agent = :agent AND kind = :kind AND state <> 'done' AND name <> :name;

-- name: ScheduleInsert
-- No row back means (agent, kind, name) is taken.
INSERT INTO schedules (id, kind, agent, name, owner, platform, workspace, channel, spec,
                       time_zone, instruction, config, data, missed, source, state,
                       next_run_at, created_at, updated_at)
VALUES (:id, :kind, :agent, :name, :owner, :platform, :workspace, :channel, :spec,
        :time_zone, :instruction, :config, :data, :missed, :source, :state,
        :next_run_at, :now, :now)
ON CONFLICT (agent, kind, name) DO NOTHING
RETURNING id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
          instruction, config, data, missed, source, state, state_reason, next_run_at,
          last_run_at, runs, created_at, updated_at;

-- name: ScheduleUpsert
-- An existing schedule keeps its state, data and runs; its next run is
-- replaced only when the spec or the time zone changed.
INSERT INTO schedules (id, kind, agent, name, owner, platform, workspace, channel, spec,
                       time_zone, instruction, config, data, missed, source, state,
                       next_run_at, created_at, updated_at)
VALUES (:id, :kind, :agent, :name, :owner, :platform, :workspace, :channel, :spec,
        :time_zone, :instruction, :config, :data, :missed, :source, :state,
        :next_run_at, :now, :now)
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
RETURNING id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
          instruction, config, data, missed, source, state, state_reason, next_run_at,
          last_run_at, runs, created_at, updated_at;

-- name: ScheduleGet
SELECT id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
       instruction, config, data, missed, source, state, state_reason, next_run_at,
       last_run_at, runs, created_at, updated_at
FROM schedules
WHERE id = :id;

-- name: ScheduleFind
SELECT id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
       instruction, config, data, missed, source, state, state_reason, next_run_at,
       last_run_at, runs, created_at, updated_at
FROM schedules
WHERE agent = :agent AND kind = :kind AND name = :name;

-- name: ScheduleList
-- :states is a JSON array of states ('[]' for any); :limit -1 for no limit.
SELECT id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
       instruction, config, data, missed, source, state, state_reason, next_run_at,
       last_run_at, runs, created_at, updated_at
FROM schedules
WHERE (:agent = '' OR agent = :agent)
  AND (:kind = '' OR kind = :kind)
  AND (:owner = '' OR owner = :owner)
  AND (:states = '[]' OR state IN (SELECT value FROM json_each(:states)))
ORDER BY created_at, id
LIMIT :limit;

-- name: ScheduleUpdate
-- NULL parameters leave their column as it is.
UPDATE schedules
SET spec = COALESCE(:spec, spec),
    time_zone = COALESCE(:time_zone, time_zone),
    instruction = COALESCE(:instruction, instruction),
    platform = COALESCE(:platform, platform),
    workspace = COALESCE(:workspace, workspace),
    channel = COALESCE(:channel, channel),
    config = COALESCE(:config, config),
    data = COALESCE(:data, data),
    missed = COALESCE(:missed, missed),
    state = COALESCE(:state, state),
    state_reason = COALESCE(:state_reason, state_reason),
    next_run_at = CASE WHEN :clear_next THEN NULL ELSE COALESCE(:next_run_at, next_run_at) END,
    updated_at = :now
WHERE id = :id AND (:expect_state IS NULL OR state = :expect_state)
RETURNING id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
          instruction, config, data, missed, source, state, state_reason, next_run_at,
          last_run_at, runs, created_at, updated_at;

-- name: ScheduleAdvance
-- The compare-and-set of a fire: only the caller that saw next_run_at =
-- :expect_next moves it.
UPDATE schedules
SET next_run_at = :next_run_at,
    last_run_at = COALESCE(:last_run_at, last_run_at),
    state = CASE WHEN :done THEN 'done' ELSE state END,
    updated_at = :now
WHERE id = :id AND state = 'active' AND next_run_at = :expect_next
RETURNING id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
          instruction, config, data, missed, source, state, state_reason, next_run_at,
          last_run_at, runs, created_at, updated_at;

-- name: ScheduleDelete
DELETE FROM schedules WHERE id = :id;

-- name: ScheduleDue
SELECT id, kind, agent, name, owner, platform, workspace, channel, spec, time_zone,
       instruction, config, data, missed, source, state, state_reason, next_run_at,
       last_run_at, runs, created_at, updated_at
FROM schedules
WHERE state = 'active' AND next_run_at IS NOT NULL AND next_run_at <= :now
ORDER BY next_run_at, id
LIMIT :limit;

-- name: ScheduleRunNextSeq
UPDATE schedules SET runs = runs + 1 WHERE id = :id RETURNING runs;

-- name: ScheduleRunInsert
INSERT INTO schedule_runs (id, schedule_id, seq, due_at, conversation_id, status,
                           input_hash, note, created_at, updated_at)
VALUES (:id, :schedule_id, :seq, :due_at, :conversation_id, :status,
        :input_hash, :note, :now, :now)
RETURNING id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
          note, created_at, updated_at;

-- name: ScheduleRunUpdate
UPDATE schedule_runs
SET status = COALESCE(:status, status),
    conversation_id = COALESCE(:conversation_id, conversation_id),
    report = COALESCE(:report, report),
    note = COALESCE(:note, note),
    updated_at = :now
WHERE id = :id
RETURNING id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
          note, created_at, updated_at;

-- name: ScheduleRunGet
SELECT id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
       note, created_at, updated_at
FROM schedule_runs
WHERE id = :id;

-- name: ScheduleRunByConversation
SELECT id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
       note, created_at, updated_at
FROM schedule_runs
WHERE conversation_id = :conversation_id
ORDER BY created_at DESC, id DESC
LIMIT 1;

-- name: ScheduleRunList
SELECT id, schedule_id, seq, due_at, conversation_id, status, input_hash, report,
       note, created_at, updated_at
FROM schedule_runs
WHERE schedule_id = :schedule_id
ORDER BY seq DESC
LIMIT :limit;

-- name: ScheduleUsageTotal
SELECT count(u.id),
       COALESCE(sum(u.input_tokens), 0),
       COALESCE(sum(u.output_tokens), 0),
       COALESCE(sum(u.cached_tokens), 0),
       COALESCE(sum(u.reasoning_tokens), 0),
       COALESCE(sum(u.cost_micro_usd), 0)
FROM usage u
WHERE u.conversation_id IN (
    SELECT r.conversation_id FROM schedule_runs r
    WHERE r.schedule_id = :schedule_id AND r.conversation_id IS NOT NULL);

-- name: ScheduleSweepInbound
DELETE FROM inbound_events
WHERE (platform, event_id) IN (
    SELECT platform, event_id FROM inbound_events WHERE received_at < :before LIMIT :limit);

-- name: ScheduleSweepWork
-- Keyed items stay: enqueue is idempotent on the key for ever.
DELETE FROM work
WHERE id IN (
    SELECT id FROM work
    WHERE state IN ('done', 'cancelled') AND unique_key IS NULL AND finished_at < :before
    LIMIT :limit);

-- name: ScheduleSweepLeases
DELETE FROM named_leases
WHERE name IN (SELECT name FROM named_leases WHERE expires_at < :before LIMIT :limit);

-- name: ScheduleSweepReminders
DELETE FROM schedules
WHERE id IN (
    SELECT id FROM schedules
    WHERE kind = 'reminder' AND state = 'done' AND updated_at < :before
    LIMIT :limit);
