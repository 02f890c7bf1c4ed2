// Package postgres is the Postgres driver of store.Store, on pgx/v5 and
// pgxpool. It is the store for production and for several instances of
// Switchboard sharing one database.
//
// The driver is thin: Open puts it behind store.New, whose rules check every
// call's parameters and fill in the defaults, so the driver only runs
// queries and maps Postgres's errors to the store's (no row is
// store.ErrNotFound, a unique violation store.ErrConflict, a lost connection
// store.ErrTransient once retrying did not get past it).
//
// All SQL lives in .sql files: the schema in migrations/postgres, the queries
// in queries/*.sql. sqlc generates the Go that runs them into
// internal/dbsqlc (go generate; sqlc.yaml says how), and the generated code
// is committed. Every query takes the time from the caller's Now; nothing
// reads the database's now(). Times are written in UTC truncated to
// microseconds and read back in UTC, so a value round-trips exactly.
//
// # The log
//
// conversations.last_seq is the highest seq of a conversation's log. An
// append is one statement that increments it under the conversation's row
// lock and inserts the entry at the new value: concurrent appenders queue on
// that lock, so seq never has a gap or a duplicate, and the common append
// costs one round trip and one commit (BenchmarkStore/append: 1.1-1.5x a
// bare single-row INSERT at p50). With 50 appenders on one conversation it
// does 2.6x the appends/s of retrying on the unique violation
// (BenchmarkSeqAllocation), which averages 20 retries per append. An append
// that the one statement refused locks the row, re-checks the lease fence,
// and lets store.DecideAppend choose: append after all, or fork (a new
// conversation seeded with the entries before ExpectSeq, the entry landing
// at ExpectSeq in it).
//
// # The work item state machine
//
//	                  WorkEnqueue
//	                       |
//	                       v
//	+---------------->  available  -----------------------------+
//	| WorkFail,             |                                   |
//	| attempts < max        | WorkClaim (run_at <= now):        |
//	| (run_at = RetryAt)    | takes the conversation's lease,   |
//	|                       | attempts + 1                      |
//	|                       v                                   |
//	+------------------  running  <----+                        |
//	                     |  |  |       | WorkHeartbeat          |
//	                     |  |  |       | (extends both leases)  |
//	                     |  |  +-------+                        |
//	                     |  |                                   |
//	                     |  | lease expired: the next WorkClaim |
//	                     |  | by anyone takes it again          |
//	                     |  | (attempts + 1) or, once attempts  |
//	                     |  | >= max, fails it                  |
//	                     |  |                                   |
//	       WorkComplete  |  | WorkFail, attempts >= max         |
//	                     v  v                                   |
//	                  done  failed  <---------------------------+
//	                                  (WorkReclaim on the last attempt)
//
// done and failed are final. Leaving running (complete, fail, release,
// reclaim) releases the conversation's lease in the same statement.
//
// A claim takes the conversation's lease with the item, and never hands out
// an item whose conversation's lease is held, nor two items of one
// conversation. It locks candidate items with FOR UPDATE SKIP LOCKED, then
// their conversations with FOR UPDATE SKIP LOCKED; the second lock re-reads
// each conversation's newest row, so two claimers racing for one
// conversation cannot both win. An item with an ordering key is left out
// while an item of its key is running or one inserted before it (created_at,
// then id) is available; an earlier item locked by another claimer is still
// available in every snapshot until that claim commits, so two claimers never
// both take items of one key.
//
// # Wake-ups
//
// Writes that make work or entries visible (WorkEnqueue, a failed item going
// back to available, a released lease with work waiting behind it,
// EntryAppend) queue a notification. Inside InTx they are held until the
// commit succeeds and dropped on rollback; outside, the single statement has
// committed by the time it returns. A notifier goroutine gathers them for
// Options.NotifyDebounce, drops duplicates and sends them with pg_notify in
// one round trip. NOTIFY inside the writing transactions would serialise
// every commit on Postgres's notification queue lock, which halves insert
// throughput.
//
// Subscribe shares one LISTEN connection per Store (never a pooled one),
// fanned out to buffered channels; a subscriber that does not keep up loses
// notifications instead of slowing the others. Channel names carry the
// schema, so deployments sharing a database do not wake each other.
//
// # Migrations
//
// Migrate applies migrations/postgres in order, each in its own transaction
// with its row in switchboard_schema_migrations, under a transaction-scoped
// advisory lock keyed by the schema. Instances starting together serialise on
// the lock; each re-checks the version table under it, so every migration
// runs once. A failed migration rolls back whole: the version stays at the
// last one that succeeded and the error names the file.
//
// # What happens on failure
//
// A worker crashes mid-turn: its heartbeats stop, and the item's and the
// conversation's leases expire together. ConversationListExpiredLeases finds
// the conversation for the sweep that fails the dead turn cleanly; any
// WorkClaim after the expiry may also take the item again (attempts + 1), and
// WorkReclaim lets the same instance take it back at once when it restarts.
// The entries the turn committed stay in the log. The crashed worker, if it
// comes back, gets ErrLeaseLost on its next heartbeat, complete, fail or
// release, and on every append or tool start fenced by its LeaseOwner (the
// fence is checked on the conversation row the statement locks, so a
// takeover that committed first always wins), and must stop.
// An item that keeps killing its worker is failed for good once its lease
// expires on the last allowed attempt.
//
// The server crashes: a WorkClaim made outside a transaction commits
// without waiting for the WAL flush (its own small pool runs with
// synchronous_commit off), so a claim made just before the crash may be
// lost. Its items come back available with the attempt uncounted, as if
// never claimed. A claim whose handler committed anything durably is never
// lost: that commit flushed the WAL past the claim.
//
// A NOTIFY is lost (the notifier's send failed, the listener was
// reconnecting, a subscriber's buffer was full): nothing depends on it.
// Notifications only say "look again"; workers also poll, and a poll and a
// wake-up run the same query. After a reconnect the listener sends every
// subscriber one notification with an empty payload, because anything sent
// meanwhile was missed.
//
// The connection is lost (pg_terminate_backend, a restart, a failover), or a
// serialization failure, deadlock or too_many_connections gets in the way:
// the call is retried with backoff (10ms doubling to 1s, jittered) for
// Options.RetryFor, 30s by default, and only then fails wrapped with
// store.ErrTransient. pgxpool drops the broken connections and dials new
// ones. InTx rolls back and runs fn again, whole; a lone statement runs
// again. Nothing is retried once ctx is done.
//
// A COMMIT whose answer was lost may or may not have committed. InTx reads
// its transaction id (txid_current_if_assigned, one round trip) before every
// COMMIT, and on such a loss asks the server with txid_status on another
// connection: committed means success (and its notifications go out),
// aborted means fn runs again, still in progress means ask again. Only when
// the server cannot be asked within the budget does InTx return
// store.ErrOutcomeUnknown, which is not transient, so that nothing runs fn a
// second time on a guess. A lone statement outside InTx has no such check:
// run again after a loss in the narrow window between its commit and its
// answer, it either converges (upserts, renewals, reads) or reports what it
// then finds: ErrLeaseLost, Inserted false, or ErrConflict for an insert,
// whose id is made before the first try, never a second row. Work that must
// happen once runs in InTx. The listener reconnects with backoff from 100ms
// to about 13s and LISTENs again on every topic that has subscribers. An
// InTx that fails sends none of its notifications.
//
// Two instances migrate at once: see Migrations above; both succeed.
//
// # Running behind PgBouncer
//
// Set Options.SimpleProtocol for a pooler in transaction mode (no prepared
// statements), and Options.ListenURL to a direct server URL, since LISTEN
// cannot work through such a pooler. With Options.Schema, the pooler must
// pass search_path through (PgBouncer's track_extra_parameters).
package postgres

//go:generate sqlc generate
