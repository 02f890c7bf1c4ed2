//go:build race

package storetest

// raceEnabled scales the load tests down under the race detector, which
// slows a pure-Go SQLite by an order of magnitude: the point of a -race run
// is to find races, and a few thousand items find them as well as ten.
const raceEnabled = true
