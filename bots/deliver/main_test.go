package deliver_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: a
// worker, stream or subscription that a stop left running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
