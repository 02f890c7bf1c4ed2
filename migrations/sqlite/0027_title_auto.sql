-- Whether a conversation's title was taken automatically, from a person's
-- first message by an append (1), or not (0): set by a rename, given at
-- creation, or none yet. A fork made by an edit of the first message takes
-- its own automatic title only from a parent whose title is automatic; a
-- renamed title is never replaced. Rows written before this migration read
-- 0: which of their titles were renames is not recorded, so none is
-- replaced.
ALTER TABLE conversations ADD COLUMN title_auto INTEGER NOT NULL DEFAULT 0 CHECK (title_auto IN (0, 1));
