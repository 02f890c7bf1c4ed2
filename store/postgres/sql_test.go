package postgres

// SQL used only by this package's tests and benchmarks.
const (
	// rawTableCreate is the append benchmark's baseline: a table shaped like
	// entries, with its primary key and (conversation_id, seq) unique index
	// but none of the log's bookkeeping.
	rawTableCreate = `
CREATE TABLE bench_raw_entries (
    id              uuid PRIMARY KEY,
    conversation_id uuid NOT NULL,
    seq             bigint NOT NULL,
    after_seq       bigint NOT NULL,
    kind            text NOT NULL,
    author          text NOT NULL,
    content         json NOT NULL,
    turn_id         uuid,
    created_at      timestamptz NOT NULL,
    UNIQUE (conversation_id, seq)
)`

	rawInsert = `
INSERT INTO bench_raw_entries (id, conversation_id, seq, after_seq, kind, author,
                               content, turn_id, created_at)
VALUES ($1, $2, $3::bigint, $3::bigint - 1, 'assistant', 'agent:bench', $4, NULL, $5)`

	// appendRetryOnConflict is the alternative to the row lock, measured by
	// BenchmarkSeqAllocation: read max(seq) + 1 and insert there, trying
	// again when another appender won. No row back means the seq was taken.
	// It does not even maintain last_seq, which only favours it.
	appendRetryOnConflict = `
INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content,
                     turn_id, created_at)
SELECT $1, $2, m.next, m.next - 1, 'assistant', 'agent:bench', $3, NULL, $4
FROM (SELECT COALESCE(max(seq), 0) + 1 AS next FROM entries WHERE conversation_id = $2) m
ON CONFLICT (conversation_id, seq) DO NOTHING
RETURNING seq`

	versionRows   = `SELECT count(*), count(DISTINCT version) FROM switchboard_schema_migrations`
	schemaVersion = `SELECT COALESCE(max(version), 0) FROM switchboard_schema_migrations`
	tableExists   = `SELECT to_regclass($1::text) IS NOT NULL`
	schemaDrop    = `SELECT format('DROP SCHEMA IF EXISTS %I CASCADE', $1::text)`

	terminateBackend = `SELECT pg_terminate_backend($1::integer)`

	// earlierVersionTable is the version table as binaries made it before
	// they recorded who applied a migration and its floor, with version 1
	// applied; earlierRecord is how such a binary records a version.
	earlierVersionTable = `
CREATE TABLE switchboard_schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE schema_probe_1 (id integer);
INSERT INTO switchboard_schema_migrations (version, name) VALUES (1, 'test/0001_probe.sql')`
	earlierRecord = `INSERT INTO switchboard_schema_migrations (version, name, applied_at) VALUES ($1, $2, now())`

	// terminateApp ends every session of one application name but the
	// caller's; with a timeout, waits until each has exited.
	terminateApp = `
SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, $2::bigint))
FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1`
)
