package model

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks no call leaves a goroutine behind: a stream not closed on
// an error path would hold its connection's reader.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
