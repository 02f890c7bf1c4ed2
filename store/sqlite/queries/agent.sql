-- Agents (from the config file) and the dedupe of platform events.

-- name: AgentUpsert :one
INSERT INTO agents (id, name, config, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(name), sqlc.arg(config), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (name) DO UPDATE
SET config = excluded.config, updated_at = excluded.updated_at
RETURNING *;

-- name: AgentGetByName :one
SELECT * FROM agents WHERE name = sqlc.arg(name);

-- name: InboundRecord :execrows
INSERT INTO inbound_events (platform, event_id, received_at)
VALUES (sqlc.arg(platform), sqlc.arg(event_id), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (platform, event_id) DO NOTHING;

-- name: InboundPrune :execrows
DELETE FROM inbound_events
WHERE (platform, event_id) IN (
    SELECT i.platform, i.event_id FROM inbound_events AS i
    WHERE i.received_at < CAST(sqlc.arg(before) AS INTEGER)
    LIMIT CAST(sqlc.arg(limit) AS INTEGER));
