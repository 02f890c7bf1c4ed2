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
// the log (a tool_call entry without a tool_result entry is pending) plus the
// approvals table for calls that wait for a person; entries are never edited.
//
// # What happens on failure
//
//   - The process dies mid-turn: the heartbeat stops, the lease expires, and
//     another worker claims the item again (attempt 2). RunTurn then moves the
//     dead attempt's entries after the triggering message to the discarded
//     table (inspectable), restores any messages people sent meanwhile, notes
//     the retry with an interim error entry and runs the turn from the
//     message. Attempts are capped (default 3); past the cap the sweep fails
//     the item and the user sees one retryable error.
//   - The lease is lost while the turn still runs (a long pause, a partition):
//     the heartbeat sees store.ErrLeaseLost, cancels the turn's context, and
//     the worker writes nothing more; the new owner takes over.
//   - The model fails after the backend's own bounded retries: an error entry
//     (seq NULL, redacted) is appended and the turn ends; the user may send
//     again. Error entries are never sent to a model.
//   - A tool fails, panics or gets bad arguments: the model sees a tool error
//     and the turn goes on.
//   - A wake-up is lost: workers poll, so it costs at most the poll interval.
package core
