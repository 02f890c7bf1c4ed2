-- Fewer index entries per claim. Every change of an item's state writes a
-- new row version and an entry in each index whose predicate it matches;
-- a claim (available to running) wrote five. Two go:
--
-- work_items_running_conversation_idx: no query needs it (a conversation's
-- items are read through work_items_conversation_idx, the running ones
-- through work_items_running_idx; there are never more running items than
-- the workers' slots).
--
-- work_items_queue_count_idx leaves out running items: WorkCount counts
-- them through work_items_running_idx instead, and the claim's check of
-- expired leases reads that index by expiry rather than every running item
-- of its kinds.
--
-- Only indexes change: an older release's statements run as before (its
-- count of the queue reads the running items from the table).
CREATE INDEX work_items_queue_waiting_idx ON work_items (kind, state)
    WHERE state IN ('available', 'failed');
DROP INDEX work_items_queue_count_idx;
DROP INDEX work_items_running_conversation_idx;
