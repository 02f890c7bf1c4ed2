-- Whether a conversation's title was taken automatically, from a person's
-- first message by an append (true), or not (false): set by a rename, given
-- at creation, or none yet. A fork made by an edit of the first message
-- takes its own automatic title only from a parent whose title is
-- automatic; a renamed title is never replaced. Rows written before this
-- migration read false: which of their titles were renames is not
-- recorded, so none is replaced.
ALTER TABLE conversations ADD COLUMN title_auto boolean NOT NULL DEFAULT false;
