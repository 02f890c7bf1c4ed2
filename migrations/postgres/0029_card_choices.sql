-- Card choices: the first click that acted on a card's buttons. A card's
-- buttons are settled by that click, on every instance: the row is
-- inserted with ON CONFLICT DO NOTHING in the transaction that records the
-- click's action, so of two clicks (two people, two instances) one acts
-- and the other is told who chose first.

CREATE TABLE card_choices (
    entry_id        uuid PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    action_id       text NOT NULL CHECK (action_id <> ''),
    value           text NOT NULL DEFAULT '',
    label           text NOT NULL DEFAULT '',
    platform        text NOT NULL DEFAULT '',
    user_id         text NOT NULL DEFAULT '',
    user_name       text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL
);
