-- Personality documents, one row per version.

-- name: PersonalityInsert :one
INSERT INTO agent_personalities (agent_id, version, text, author, created_at)
VALUES (@agent_id, @version, @text, @author, @now::timestamptz)
RETURNING *;

-- name: PersonalityGet :one
-- Version 0 reads the current (highest) version.
SELECT * FROM agent_personalities
WHERE agent_id = @agent_id AND (@version::integer = 0 OR version = @version::integer)
ORDER BY version DESC
LIMIT 1;

-- name: PersonalityList :many
SELECT * FROM agent_personalities
WHERE agent_id = @agent_id
ORDER BY version DESC
LIMIT @max_rows;

-- name: PersonalityOfConversation :one
-- The current version of the document of a conversation's agent, for a
-- turn's context (TurnContextGet), which cannot name the agent before it
-- has read the conversation in the same batch.
SELECT p.* FROM agent_personalities p
JOIN conversations c ON c.agent_id = p.agent_id
WHERE c.id = @conversation_id
ORDER BY p.version DESC
LIMIT 1;
