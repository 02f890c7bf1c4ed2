-- The spine of Switchboard: the conversation log, the work queue and its
-- leases, and the small tables that hang off them. Applied in one
-- transaction by store/postgres together with its row in
-- switchboard_schema_migrations.
--
-- JSON columns are `json`, not `jsonb`: callers own the bytes (metadata,
-- entry content) and get back exactly what they stored; nothing here queries
-- inside them.
-- Timestamps are timestamptz at microsecond precision; the driver truncates
-- in Go before writing, so a value read back equals the value written.

-- One row per conversation, with the fork tree and the lease of the turn
-- running on it. last_seq is the highest seq in its log: appends increment it
-- under the row lock, which is what keeps seq gap-free and unique.
CREATE TABLE conversations (
    id               uuid PRIMARY KEY,
    parent_id        uuid REFERENCES conversations (id),
    root_id          uuid NOT NULL,
    fork_seq         bigint,
    child_count      integer NOT NULL DEFAULT 0,
    agent_id         uuid,
    title            text NOT NULL DEFAULT '',
    provider         text NOT NULL DEFAULT '',
    model            text NOT NULL DEFAULT '',
    thinking         text NOT NULL DEFAULT '',
    status           text NOT NULL DEFAULT 'idle'
                     CHECK (status IN ('idle', 'running', 'paused')),
    metadata         json NOT NULL DEFAULT '{}',
    lease_owner      text NOT NULL DEFAULT '',
    lease_expires_at timestamptz,
    heartbeat_at     timestamptz,
    -- The work item whose claim took the lease; NULL for a lease taken with
    -- ConversationLeaseAcquire. Lets WorkClaim decide on this row alone (under
    -- its row lock) whether a lease held by the claiming worker is free for
    -- another item.
    lease_work_id    uuid,
    turn_attempts    integer NOT NULL DEFAULT 0,
    last_seq         bigint NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    CHECK ((parent_id IS NULL) = (fork_seq IS NULL))
);

CREATE INDEX conversations_parent_idx ON conversations (parent_id, created_at, id)
    WHERE parent_id IS NOT NULL;
CREATE INDEX conversations_lease_idx ON conversations (lease_expires_at)
    WHERE lease_owner <> '';

-- The append-only log. Error entries have no seq: they are shown, placed by
-- after_seq, and never reach a model.
CREATE TABLE entries (
    id              uuid PRIMARY KEY,
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    seq             bigint CHECK (seq > 0),
    after_seq       bigint NOT NULL CHECK (after_seq >= 0),
    kind            text NOT NULL CHECK (kind IN ('user', 'assistant', 'tool_call',
                        'tool_result', 'card', 'action', 'system', 'error')),
    author          text NOT NULL,
    content         json NOT NULL,
    turn_id         uuid,
    created_at      timestamptz NOT NULL,
    CONSTRAINT entries_conversation_seq_key UNIQUE (conversation_id, seq),
    CHECK ((kind = 'error') = (seq IS NULL))
);

CREATE INDEX entries_errors_idx ON entries (conversation_id, after_seq)
    WHERE seq IS NULL;

-- Entries moved out of the log by EntryDiscard (a crashed turn's partial
-- output), kept for inspection. Not unique on (conversation_id, seq): the
-- same seq can be discarded more than once over a conversation's life.
CREATE TABLE discarded_entries (
    id              uuid PRIMARY KEY,
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    seq             bigint,
    after_seq       bigint NOT NULL,
    kind            text NOT NULL,
    author          text NOT NULL,
    content         json NOT NULL,
    turn_id         uuid,
    created_at      timestamptz NOT NULL,
    reason          text NOT NULL,
    discarded_at    timestamptz NOT NULL
);

CREATE INDEX discarded_entries_conversation_idx
    ON discarded_entries (conversation_id, discarded_at);

-- The durable work queue. Claimed with FOR UPDATE SKIP LOCKED.
CREATE TABLE work_items (
    id               uuid PRIMARY KEY,
    kind             text NOT NULL CHECK (kind <> ''),
    payload          json NOT NULL,
    conversation_id  uuid REFERENCES conversations (id),
    agent_id         uuid,
    run_at           timestamptz NOT NULL,
    priority         integer NOT NULL DEFAULT 0,
    attempts         integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL CHECK (max_attempts > 0),
    -- Enqueue is idempotent on this key, forever: a scheduled fire keyed by
    -- (what, when) is never doubled even after it ran.
    unique_key       text UNIQUE,
    state            text NOT NULL
                     CHECK (state IN ('available', 'running', 'done', 'failed', 'cancelled')),
    claimed_by       text NOT NULL DEFAULT '',
    lease_expires_at timestamptz,
    last_error       text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    finished_at      timestamptz
);

