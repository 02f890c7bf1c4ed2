package main

import (
	"os"
	"testing"

	"github.com/switchboardhq/switchboard/internal/bench"
)

// TestMain lets this test binary stand in for switchboard: the rss and start
// figures of `switchboard bench` start the running executable as `serve`
// and `migrate`, which under `go test` is this binary.
func TestMain(m *testing.M) {
	if os.Getenv(bench.TestBinaryEnv) == "1" {
		main()
		os.Exit(0)
	}
	// Set for the whole process rather than by the bench tests (t.Setenv
	// would keep them from running beside the others): a child started
	// from this binary is switchboard, and nothing else here starts one.
	if err := os.Setenv(bench.TestBinaryEnv, "1"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
