package oauthstate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

type spender struct {
	mu    sync.Mutex
	spent map[string]bool
}

func (s *spender) claim(_ context.Context, nonce string, _ time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spent == nil {
		s.spent = map[string]bool{}
	}
	fresh := !s.spent[nonce]
	s.spent[nonce] = true
	return fresh, nil
}

func TestSignerChecks(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	sp := &spender{}
	signer := func(key, purpose string, at time.Time) *Signer {
		return &Signer{Key: []byte(key), Purpose: purpose, Claim: sp.claim, Now: func() time.Time { return at }}
	}
	s := signer("0123456789abcdef0123", "connect", now)
	if err := s.Validate(); err != nil {
		t.Fatalf("a complete signer: %v", err)
	}
	good, err := s.New([]byte(`{"person":"p1"}`))
	if err != nil {
		t.Fatal(err)
	}
	expired, _ := signer("0123456789abcdef0123", "connect", now.Add(-11*time.Minute)).New(nil)
	otherKey, _ := signer("another key of 20 by", "connect", now).New(nil)
	otherPurpose, _ := signer("0123456789abcdef0123", "slack install", now).New(nil)
	flip := "x"
	if good[5] == 'x' {
		flip = "y"
	}
	tests := []struct {
		name, state string
		want        error
		payload     string
	}{
		{"fresh", good, nil, `{"person":"p1"}`},
		{"replayed", good, ErrUsed, ""},
		{"expired", expired, ErrExpired, ""},
		{"signed with another key", otherKey, ErrInvalid, ""},
		{"made for another purpose", otherPurpose, ErrInvalid, ""},
		{"tampered", good[:5] + flip + good[6:], ErrInvalid, ""},
		{"empty", "", ErrInvalid, ""},
		{"no signature", "abc", ErrInvalid, ""},
	}
	for _, tt := range tests {
		payload, err := s.Check(context.Background(), tt.state)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s state: Check = %v, want %v", tt.name, err, tt.want)
			continue
		}
		if string(payload) != tt.payload {
			t.Errorf("%s state: payload %q, want %q", tt.name, payload, tt.payload)
		}
		if err != nil && !Refused(err) {
			t.Errorf("%s state: Refused(%v) = false, want true", tt.name, err)
		}
	}
}

func TestSignerValidate(t *testing.T) {
	err := (&Signer{Key: []byte("short")}).Validate()
	for _, want := range []string{"Key", "Purpose", "Claim"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate of an empty signer = %v, want it to name %s", err, want)
		}
	}
}
