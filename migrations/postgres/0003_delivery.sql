-- Delivery as a stage of its own. A posted row is written as an intent
-- (pending) before the platform is called and completed with the platform's
-- message ids after, so a delivery that dies between the two knows it may
-- have posted and looks before posting again. A live stream's messages are
-- recorded as they are made, so a retry or a recovery can take over or
-- finish the message a dead attempt left open.

ALTER TABLE posted ADD COLUMN pending boolean NOT NULL DEFAULT false;

CREATE TABLE live_streams (
    binding_id  uuid PRIMARY KEY REFERENCES bindings (id),
    turn_id     uuid,
    message_ids text[] NOT NULL,
    updated_at  timestamptz NOT NULL
);
