-- Run messages: the platform message that shows a run's progress in one
-- place (a binding of the run's conversation), so that a restart or
-- another instance edits it instead of posting a second one.
--
-- The row is the intent before it is the record: it is inserted (state
-- posting, no message yet) before the platform is asked for the first
-- message, and the primary key lets one process only make it. The
-- message's ids follow as soon as the platform answers.
--
--   posting ──posted──► live ──run ended──► ended
--      ▲                                      │
--      └──────── the run retried: a new message follows it
--
-- Every change is a compare-and-set on version, so of two processes that
-- read one record, one changes it (a stale intent taken over, a retried
-- run's new message).
--
-- kind is how the message shows the run (stream: a Slack stream of plan
-- and task chunks; text: a message edited in place); sent is the
-- platform's own note of what it last sent per step, so a change sends
-- only what moved.

CREATE TABLE run_messages (
    run_id     uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    binding_id uuid NOT NULL REFERENCES bindings (id) ON DELETE CASCADE,
    platform   text NOT NULL CHECK (platform <> ''),
    channel    text NOT NULL DEFAULT '',
    message_id text NOT NULL DEFAULT '',
    kind       text NOT NULL DEFAULT '',
    state      text NOT NULL CHECK (state IN ('posting', 'live', 'ended')),
    version    bigint NOT NULL DEFAULT 1,
    sent       json NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (run_id, binding_id)
);
