package slack

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The install flow's states are package oauthstate's (tested there); this
// checks the adapter refuses what it must, with the slack errors.
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
	good, err := a.opts.OAuth.signer(a.opts.Now).New(nil)
	if err != nil {
		t.Fatal(err)
	}
	expired, _ := a.opts.OAuth.signer(func() time.Time { return now.Add(-11 * time.Minute) }).New(nil)
	other := *a.opts.OAuth
	other.StateKey = []byte("another key of 20 by")
	otherKey, _ := other.signer(a.opts.Now).New(nil)
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
