-- Items that share an ordering key run one at a time, in insertion order,
-- across instances: the claim hands out an item only when no item of its key
-- is running and none inserted before it is still available. It serialises
-- what has no conversation yet, such as the inbound events of one Slack
-- thread or DM taken by a deferred ack, which are bound to their
-- conversation only when they run. NULL: no such rule.
ALTER TABLE work ADD COLUMN ordering_key TEXT;

-- The claim's check of an item's key: only unfinished items, so a busy
-- thread's finished history is never read. The rowid (insertion order)
-- comes with every index entry.
CREATE INDEX work_ordering_key_idx ON work (ordering_key)
    WHERE ordering_key IS NOT NULL AND state IN ('available', 'running');
