//go:build race

package bench_test

// raceEnabled: the race detector slows SQLite's pure-Go engine tenfold,
// too much for a figure paced at 500 items a second.
const raceEnabled = true
