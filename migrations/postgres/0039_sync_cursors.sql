-- Where a pulled event stream was read up to: Matrix's /sync next_batch,
-- one row per bot account (name "matrix:@bot:example.org"). The instance
-- that syncs (under the named lease of the same name) saves it after each
-- batch it handed to core; a restart or the instance that takes over
-- continues from it, and core's dedupe on event ids absorbs what a crash
-- makes it read twice. Expand only: older binaries never read it.

CREATE TABLE sync_cursors (
    name       text PRIMARY KEY,
    cursor     text NOT NULL CHECK (cursor <> ''),
    updated_at timestamptz NOT NULL
);
