// Package instances holds the test of several `switchboard serve` processes
// sharing one Postgres: work spread over both, nothing answered or fired
// twice, and one instance killed with SIGKILL while the other takes its
// turns over. It also upgrades a running service from the previous release
// to this source, and runs the binary on a schema a later release migrated.
// The tests build the binary and run it as an operator would.
package instances
