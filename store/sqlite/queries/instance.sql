-- Instance leases: one live process per instance id (see store.InstanceLease).

-- name: InstanceLeaseAcquire :many
-- Takes the id when it is free, expired or already the holder's; no row
-- back otherwise.
INSERT INTO instance_leases (instance_id, holder, host, pid, process, started_at, heartbeat_at, expires_at)
VALUES (sqlc.arg(instance_id), sqlc.arg(holder), sqlc.arg(host), sqlc.arg(pid), sqlc.arg(process),
        CAST(sqlc.arg(started_at) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(expires_at) AS INTEGER))
ON CONFLICT (instance_id) DO UPDATE
SET holder = excluded.holder, host = excluded.host, pid = excluded.pid, process = excluded.process,
    started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at
WHERE instance_leases.holder = excluded.holder OR instance_leases.expires_at <= excluded.heartbeat_at
RETURNING *;

-- name: InstanceLeaseTakeOver :many
-- Takes the id from take_over, a holder the caller proved dead, live lease
-- or not; no row back when take_over no longer holds it.
UPDATE instance_leases
SET holder = sqlc.arg(holder), host = sqlc.arg(host), pid = sqlc.arg(pid), process = sqlc.arg(process),
    started_at = CAST(sqlc.arg(started_at) AS INTEGER), heartbeat_at = CAST(sqlc.arg(now) AS INTEGER),
    expires_at = CAST(sqlc.arg(expires_at) AS INTEGER)
WHERE instance_id = sqlc.arg(instance_id) AND holder = sqlc.arg(take_over)
RETURNING *;

-- name: InstanceLeaseGet :one
SELECT * FROM instance_leases WHERE instance_id = sqlc.arg(instance_id);

-- name: InstanceLeaseHeartbeat :many
UPDATE instance_leases
SET heartbeat_at = CAST(sqlc.arg(now) AS INTEGER), expires_at = CAST(sqlc.arg(expires_at) AS INTEGER)
WHERE instance_id = sqlc.arg(instance_id) AND holder = sqlc.arg(holder)
RETURNING *;

-- name: InstanceLeaseRelease :exec
DELETE FROM instance_leases WHERE instance_id = sqlc.arg(instance_id) AND holder = sqlc.arg(holder);

-- name: InstanceLeasePrune :execrows
DELETE FROM instance_leases
WHERE instance_id IN (
    SELECT l.instance_id FROM instance_leases AS l WHERE l.expires_at < CAST(sqlc.arg(before) AS INTEGER) LIMIT CAST(sqlc.arg(limit) AS INTEGER));
