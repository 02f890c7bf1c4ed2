-- What a database file holds, read to verify a backup and to guard a
-- restore (see backup.go).

-- name: BackupConversationCount :one
-- How many conversations the file holds, forks included.
SELECT COUNT(*) FROM conversations;

-- name: BackupInstanceLeases :many
-- Every instance lease, live or expired: a restore refuses to replace a
-- file a live process holds.
SELECT * FROM instance_leases ORDER BY instance_id;
