// Package chaos holds tests that kill the real switchboard binary while it
// streams a reply to a fake Slack, restart it, and count what a user would
// see in the thread: a lost reply, a doubled one, a stream left open, a
// message cut short.
//
// The tests sit behind the build tag chaos; they build cmd/switchboard and
// run it as a subprocess:
//
//	go test -tags chaos -run 'TestKill|TestSigterm' ./internal/chaos/ -count=1
//
// CHAOS_RUNS sets the kills per test (default 5); CHAOS_DB is sqlite
// (default) or postgres, on a fresh schema of TEST_DATABASE_URL.
//
// TestMemory drives CHAOS_MEM_TURNS (default 5,000) turns, each a mention
// in a channel of its own, and fails when the service's RSS after them is
// more than 20 MB above its RSS after 500:
//
//	go test -tags chaos -run TestMemory ./internal/chaos/ -count=1 -v -timeout 30m
package chaos
