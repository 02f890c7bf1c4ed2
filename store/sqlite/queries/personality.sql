-- Personality documents, one row per version.

-- name: PersonalityInsert :one
INSERT INTO agent_personalities (agent_id, version, text, author, created_at)
VALUES (sqlc.arg(agent_id), sqlc.arg(version), sqlc.arg(text), sqlc.arg(author), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: PersonalityGet :one
-- Version 0 reads the current (highest) version.
SELECT * FROM agent_personalities
WHERE agent_id = sqlc.arg(agent_id) AND (CAST(sqlc.arg(version) AS INTEGER) = 0 OR version = sqlc.arg(version))
ORDER BY version DESC LIMIT 1;

-- name: PersonalityList :many
SELECT * FROM agent_personalities
WHERE agent_id = sqlc.arg(agent_id)
ORDER BY version DESC LIMIT sqlc.arg(max_rows);
