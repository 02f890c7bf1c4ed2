-- Participants of a conversation and its floor (the loop guard's count).

-- name: ParticipantJoin :one
-- A participant already there is returned as it is; a removed one comes
-- back only with rejoin.
INSERT INTO participants (conversation_id, author, joined, joined_at, updated_at)
VALUES (@conversation_id, @author, @joined, @now::timestamptz, @now::timestamptz)
ON CONFLICT (conversation_id, author) DO UPDATE SET
    removed_at = CASE WHEN @rejoin::boolean THEN NULL ELSE participants.removed_at END,
    joined     = CASE WHEN @rejoin::boolean AND participants.removed_at IS NOT NULL THEN EXCLUDED.joined ELSE participants.joined END,
    updated_at = CASE WHEN @rejoin::boolean AND participants.removed_at IS NOT NULL THEN EXCLUDED.updated_at ELSE participants.updated_at END
RETURNING *;

-- name: ParticipantList :many
SELECT * FROM participants
WHERE conversation_id = @conversation_id
ORDER BY joined_at, author;

-- name: ParticipantRemove :one
UPDATE participants SET removed_at = @now::timestamptz, updated_at = @now::timestamptz
WHERE conversation_id = @conversation_id AND author = @author
RETURNING *;

-- name: ParticipantSetDone :one
UPDATE participants SET done_seq = sqlc.narg(done_seq)::bigint, updated_at = @now::timestamptz
WHERE conversation_id = @conversation_id AND author = @author
RETURNING *;

-- name: FloorGet :one
SELECT * FROM conversation_floors WHERE conversation_id = @conversation_id;

-- name: FloorAgentSpoke :one
INSERT INTO conversation_floors (conversation_id, agent_streak, updated_at)
VALUES (@conversation_id, 1, @now::timestamptz)
ON CONFLICT (conversation_id) DO UPDATE SET
    agent_streak = conversation_floors.agent_streak + 1, updated_at = EXCLUDED.updated_at
RETURNING *;

-- name: FloorPersonSpoke :one
INSERT INTO conversation_floors (conversation_id, agent_streak, updated_at)
VALUES (@conversation_id, 0, @now::timestamptz)
ON CONFLICT (conversation_id) DO UPDATE SET agent_streak = 0, updated_at = EXCLUDED.updated_at
RETURNING *;
