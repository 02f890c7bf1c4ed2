-- Who takes part in a conversation: people and agents, each named by the
-- author string of what they write ('user:…', 'agent:…'). A removed
-- participant keeps its row so the channel's configuration does not bring
-- it back; done_seq marks an agent that said it is done.
--
-- conversation_floors counts consecutive agent messages with no person in
-- between, for the loop guard.

CREATE TABLE participants (
    conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    author          text NOT NULL CHECK (author LIKE 'user:%' OR author LIKE 'agent:%'),
    joined          text NOT NULL CHECK (joined IN ('wrote', 'addressed', 'invited', 'channel', 'routed', 'started')),
    done_seq        bigint CHECK (done_seq >= 0),
    removed_at      timestamptz,
    joined_at       timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (conversation_id, author)
);

CREATE TABLE conversation_floors (
    conversation_id uuid PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    agent_streak    integer NOT NULL DEFAULT 0 CHECK (agent_streak >= 0),
    updated_at      timestamptz NOT NULL
);
