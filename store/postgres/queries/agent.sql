-- Agents, upserted from the config file at start.

-- name: AgentUpsert :one
-- id is used only when inserting.
INSERT INTO agents (id, name, config, created_at, updated_at)
VALUES (@id, @name, @config, @now::timestamptz, @now::timestamptz)
ON CONFLICT (name) DO UPDATE
SET config = EXCLUDED.config, updated_at = EXCLUDED.updated_at
RETURNING *;

-- name: AgentGetByName :one
SELECT * FROM agents WHERE name = @name;
