-- Every list and count the API, console and metrics read is served by an
-- index, so none scans a table that grows with months of data.

-- The conversation list: most recently active first, a page at a time
-- (ConversationList), over every workspace or one caller's.
CREATE INDEX conversations_updated_idx ON conversations (updated_at DESC, id DESC);
CREATE INDEX conversations_workspace_updated_idx ON conversations (workspace_id, updated_at DESC, id DESC)
    WHERE workspace_id IS NOT NULL;

-- /metrics counts the queue by kind and state (WorkCount): an index of the
-- items still in it, not of the finished ones the sweep has yet to prune.
CREATE INDEX work_items_queue_count_idx ON work_items (kind, state)
    WHERE state IN ('available', 'running', 'failed');
