-- Named leases, such as the scheduler's leadership.

-- name: LeaseAcquire :execrows
-- Inserts a free lease, or takes it over when it is expired or already the
-- owner's; otherwise changes nothing (0 rows affected).
INSERT INTO named_leases (name, owner, expires_at, updated_at)
VALUES (sqlc.arg(name), sqlc.arg(owner), CAST(sqlc.arg(expires_at) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (name) DO UPDATE
SET owner = excluded.owner, expires_at = excluded.expires_at, updated_at = excluded.updated_at
WHERE named_leases.owner = excluded.owner OR named_leases.expires_at <= excluded.updated_at;

-- name: LeaseRelease :exec
DELETE FROM named_leases WHERE name = sqlc.arg(name) AND owner = sqlc.arg(owner);

-- name: LeasePrune :execrows
DELETE FROM named_leases
WHERE name IN (
    SELECT l.name FROM named_leases AS l WHERE l.expires_at < CAST(sqlc.arg(before) AS INTEGER) LIMIT CAST(sqlc.arg(limit) AS INTEGER));