-- The claim's two sources: due available items in claim order, and running
-- items whose lease may have expired.
CREATE INDEX work_items_available_idx ON work_items (priority DESC, run_at, created_at, id)
    WHERE state = 'available';
CREATE INDEX work_items_running_idx ON work_items (lease_expires_at)
    WHERE state = 'running';
CREATE INDEX work_items_running_conversation_idx ON work_items (conversation_id)
    WHERE state = 'running';
CREATE INDEX work_items_conversation_idx ON work_items (conversation_id, created_at)
    WHERE conversation_id IS NOT NULL;

-- Platform event ids already seen (Slack event_id, Discord message id).
CREATE TABLE inbound_events (
    platform text NOT NULL,
    event_id text NOT NULL,
    seen_at  timestamptz NOT NULL,
    PRIMARY KEY (platform, event_id)
);

CREATE INDEX inbound_events_seen_idx ON inbound_events (seen_at);

CREATE TABLE agents (
    id         uuid PRIMARY KEY,
    name       text NOT NULL UNIQUE CHECK (name <> ''),
    config     json NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

-- Where a conversation lives on a platform, and how far delivery has got.
CREATE TABLE bindings (
    id              uuid PRIMARY KEY,
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    platform        text NOT NULL CHECK (platform <> ''),
    workspace       text NOT NULL,
    channel         text NOT NULL,
    thread          text NOT NULL,
    delivered_seq   bigint NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    CONSTRAINT bindings_place_key UNIQUE (platform, workspace, channel, thread)
);

CREATE INDEX bindings_conversation_idx ON bindings (conversation_id);

-- What each entry became on a binding. No foreign key to entries: an entry
-- that was posted and then discarded keeps its record of the message.
CREATE TABLE posted (
    binding_id  uuid NOT NULL REFERENCES bindings (id),
    entry_id    uuid NOT NULL,
    message_ids text[] NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (binding_id, entry_id)
);

CREATE TABLE approvals (
    id              uuid PRIMARY KEY,
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    call_id         text NOT NULL,
    tool            text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('confirm', 'question')),
    risk            text NOT NULL,
    request         json NOT NULL,
    deciders        text[] NOT NULL DEFAULT '{}',
    status          text NOT NULL
                    CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    decision        json,
    decided_by      text NOT NULL DEFAULT '',
    expires_at      timestamptz NOT NULL,
    decided_at      timestamptz,
    created_at      timestamptz NOT NULL,
    CONSTRAINT approvals_call_key UNIQUE (conversation_id, call_id)
);

CREATE INDEX approvals_pending_idx ON approvals (expires_at) WHERE status = 'pending';

CREATE TABLE audit_records (
    id              uuid PRIMARY KEY,
    conversation_id uuid REFERENCES conversations (id),
    actor           text NOT NULL,
    action          text NOT NULL,
    risk            text NOT NULL,
    decision        text NOT NULL,
    result          text NOT NULL,
    detail          json NOT NULL,
    created_at      timestamptz NOT NULL
);

CREATE INDEX audit_records_conversation_idx ON audit_records (conversation_id, created_at)
    WHERE conversation_id IS NOT NULL;

-- Named leases such as the scheduler's leadership.
CREATE TABLE named_leases (
    name       text PRIMARY KEY,
    owner      text NOT NULL,
    expires_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE TABLE usage_records (
    id               uuid PRIMARY KEY,
    conversation_id  uuid NOT NULL REFERENCES conversations (id),
    turn_id          uuid,
    agent_id         uuid,
    provider         text NOT NULL,
    model            text NOT NULL,
    input_tokens     bigint NOT NULL DEFAULT 0,
    output_tokens    bigint NOT NULL DEFAULT 0,
    cached_tokens    bigint NOT NULL DEFAULT 0,
    reasoning_tokens bigint NOT NULL DEFAULT 0,
    cost_micro_usd   bigint NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL
);

CREATE INDEX usage_records_conversation_idx ON usage_records (conversation_id, created_at);
