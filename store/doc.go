// Package store holds Switchboard's durable state behind one interface: the
// conversation log, the work queue with its leases, inbound dedupe and the
// wake-up notifications that tell workers new rows exist.
//
// Each database has its own driver package (store/postgres, store/sqlite);
// both pass the one conformance suite in store/storetest. Callers only ever
// see the domain types and sentinel errors defined here, never a driver's own
// types or errors. Every method takes the time from its caller (the Now
// field of its params), so the whole state machine below runs on a test's
// clock as well as on the wall clock.
//
// # The log
//
// A conversation's entries are numbered 1, 2, 3... with no gaps. The seq is
// both the index the model's context is rebuilt from and the cursor a stream
// resumes from, so both are the one read "entries with seq > cursor". An
// entry is never edited. An append that expects a seq already taken (two
// writers raced, or a person edited an earlier message) forks instead:
//
//	root R      1 ── 2 ── 3 ── 4 ── 5
//	                      │
//	                      └─ edit of 3 (ExpectSeq 3) forks:
//	fork F1     1'── 2'── 3*            parent R, root R, fork_seq 3
//	                 │                  1', 2' are copies of R's 1, 2
//	                 └─ edit of 2 in F1 forks again:
//	fork F2     1''─ 2*                 parent F1, root R, fork_seq 2
//
// R's log is untouched by its forks; ConversationLineage(F2) is R, F1, F2.
// Error entries carry no seq: they are placed after the entry they followed
// (AfterSeq), shown with WithErrors and never sent to a model.
//
// # The work item
//
//	            WorkEnqueue (run_at; a duplicate UniqueKey returns the first item)
//	                 │
//	                 ▼
//	┌──────────► available ─────────── WorkCancel ──────────► cancelled
//	│                │                                            ▲
//	│                │ WorkClaim: run_at <= now, conversation     │
//	│                │ lease free; attempts+1, both leases taken  │
//	│                ▼                                            │
//	│             running ─────────── WorkCancel ─────────────────┘
//	│             │  │  │
//	│ WorkFail    │  │  └─ lease expired, WorkClaim by another worker:
//	│ attempts <  │  │     still running, attempts+1, new holder; the old
//	│ max: run_at │  │     holder gets ErrLeaseLost from now on
//	│ = RetryAt   │  │
//	└─────────────┘  ├─ WorkFail, attempts == max ──► failed (LastError kept)
//	                 └─ WorkComplete ──────────────► done
//
// done, failed and cancelled are final: nothing claims those items again.
//
// # The conversation lease
//
// At most one turn runs on a conversation. A claim takes the conversation's
// lease together with the item's, and WorkClaim never hands out an item
// whose conversation someone else holds, nor two items of one conversation.
//
//	       WorkClaim / ConversationLeaseAcquire
//	free ─────────────────────────────────► held (owner, expires_at) ◄─┐
//	 ▲                                        │  │                      │
//	 │  WorkComplete / WorkFail /             │  │ WorkHeartbeat or     │
//	 └─ ConversationLeaseRelease by owner ────┘  │ re-acquire by owner: │
//	                                             │ expires_at=now+TTL ──┘
//	                                             │
//	                          now >= expires_at  ▼
//	                                          expired ── WorkClaim or
//	                                                     ConversationLease-
//	                                                     Acquire by anyone
//	                                                     ──► held (new owner)
//
// The coarse status (idle, running, paused) beside the lease is the engine's
// to set with ConversationSetStatus; paused means a turn waits for a person
// or a client. Named leases (LeaseAcquire) follow the same
// free/held/expired cycle for things that are not conversations, such as the
// scheduler's leadership.
//
// # Transactions and notifications
//
// InTx runs several writes in one transaction: the outbox. Appending the
// user's message and enqueueing the turn it causes commit together or not at
// all, and a duplicate UniqueKey inside the transaction is an answer
// (Inserted false), not an error that aborts it. Wake-ups (TopicWork with the
// work kind, TopicEntries with the conversation id) are sent after the
// commit, never for a rolled-back transaction. They are pointers, not data,
// and best effort: a woken listener re-reads the store, and a listener also
// polls, so a lost wake-up only delays work.
//
// # What happens on failure
//
//   - A worker dies mid-turn. Its heartbeats stop and both leases run out at
//     expires_at; WorkClaim then hands the item to another worker with
//     attempts+1. An instance that restarts under the same worker id does not
//     wait: WorkReclaim hands back at once what its previous run held (the
//     crashed attempt counts). The entries the dead attempt committed stay in
//     the log, and tool_executions tells a call that was started (may or may
//     not have finished) from one that never was. EntryDiscard remains for
//     moving entries out of the log deliberately; recovery no longer uses it.
//   - A worker stops gracefully. WorkRelease gives each item it cut off back
//     at once, available with the attempt not counted, and frees the
//     conversation's lease.
//   - A worker stalls and comes back after its item was reclaimed. Its
//     WorkHeartbeat, WorkComplete, WorkFail and WorkRelease return
//     ErrLeaseLost and change nothing; it must stop. Appends and tool starts
//     that carry LeaseOwner are fenced: they return ErrLeaseLost and write
//     nothing. An unfenced write still cannot overwrite: it takes the next
//     seq, or forks when it carried ExpectSeq.
//   - An item keeps failing. Each WorkFail puts it back at RetryAt until
//     attempts reach MaxAttempts (3 by default); then it is failed for good
//     with its last error, for a person to look at.
//   - A platform delivers an event twice, or two instances fire the same
//     schedule. InboundRecord answers true to exactly one caller per event
//     id, and a UniqueKey enqueues exactly one item, even when the callers
//     race.
//   - Two writers append to one conversation at once. Seqs are handed out
//     under the conversation's row lock (Postgres) or the single writer
//     (SQLite): blind appends get consecutive seqs, expecting ones fork.
//   - A transaction fails. Nothing of it is visible and no wake-up is sent.
//   - A wake-up is lost, or the listener reconnects. Harmless: waking and
//     reconnecting run the same read past the cursor.
//   - An approval is decided too late, or twice. ApprovalDecide refuses with
//     ErrConflict once the approval is decided or past ExpiresAt, and
//     ApprovalExpire marks the late ones expired so the waiting turn can be
//     resumed with that answer.
//   - A connection is lost, the server restarts or fails over, a
//     serialization failure or deadlock aborts a transaction, SQLite's lock
//     stays busy. The driver retries with backoff for its RetryFor (30s by
//     default): InTx rolls back and runs fn again, a lone statement runs
//     again, so a caller never sees a fault shorter than that. A COMMIT whose
//     answer was lost is not re-run blindly: Postgres is asked whether that
//     transaction committed (ErrOutcomeUnknown only when it cannot say).
//   - The database is unreachable for longer. Every method returns the error
//     wrapped with ErrTransient (IsTransient); no state lives only in memory,
//     so a restart loses nothing that was committed.
//   - Finished work piles up. WorkPrune deletes done, failed and cancelled
//     items past a cutoff; the scheduler's sweep calls it.
package store
