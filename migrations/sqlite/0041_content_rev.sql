-- How often the stored content of a conversation's entries was rewritten
-- in place (forgetting a person rewrites their entries). A stream's cache
-- of encoded entries is kept only while it matches: an instance that
-- cached a conversation's frames drops them when it reads a newer
-- revision. Appends never change it. Expand only: older binaries never
-- read it, and their forgetting leaves it unchanged (their own caches
-- predate it).
ALTER TABLE conversations ADD COLUMN content_rev INTEGER NOT NULL DEFAULT 0;
