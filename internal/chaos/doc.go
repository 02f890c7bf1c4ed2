// Package chaos holds tests that kill the real switchboard binary while it
// streams a reply to a fake Slack or a fake Discord, restart it, and count
// what a user would see in the conversation: a lost reply, a doubled one, a
// stream left open, a message cut short.
//
//   - TestKill: kill -9 mid-stream (Slack).
//   - TestSigterm: SIGTERM mid-stream, as a deploy (Slack).
//   - TestKillAfterLastToken: kill -9 at 5, 15 and 30 ms after the model's
//     last event, while the reply is being finished and recorded (Slack).
//   - TestKillDiscord: kill -9 mid-stream, while the reply shows by
//     throttled edits of one message (Discord).
//   - TestKillTakeover: kill -9 mid-stream and another instance takes the
//     turn over once the lease expires (Slack).
//   - TestRefusedUpload: no kill; Slack refuses a file for good
//     (missing_scope) in the second of five turns of one thread: every
//     reply once, whole and closed, and one notice in the file's place.
//   - TestKillVoiceNote, TestKillDiscordVoiceMessage: kill -9 while a Slack
//     audio clip (a Discord voice message) is being transcribed, held by
//     an OpenAI-compatible transcription server; after the restart the
//     note is heard again and answered once, the transcript quoted above
//     the reply, and the log holds the spoken message once.
//   - TestPostgresFaults: 120 mentions while every Postgres connection of
//     the service is terminated every 2 s, and (CHAOS_PG_RESTART=1) the
//     local cluster restarts once.
//   - TestMemory: CHAOS_MEM_TURNS (default 5,000) turns, each a mention in
//     a channel of its own; fails when the service's RSS after them is more
//     than 20 MB above its RSS after 500.
//
// The tests sit behind the build tag chaos; they build cmd/switchboard and
// run it as a subprocess:
//
//	go test -tags chaos -run 'TestKill|TestSigterm' ./internal/chaos/ -count=1
//	go test -tags chaos -run TestMemory ./internal/chaos/ -count=1 -v -timeout 30m
//
// CHAOS_RUNS sets the kills per test, and per delay (default 5); CHAOS_DB is
// sqlite (default) or postgres, on a fresh schema of TEST_DATABASE_URL.
package chaos
