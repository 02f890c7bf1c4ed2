// Package command is the scheduling command language people type to the
// bot: "remind in 2h -- call Ana", "routine add digest every 4h -- …",
// "loops", "loop stop ship". It reads a command, acts on the scheduler and
// answers in words, with no model call.
//
// # One path from every platform
//
// Every platform reaches the commands through one core.CommandFunc,
// Handler.Answer:
//
//	Slack, Discord: "!remind in 2h -- call Ana" ──► core.Service.Submit
//	                  (CommandPrefix) ──► Options.CommandFunc ─┐
//	Discord: /remind when:"in 2h" what:"call Ana"              ├─► Handler.Answer
//	         ──► discord.Options.CommandFunc ──────────────────┘
//
// A typed command carries its text; a platform's command form (Discord's
// /remind) carries its name as the text and its options as
// core.Command.Fields, so nothing is rebuilt into text and read back.
// Answer reads the command, runs it against the scheduler and turns a
// malformed command into a reply that says what is wrong ("⚠️ …"); only a
// failure on the server's side is returned as an error.
//
// The package depends on the scheduler through the Schedules interface,
// which *scheduler.Scheduler implements; internal/app wires the two. The
// scheduler never imports this package. Times people type ("tomorrow
// 9:00") are read by package command/when, which the scheduler's own
// remind tool shares.
//
// # What happens on failure
//
//   - A malformed command, an unknown verb, a schedule that is not the
//     person's, or a limit reached (ErrTooMany) is answered with the reason;
//     nothing changed.
//   - The store fails while a command runs: the error is returned and the
//     platform tells the person the command failed; a command changes at
//     most one schedule, in one store call, so there is nothing to undo.
package command
