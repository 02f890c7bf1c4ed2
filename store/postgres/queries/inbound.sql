-- Platform event ids already seen, so a redelivered event is handled once.

-- name: InboundRecord :execrows
-- One row affected: the first sighting.
INSERT INTO inbound_events (platform, event_id, seen_at)
VALUES (@platform, @event_id, @now::timestamptz)
ON CONFLICT (platform, event_id) DO NOTHING;

-- name: InboundPrune :execrows
DELETE FROM inbound_events
WHERE (platform, event_id) IN (
    SELECT i.platform, i.event_id FROM inbound_events i WHERE i.seen_at < @before::timestamptz LIMIT @max_rows);
