// Package core is the headless orchestrator: it takes normalised inbound
// messages, keeps the conversation log, runs turns through model backends and
// tools, and publishes what turns do for the platforms to deliver. It never
// imports a platform SDK.
//
// # Flows
//
// Submit (inbound): in one transaction, dedupe the platform's event id, find
// or create the conversation bound to the thread, append the user entry and
// enqueue a "turn" work item. The store wakes a worker after the commit.
//
// Turn: a Worker claims the item together with the conversation's lease and
// calls RunTurn, which builds a fresh, single-use engine from the log, streams
// the model (deltas go to the Hub, never to the store), appends each finished
// entry at once, runs tools through the guard, and loops until nothing is
// pending, a call must wait for a person or a client, or the step budget is
// spent.
//
// A message that arrives while a turn runs is stored and queued at once;
// the running turn does not see it (its view was read when it started), and
// its reply lands after the message in the log. The reply records how far
// its model call had read (AssistantContent.SeenThrough), so the message's
// own turn reads it after that reply and answers it (seen.go): every
// message is answered, once.
//
// Deliver: the turn holds a TurnDelivery (Options.Deliverer, implemented by
// package deliver) when its conversation is bound to a platform. Deltas,
// statuses and retry resets go to it without waiting; each commit that
// appends an entry people see (Visible) also enqueues a WorkDeliver item, in
// the same transaction, and is then flushed to the platforms at once, under
// the turn's lease. The item runs after the turn and delivers what the turn
// could not (a platform error, a crash). A retried attempt first delivers
// what the dead one committed and takes over the live message it left.
//
// Summarise: a turn reads the latest summary entry and the log after the
// seq it covers, never the whole log; when that part is long (a log
// imported, forked or filled by channel history before its first summary)
// it reads a window of its newest entries and leaves the backlog to the
// summary item (window.go). A turn that ends with that context
// over the agent's context.summarize_at enqueues a "summarize" item (unless
// one is queued); it runs under the conversation's lease like a turn, asks
// the model to fold the older entries into a new summary (cut before a
// person's message, never between a call and its result) and appends it
// (summary.go). A turn that finds the context past the budget and a fifth
// before a model call writes the summary itself first, under its lease.
//
// # Conversation states
//
//	          Submit / PostMessage / Act
//	                   │ (entry + turn item, one commit)
//	                   ▼
//	┌──────► idle ──claim──► running ──no calls pending──► idle
//	│                          │   ▲
//	│                          │   └── tool results appended, next model call
//	│                          │
//	│          confirm / question / frontend call
//	│                          ▼
//	└── result or decision ── paused ── approval expires ──► (next turn records
//	    (Act, PostToolResults)                               "nobody answered")
//
// A tool call goes pending → executing → completed. Its state is derived from
// the log (a tool_call entry without a tool_result entry is pending), the
// approvals table for calls that wait for a person, and the tool_executions
// table, whose marker is written before a server tool's handler starts;
// entries are never edited:
//
//	tool_call entry ──guard──► marker "executing" ──handler──► tool_result entry
//	  (pending)      │          (store.ToolExecutionStart)      + marker "finished"
//	                 └─ confirm / question ─► paused (approval row)
//
//	resumed turn, call without a result:
//	  no marker          → run it (it never started)
//	  marker present     → append an interrupted is_error result; never re-run
//	                       (a marker still executing ends "interrupted" in
//	                       the same commit)
//
// A pending call waits for the server (its marker is executing, or it is a
// server tool's call not run yet, or an approved one), for a person (a
// pending approval or question) or for a client (a frontend tool of the
// conversation's context). PostToolResults takes a result only for the
// last (ErrNotForClient, ErrNeedsPerson, ErrNotPending otherwise), so a
// client never answers for a tool the server runs.
//
// The call id (tool.Request.CallID) is the call's idempotency key for tools.
//
// # Work item states
//
//	available ──claim──► running ──handler returns nil──► done
//	  ▲  ▲  ▲                │ │ │
//	  │  │  └─ handler error ┘ │ │  (at backoff; failed at MaxAttempts)
//	  │  └─── stop cuts it off ┘ │  WorkRelease: the attempt is not counted
//	  └────── crash ─────────────┘  lease expires (another worker claims it)
//	                                or the same instance restarts (WorkReclaim
//	                                at Start); the attempt counts
//
// # What happens on failure
//
//   - The process stops gracefully (SIGTERM, a deploy): Worker.Stop stops
//     claiming at once and lets running turns finish until its deadline,
//     then cancels them. Steps commit as they finish, so what finished stays
//     (a tool that returned as the turn was cut off is still recorded); the
//     item is released at once (store WorkRelease: available, the attempt not
//     counted, the conversation lease freed), and the next worker resumes the
//     turn from its last committed step without waiting for a lease.
//   - The process dies mid-turn: the heartbeat stops. The same instance
//     restarting (same WorkerID) takes its items back at once (store
//     WorkReclaim); otherwise another worker claims them once the lease
//     expires. Either way the crashed attempt counts (attempt 2). RunTurn
//     discards nothing: the dead attempt's assistant text, tool calls and
//     tool results stay, messages people sent meanwhile stay in order, an
//     interim error entry notes the retry, and the turn resumes after the
//     last committed step. A call the dead attempt started but never recorded
//     (its executing marker is there, its result is not) gets an is_error
//     result saying it was interrupted and may or may not have finished; it
//     is not run again. Attempts are capped (default 3); past the cap the
//     user sees one retryable error.
//   - The lease is lost while the turn still runs (a long pause, a partition):
//     every append and tool start of the turn is fenced by its lease owner, so
//     the first write after the takeover fails with store.ErrLeaseLost and
//     the turn stops writing; the heartbeat also sees ErrLeaseLost and
//     cancels the turn's context. The new owner takes over.
//   - The model fails after the backend's own bounded retries: an error entry
//     (seq NULL, redacted) is appended and the turn ends; the user may send
//     again. Error entries are never sent to a model.
//   - A tool fails, panics or gets bad arguments: the model sees a tool error
//     and the turn goes on.
//   - A wake-up is lost: workers poll, so it costs at most the poll interval.
package core
