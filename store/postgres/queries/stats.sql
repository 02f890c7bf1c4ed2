-- Monitoring counts, one aggregate query each.

-- name: WorkCount :many
-- Finished items are left out: done ones pile up until the sweep prunes
-- them, and are not the queue. Waiting and failed items are counted from
-- work_items_queue_waiting_idx, running ones from work_items_running_idx
-- (no more of them than the workers' slots).
SELECT w.kind, w.state, count(*)::bigint AS count
FROM work_items w
WHERE w.state IN ('available', 'failed')
GROUP BY w.kind, w.state
UNION ALL
SELECT r.kind, r.state, count(*)::bigint AS count
FROM work_items r
WHERE r.state = 'running'
GROUP BY r.kind, r.state;

-- name: ApprovalCount :one
SELECT count(*)::bigint AS count
FROM approvals
WHERE status = 'pending' AND expires_at >= @now::timestamptz;
