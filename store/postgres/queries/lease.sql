-- Named leases, such as the scheduler's leadership.

-- name: LeaseAcquire :execrows
-- One row affected means owner holds the lease now: it was free, expired, or
-- already owner's (renewed).
INSERT INTO named_leases (name, owner, expires_at, updated_at)
VALUES (@name, @owner, @expires_at, @now::timestamptz)
ON CONFLICT (name) DO UPDATE
SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
    updated_at = EXCLUDED.updated_at
WHERE named_leases.owner = EXCLUDED.owner OR named_leases.expires_at <= EXCLUDED.updated_at;

-- name: LeaseRelease :exec
DELETE FROM named_leases WHERE name = @name AND owner = @owner;

-- name: LeasePrune :execrows
DELETE FROM named_leases
WHERE name IN (SELECT l.name FROM named_leases l WHERE l.expires_at < @before::timestamptz LIMIT @max_rows);
