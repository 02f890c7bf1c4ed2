-- An entry a platform refused for good (a scope the app lacks, a channel it
-- is not in, a file too large or of a refused type) is recorded as
-- undeliverable on its binding, with the reason people are told, so that
-- every instance and every restart passes it instead of trying it again.
-- While pending is still set, the notice shown in its place is being
-- posted; once cleared, message_ids are the notice's messages. '' for an
-- entry delivered as itself (every row written before this migration).
ALTER TABLE posted ADD COLUMN undeliverable text NOT NULL DEFAULT '';
