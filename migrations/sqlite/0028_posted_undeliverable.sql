-- An entry a platform refused for good is recorded as undeliverable on its
-- binding, with the reason people are told. Same shape as Postgres (see
-- postgres/0028_posted_undeliverable.sql), in this dialect's conventions.
ALTER TABLE posted ADD COLUMN undeliverable TEXT NOT NULL DEFAULT '';
