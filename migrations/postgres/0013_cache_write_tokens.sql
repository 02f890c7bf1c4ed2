-- Tokens written to the provider's prompt cache (Anthropic's
-- cache_creation_input_tokens) are billed apart from input and cache reads,
-- so they are kept apart too, and count in cost and in loop budgets.
ALTER TABLE usage_records ADD COLUMN cache_write_tokens bigint NOT NULL DEFAULT 0;

-- The usage report groups by agent and by day over every conversation.
CREATE INDEX usage_records_created_idx ON usage_records (created_at);
