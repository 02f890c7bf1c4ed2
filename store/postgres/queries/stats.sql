-- Monitoring counts, one aggregate query each.

-- name: WorkCount :many
-- Finished items are left out: done ones pile up until the sweep prunes
-- them, and are not the queue.
SELECT kind, state, count(*)::bigint AS count
FROM work_items
WHERE state IN ('available', 'running', 'failed')
GROUP BY kind, state;

-- name: ApprovalCount :one
SELECT count(*)::bigint AS count
FROM approvals
WHERE status = 'pending' AND expires_at >= @now::timestamptz;
