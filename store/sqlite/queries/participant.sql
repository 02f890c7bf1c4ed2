-- Participants of a conversation and its floor (the loop guard's count).

-- name: ParticipantInsert :exec
-- A participant already there is left as it is (ParticipantRejoin brings
-- back a removed one). Two statements where Postgres has one: sqlc reads no
-- parameters in SQLite's upsert clause.
INSERT INTO participants (conversation_id, author, joined, joined_at, updated_at)
VALUES (sqlc.arg(conversation_id), sqlc.arg(author), sqlc.arg(joined), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (conversation_id, author) DO NOTHING;

-- name: ParticipantRejoin :exec
UPDATE participants SET removed_at = NULL, joined = sqlc.arg(joined), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE conversation_id = sqlc.arg(conversation_id) AND author = sqlc.arg(author) AND removed_at IS NOT NULL;

-- name: ParticipantGet :one
SELECT * FROM participants WHERE conversation_id = sqlc.arg(conversation_id) AND author = sqlc.arg(author);

-- name: ParticipantList :many
SELECT * FROM participants
WHERE conversation_id = sqlc.arg(conversation_id)
ORDER BY joined_at, author;

-- name: ParticipantRemove :one
UPDATE participants SET removed_at = CAST(sqlc.arg(now) AS INTEGER), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE conversation_id = sqlc.arg(conversation_id) AND author = sqlc.arg(author)
RETURNING *;

-- name: ParticipantSetDone :one
UPDATE participants SET done_seq = sqlc.narg(done_seq), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE conversation_id = sqlc.arg(conversation_id) AND author = sqlc.arg(author)
RETURNING *;

-- name: FloorGet :one
SELECT * FROM conversation_floors WHERE conversation_id = sqlc.arg(conversation_id);

-- name: FloorAgentSpoke :one
INSERT INTO conversation_floors (conversation_id, agent_streak, updated_at)
VALUES (sqlc.arg(conversation_id), 1, CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (conversation_id) DO UPDATE SET
    agent_streak = conversation_floors.agent_streak + 1, updated_at = excluded.updated_at
RETURNING *;

-- name: FloorPersonSpoke :one
INSERT INTO conversation_floors (conversation_id, agent_streak, updated_at)
VALUES (sqlc.arg(conversation_id), 0, CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (conversation_id) DO UPDATE SET agent_streak = 0, updated_at = excluded.updated_at
RETURNING *;
