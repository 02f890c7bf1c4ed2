package browse_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A call's browser, proxy and tunnels end with the call.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
