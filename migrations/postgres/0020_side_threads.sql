-- Side threads and delegations: work between agents in a conversation of
-- its own (the child), linked to the conversation that started it.
--
-- side_threads: one per <dm target="…"> conversation; at most one in
-- progress per parent and pair of agents, which the parent's turn (under
-- its lease) checks before opening one. marker_entry_id is the entry
-- people see it through in the parent (NULL in a DM).
--
-- delegations: one per delegate call, with the factors of the choice.
-- The track record of each delegate is read from these rows.

CREATE TABLE side_threads (
    id              uuid PRIMARY KEY,
    parent_id       uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    parent_seq      bigint NOT NULL CHECK (parent_seq >= 0),
    child_id        uuid NOT NULL UNIQUE REFERENCES conversations (id) ON DELETE CASCADE,
    opener          text NOT NULL CHECK (opener <> ''),
    peer            text NOT NULL CHECK (peer <> '' AND peer <> opener),
    status          text NOT NULL CHECK (status IN ('in_progress', 'resolved', 'abandoned')),
    summary         text NOT NULL DEFAULT '',
    finished_by     text NOT NULL DEFAULT '',
    marker_entry_id uuid,
    progress_at     timestamptz NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX side_threads_parent_idx ON side_threads (parent_id, created_at);
CREATE INDEX side_threads_stale_idx ON side_threads (progress_at) WHERE status = 'in_progress';

CREATE TABLE delegations (
    id                uuid PRIMARY KEY,
    from_conversation uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    from_agent        text NOT NULL CHECK (from_agent <> ''),
    to_agent          text NOT NULL CHECK (to_agent <> ''),
    child_id          uuid NOT NULL UNIQUE REFERENCES conversations (id) ON DELETE CASCADE,
    task              text NOT NULL CHECK (task <> ''),
    factors           json NOT NULL,
    status            text NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    result            text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    finished_at       timestamptz
);

CREATE INDEX delegations_from_idx ON delegations (from_conversation, created_at);
CREATE INDEX delegations_to_agent_idx ON delegations (to_agent);
