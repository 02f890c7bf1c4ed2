-- Monitoring counts, one aggregate query each.

-- name: WorkCount :many
-- Finished items are left out: done ones pile up until the sweep prunes
-- them, and are not the queue.
SELECT kind, state, CAST(count(*) AS INTEGER) AS count
FROM work
WHERE state IN ('available', 'running', 'failed')
GROUP BY kind, state;

-- name: ApprovalCount :one
-- Expiry is exclusive of its instant, as ApprovalDecide has it.
SELECT CAST(count(*) AS INTEGER) AS count
FROM approvals
WHERE status = 'pending' AND expires_at >= CAST(sqlc.arg(now) AS INTEGER);
