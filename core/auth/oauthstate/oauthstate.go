// Package oauthstate makes and checks the state parameter of an OAuth
// authorization-code flow: signed (HMAC-SHA256 under a server key), expiring
// and single use, so a callback is accepted only for a flow this server
// started, within its lifetime, once. A state may carry a small payload
// (who started the flow, for what), which the signature covers; it is not
// encrypted, so it must hold nothing secret.
//
// The Slack install flow (bots/slack) and the GitHub and Google connections
// (package connection) both use it.
package oauthstate

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors of Check.
var (
	ErrInvalid = errors.New("the link is not one this server made")
	ErrExpired = errors.New("the link has expired; start again")
	ErrUsed    = errors.New("the link was used already; start again")
)

// ClaimFunc spends a state's nonce: false when it was spent before (the
// link replayed). Backed by the store, so any instance may get the callback.
type ClaimFunc func(ctx context.Context, nonce string, now time.Time) (bool, error)

// Signer makes and checks states.
type Signer struct {
	// Key signs the states; at least 16 bytes.
	Key []byte
	// Purpose separates the states of different flows signed with one key:
	// a state made for one purpose never checks for another.
	Purpose string
	// TTL is how long a state stays good. Default 10 minutes.
	TTL time.Duration
	// Claim spends nonces. Required.
	Claim ClaimFunc
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Validate says what is missing.
func (s *Signer) Validate() error {
	var errs []error
	if len(s.Key) < 16 {
		errs = append(errs, errors.New("oauthstate: Signer.Key must be at least 16 bytes"))
	}
	if s.Purpose == "" {
		errs = append(errs, errors.New("oauthstate: Signer.Purpose is required"))
	}
	if s.Claim == nil {
		errs = append(errs, errors.New("oauthstate: Signer.Claim is required"))
	}
	return errors.Join(errs...)
}

func (s *Signer) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

func (s *Signer) ttl() time.Duration {
	if s.TTL <= 0 {
		return 10 * time.Minute
	}
	return s.TTL
}

// header is the nonce (16 bytes) and the expiry (unix seconds, 8 bytes).
const header = 24

// New makes a state carrying payload: base64url(nonce | expiry | payload)
// "." base64url(HMAC).
func (s *Signer) New(payload []byte) (string, error) {
	raw := make([]byte, header, header+len(payload))
	if _, err := rand.Read(raw[:16]); err != nil {
		return "", fmt.Errorf("making a state nonce: %w", err)
	}
	binary.BigEndian.PutUint64(raw[16:header], uint64(s.now().Add(s.ttl()).Unix()))
	raw = append(raw, payload...)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(raw) + "." + enc.EncodeToString(s.mac(raw)), nil
}

func (s *Signer) mac(raw []byte) []byte {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(s.Purpose))
	m.Write([]byte{0})
	m.Write(raw)
	return m.Sum(nil)
}

// Check verifies the signature and the expiry, then spends the nonce, and
// returns the payload. Its errors are ErrInvalid, ErrExpired, ErrUsed, or a
// failure to spend the nonce.
func (s *Signer) Check(ctx context.Context, state string) ([]byte, error) {
	enc := base64.RawURLEncoding
	p, sig, ok := strings.Cut(state, ".")
	raw, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil || len(raw) < header || !hmac.Equal(mac, s.mac(raw)) {
		return nil, ErrInvalid
	}
	now := s.now()
	if now.Unix() > int64(binary.BigEndian.Uint64(raw[16:header])) {
		return nil, ErrExpired
	}
	fresh, err := s.Claim(ctx, enc.EncodeToString(raw[:16]), now)
	if err != nil {
		return nil, fmt.Errorf("spending the state: %w", err)
	}
	if !fresh {
		return nil, ErrUsed
	}
	return raw[header:], nil
}

// Refused reports whether err is one of the refusals of Check (the
// caller's fault) rather than a failure of the server.
func Refused(err error) bool {
	return errors.Is(err, ErrInvalid) || errors.Is(err, ErrExpired) || errors.Is(err, ErrUsed)
}
