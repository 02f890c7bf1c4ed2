// Package scheduler drives Switchboard's scheduled work: routines (an
// agent's task on an interval or a cron line, delivered into the workspace
// the routine belongs to), reminders (a text DM to their owner, no model
// call), pulses (an agent's cheap check-ins that speak only when something
// matters), goal loops (iterations the server, not the agent, decides to
// continue) and sweeps (expired approvals, stale leases, old ephemeral rows).
//
// # What lives here and what does not
//
// The scheduler keeps schedules (manage.go: create, change, pause, resume,
// stop, delete), leadership (elector.go), firing (scheduler.go, fire.go,
// pulse.go, loop.go), the spine's sweeps (sweep.go) and the agent tools
// (tools.go). The scheduled-run tools, pulse_report and report_progress,
// are offered only in the scheduler's own runs (Offered, RunContext).
//
// The command language people type ("!remind in 2h -- call Ana", "routine
// pause digest", Discord's /remind) is package command, which acts on the
// scheduler through its exported methods; reading the times people write
// ("tomorrow 9:00") is package command/when, a standard-library-only leaf
// that the remind tool and spec parsing here share. The scheduler imports
// neither command nor any platform or delivery package.
//
// # Time and leadership
//
// gocron v2 runs two jobs, a dispatch every second and a sweep every minute,
// on every instance; a gocron Elector backed by the store's named lease
// "switchboard.scheduler" lets only the holder run them. The lease is taken
// or renewed every third of its TTL and the holder stops counting itself
// leader at two thirds, before anyone else could take it. On SQLite there is
// one process and the same code simply always leads.
//
// The store, not gocron, knows when each schedule is due: every schedule row
// carries next_run_at. A dispatch lists the due rows and, for each one, in
// one transaction, moves next_run_at on with a compare-and-set (only the
// caller that saw the old value succeeds) and enqueues a "schedule_fire"
// work item whose unique key is (schedule, scheduled time). Either guard
// alone keeps a fire single; together they hold even when two instances
// briefly both think they lead. Cron lines (gocron's parser) and "every Nd"
// are read on the wall clock of the schedule's time zone; Spec says what
// happens at daylight saving changes.
//
// # Life of a schedule
//
//	           create (tool, command, config)
//	                      │ next_run_at = first occurrence
//	                      ▼
//	┌──────────────► active ──pause──► paused ──resume──┐
//	│                  │  ▲                             │
//	│        due: CAS next_run_at + enqueue fire ◄──────┘
//	│                  │  │
//	│                  │  └── routine, pulse: next_run_at = next occurrence
//	│                  │
//	│      reminder: ──┴──► done (no next occurrence)
//	│                          │ Snooze (one-off): CAS the firing's run note, then
//	└──────────────────────────┘ active again, next_run_at = the snooze time
//
//	│  loop: next_run_at = none while the iteration runs
//	│        └─ after the turn, decideLoop:
//	└──────────── continue: next_run_at = now + interval
//	              complete / stopped (a guardrail) ──► done    ┐ the owner
//	              blocked ──► blocked ──resume──► active        ┘ is told why
//
// # Life of a fire
//
//	schedule_fire (work item, key = schedule + time [+ loop iteration])
//	  │ claimed by any instance's worker
//	  ├─ routine:  core.Service.StartConversation in a conversation bound to the target,
//	  │            with the occurrence as its place's Run (its own conversation per run)
//	  ├─ reminder: one transaction: record the run (note "delivered"),
//	  │            append "⏰ Reminder: …" as the agent's message in a DM
//	  │            conversation, with Snooze and Done buttons naming the
//	  │            run + enqueue "deliver" (snooze.go)
//	  ├─ pulse:    hash the checklist inputs; unchanged ─► run "skipped", no
//	  │            model call; changed ─► Start a silent conversation
//	  │            (platform "scheduler", never delivered) + schedule_after_run
//	  └─ loop:     budget or deadline already spent ─► stop; else Start a
//	               silent iteration + schedule_after_run
//
//	schedule_after_run sits on the run's conversation below the turn's
//	priority, so the worker hands it out only once the turn released the
//	conversation: it records a pulse's inputs as seen, or makes the loop's
//	decision from the iteration's report_progress.
//
// # Run now
//
// RunNow (the console's Run now) makes a fire early through the same path.
// A routine or pulse gets an extra run keyed by the current minute, its
// next occurrence kept. A reminder's or a loop's pending occurrence is
// claimed with the dispatch's own compare-and-set on next_run_at and
// enqueued under the clock's key for it (the occurrence, or the loop's
// iteration), so it replaces the clock's fire instead of adding one: a
// reminder is then done (or at its following occurrence), a loop waits
// for the decision after that iteration.
//
// # What happens on failure
//
//   - The leader dies: its lease expires (default 15s) and another instance
//     takes over; fires are late by at most the TTL, never lost, because
//     next_run_at is still in the past when the new leader looks.
//   - Two instances both dispatch (a paused process waking up with a stale
//     idea of its lease, skewed clocks): the compare-and-set lets one advance
//     the schedule and the unique key refuses a second fire item.
//   - Run now and the clock's dispatch fire one reminder or loop tick at
//     once (on one instance or two): the compare-and-set lets one through
//     and the unique key refuses a second item; a run now that lost reads
//     the schedule again and answers that it was already fired.
//   - No instance runs when a fire falls due: at start the first dispatch
//     finds it due. run_once fires once, for the latest missed occurrence,
//     however many were missed; skip moves to the next occurrence. Reminders
//     always fire, saying they are late.
//   - The process dies while running a fire: the worker reclaims the item
//     after its lease and runs it again. Every branch is idempotent: the
//     run's conversation is bound to a place named after the occurrence and a
//     retry that finds it starts nothing; a reminder's post and its run
//     record commit in one transaction.
//   - Two clicks on one reminder firing (Snooze and Done, or one click
//     delivered to two instances): the click's event id is recorded once,
//     and the firing's run note is compared and set (delivered → what was
//     done), so one click changes the schedule, in the same transaction;
//     the others change nothing and a late clicker is told who came first.
//   - A turn fails (model error): the routine's conversation shows the error;
//     a failed pulse is not recorded as seen, so the next pulse looks again;
//     a loop iteration that failed without a report stops the loop and tells
//     the owner.
//   - A pulse or loop turn waits for a person (an approval): the after-run
//     check sees the conversation paused and looks again every
//     RecheckInterval; the sweep expires the approval and resumes the turn.
//   - A schedule's spec no longer parses (time zone data gone): it is paused
//     with the reason instead of being retried every second.
//   - The agent never calls report_progress: the iteration counts as one
//     that made no progress; two in a row stop the loop. An agent that keeps
//     saying "continue" is stopped by the iteration, token and deadline
//     guardrails, checked by the server after every iteration.
package scheduler
