-- A coding step's change: its repository, branch, commit, diff against
-- the base, gates and delivery (core/run/coding), as JSON; NULL for a step
-- that works in no repository.
ALTER TABLE run_steps ADD COLUMN changes TEXT;
