package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errFault = errors.New("fault")

func TestDo(t *testing.T) {
	isFault := func(err error) bool { return errors.Is(err, errFault) }
	failing := func(n int, calls *int) func() error {
		return func() error {
			*calls++
			if *calls <= n {
				return errFault
			}
			return nil
		}
	}
	tests := []struct {
		name      string
		policy    Policy
		failures  int
		cancelled bool
		wantErr   bool
		wantCalls int
	}{
		{"success at once", Policy{For: time.Second}, 0, false, false, 1},
		{"fault then success", Policy{For: 5 * time.Second}, 3, false, false, 4},
		{"retries off", Policy{For: -1}, 3, false, true, 1},
		{"budget spent", Policy{For: 30 * time.Millisecond}, 1000, false, true, -1},
		{"ctx done", Policy{For: time.Minute}, 1000, true, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			if tc.cancelled {
				cancel()
			}
			defer cancel()
			calls := 0
			start := time.Now()
			err := Do(ctx, tc.policy, "test", isFault, failing(tc.failures, &calls))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Do returned %v after %d calls; want error: %v", err, calls, tc.wantErr)
			}
			if tc.wantCalls >= 0 && calls != tc.wantCalls {
				t.Fatalf("fn ran %d times, want %d", calls, tc.wantCalls)
			}
			if el := time.Since(start); tc.policy.For > 0 && el > tc.policy.For+time.Second {
				t.Fatalf("Do took %s, past its budget %s", el, tc.policy.For)
			}
		})
	}
}

func TestDoStopsOnOtherErrors(t *testing.T) {
	calls := 0
	other := errors.New("not found")
	err := Do(t.Context(), Policy{For: time.Minute}, "test", func(err error) bool { return errors.Is(err, errFault) },
		func() error {
			calls++
			if calls == 1 {
				return errFault
			}
			return other
		})
	if !errors.Is(err, other) || calls != 2 {
		t.Fatalf("want the non-retryable error after 2 calls, got %v after %d", err, calls)
	}
}
