-- Audit that leaves the building: each audit row keeps the OpenTelemetry
-- trace id of the request or turn that last wrote it, so a row shipped to
-- a sink or exported can be found in the traces ('' when there was none).
-- Only adds a column with a default: earlier binaries keep working.
ALTER TABLE audit_records ADD COLUMN trace_id text NOT NULL DEFAULT '';

