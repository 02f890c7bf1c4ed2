-- Audit trace ids: see the Postgres migration of the same number.
ALTER TABLE audit ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';
