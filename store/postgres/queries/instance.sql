-- Instance leases: one live process per instance id (see store.InstanceLease).

-- name: InstanceLeaseAcquire :many
-- Takes the id when it is free, expired or already the holder's; no row
-- back otherwise.
INSERT INTO instance_leases AS l (instance_id, holder, host, pid, process, started_at, heartbeat_at, expires_at)
VALUES (@instance_id, @holder, @host, @pid, @process, @started_at::timestamptz, @now::timestamptz, @expires_at::timestamptz)
ON CONFLICT (instance_id) DO UPDATE
SET holder = EXCLUDED.holder, host = EXCLUDED.host, pid = EXCLUDED.pid, process = EXCLUDED.process,
    started_at = EXCLUDED.started_at, heartbeat_at = EXCLUDED.heartbeat_at, expires_at = EXCLUDED.expires_at
WHERE l.holder = EXCLUDED.holder OR l.expires_at <= EXCLUDED.heartbeat_at
RETURNING *;

-- name: InstanceLeaseTakeOver :many
-- Takes the id from take_over, a holder the caller proved dead, live lease
-- or not; no row back when take_over no longer holds it.
UPDATE instance_leases
SET holder = @holder, host = @host, pid = @pid, process = @process, started_at = @started_at::timestamptz,
    heartbeat_at = @now::timestamptz, expires_at = @expires_at::timestamptz
WHERE instance_id = @instance_id AND holder = @take_over
RETURNING *;

-- name: InstanceLeaseGet :one
SELECT * FROM instance_leases WHERE instance_id = @instance_id;

-- name: InstanceLeaseHeartbeat :many
UPDATE instance_leases
SET heartbeat_at = @now::timestamptz, expires_at = @expires_at::timestamptz
WHERE instance_id = @instance_id AND holder = @holder
RETURNING *;

-- name: InstanceLeaseRelease :exec
DELETE FROM instance_leases WHERE instance_id = @instance_id AND holder = @holder;

-- name: InstanceLeasePrune :execrows
DELETE FROM instance_leases
WHERE instance_id IN (SELECT i.instance_id FROM instance_leases i WHERE i.expires_at < @before::timestamptz LIMIT @max_rows);
