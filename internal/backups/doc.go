// Package backups holds the test of `switchboard backup` and `switchboard
// restore` as an operator runs them: the built binary backs up a store
// that `serve` keeps writing to, the backup is restored into a fresh store,
// and everything acknowledged before the backup began is there; and the
// refusals (an existing PATH, a target that holds data or that a running
// process holds, a missing pg_dump).
package backups
