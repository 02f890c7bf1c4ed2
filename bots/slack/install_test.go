package slack

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestInstallState(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	spent := map[string]bool{}
	a := &Adapter{opts: Options{Now: func() time.Time { return now }, OAuth: &OAuthOptions{
		StateKey: []byte("0123456789abcdef0123"),
		ClaimStateFunc: func(_ context.Context, nonce string, _ time.Time) (bool, error) {
			fresh := !spent[nonce]
			spent[nonce] = true
			return fresh, nil
		},
	}}}
	good, err := newState(a.opts.OAuth.StateKey, now.Add(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	expired, _ := newState(a.opts.OAuth.StateKey, now.Add(-time.Second))
	otherKey, _ := newState([]byte("another key of 20 by"), now.Add(time.Minute))
	flip := "x"
	if good[5] == 'x' {
		flip = "y"
	}
	tests := []struct {
		name, state string
		want        error
	}{
		{"fresh", good, nil},
		{"replayed", good, ErrStateUsed},
		{"expired", expired, ErrStateExpired},
		{"signed with another key", otherKey, ErrStateInvalid},
		{"tampered", good[:5] + flip + good[6:], ErrStateInvalid},
		{"empty", "", ErrStateInvalid},
	}
	for _, tt := range tests {
		if err := a.checkState(context.Background(), tt.state); !errors.Is(err, tt.want) {
			t.Errorf("%s state: checkState = %v, want %v", tt.name, err, tt.want)
		}
	}
}
