// Package instances holds the test of several `switchboard serve` processes
// sharing one Postgres: work spread over both, nothing answered or fired
// twice, and one instance killed with SIGKILL while the other takes its
// turns over. The test builds the binary and runs it as an operator would.
package instances
