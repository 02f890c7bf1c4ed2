// Package sqlite is the embedded store driver: store.Store on one SQLite file
// through modernc.org/sqlite (pure Go, no cgo). Open returns the driver
// behind store.New, which checks every params struct and fills in its
// defaults; the driver itself only runs queries and maps SQLite's errors to
// the store's sentinels. It is the default deployment
// (./data/switchboard.db) for a single Switchboard instance; several
// instances sharing one store need the Postgres driver.
//
// # One writer
//
// SQLite allows one writer at a time per file. Instead of letting several
// connections race for the write lock and fail with SQLITE_BUSY, the driver
// owns exactly one write connection (a *sql.DB capped at one open
// connection) and begins every transaction on it with BEGIN IMMEDIATE, which
// takes the write lock up front. Concurrent writers in the process therefore
// queue in database/sql for that connection, in Go, and never see
// SQLITE_BUSY from each other. This single writer is what the Postgres
// driver gets from row locks:
//
//   - appends read and bump last_seq on the conversation row inside the
//     writer's transaction, so seqs have no gaps and no duplicates;
//   - a work claim selects its candidates and marks them running in one
//     IMMEDIATE transaction, so no two workers ever get one item (the role of
//     SELECT ... FOR UPDATE SKIP LOCKED);
//   - BindingEnsure, unique-key enqueues and leases are check-then-write
//     sequences that nothing can interleave with.
//
// Plain reads outside a transaction use a separate pool of read-only
// connections. The file is in WAL mode, so readers see the last committed
// state and never block the writer or each other. busy_timeout (Options.
// BusyTimeout) only matters for locks taken outside this process: another
// process opening the same file, or a checkpoint.
//
// Outside a transaction each write takes a writer transaction of its own.
// InTx runs the caller's function in one writer transaction, reads included
// (so a count-then-create, such as the per-agent schedule limit, cannot
// interleave with another writer). Each call made
// through its Queries runs inside a savepoint, so a call that fails leaves
// none of its writes behind even if the caller carries on and commits. The
// function must use the Queries it is given, never the Store: the Store's
// methods wait for the one writer connection, which the function is holding.
//
// # Notifications
//
// With one writer process there is no one outside the process to wake, so
// notifications are an in-process fan-out: writes collect them during the
// transaction and they are published after the commit (never after a
// rollback) to buffered subscriber channels with non-blocking sends. A slow
// subscriber loses wake-ups rather than stalling the writer; it must also
// poll, as the store contract says.
//
// # Failure
//
// Commits are durable at synchronous=FULL: a committed transaction survives a
// process crash and a power loss. A crash in the middle of a transaction
// leaves only uncommitted frames in the WAL; the next open ignores them, so
// the transaction is rolled back as a whole (an append never leaves a half
// fork behind, a claim never leaves an item running without its conversation
// lease). On restart nothing in memory is needed: work items whose worker
// died keep state running until their lease expires, then WorkClaim hands
// them out again (or fails them for good once they used their last attempt),
// and ConversationListExpiredLeases finds the turns the sweep must fail.
// Subscribers are gone with the process; listeners poll on start.
//
// Timestamps are stored as INTEGER unix microseconds in UTC, so comparisons
// and ordering are exact; ids are TEXT UUIDs; JSON is TEXT. All SQL is in
// migrations/sqlite and in this package's queries/*.sql, from which sqlc
// generates internal/dbsqlc (go generate; see sqlc.yaml). Each pool
// prepares a statement on its first use and keeps it (stmt.go). Only the PRAGMA
// and savepoint statements, which sqlc does not generate, are constants in
// sqlite.go.
package sqlite
