// Package apikey makes and checks the API's credentials other than the
// operator's token: agent keys (exchanged for short-lived sessions), the
// sessions, people's personal access tokens scoped to workspaces, and
// exchange-only host tokens.
//
// A token reads "<prefix>_<lookup>_<secret>": the prefix says its kind
// (sbk agent key, sbs session, sbp personal, sbh host), the lookup is a
// public id that finds its row and names it in lists and revocations, and
// the secret is 256 bits from crypto/rand of which the store keeps only the
// SHA-256.
//
// Why no slow hash (bcrypt, argon2): those make guessing a low-entropy
// password from a stolen hash expensive. A 256-bit random secret cannot be
// guessed however fast the hash is (2^256 tries), so a slow hash would add
// nothing but cost on every request that presents a token.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// DefaultSessionTTL is how long a session lives when Options leave it zero.
const DefaultSessionTTL = 15 * time.Minute

// Errors of Check and Exchange; compare with errors.Is.
var (
	// ErrInvalid: the token is malformed, unknown or its secret is wrong.
	ErrInvalid = errors.New("invalid API token")
	// ErrRevoked: the token (or the key its session came from) was revoked.
	ErrRevoked = errors.New("API token revoked")
	// ErrExpired: the token's lifetime is over.
	ErrExpired = errors.New("API token expired")
	// ErrNotExchangeable: only agent keys and host tokens are exchanged.
	ErrNotExchangeable = errors.New("only an agent key or a host token can be exchanged for a session")
	// ErrAgent: the agent asked for is not one the credential may act as,
	// or is not configured.
	ErrAgent = errors.New("agent refused")
)

var prefixes = map[store.KeyKind]string{
	store.KeyAgent:    "sbk",
	store.KeySession:  "sbs",
	store.KeyPersonal: "sbp",
	store.KeyHost:     "sbh",
}

// Looks reports whether s is shaped like one of our tokens (or its public
// id), so a caller can tell it from another kind of bearer token.
func Looks(s string) bool {
	p, _, ok := strings.Cut(s, "_")
	if !ok {
		return false
	}
	for _, want := range prefixes {
		if p == want {
			return true
		}
	}
	return false
}

// ID is the public id of a key, as lists show it and revoke takes it:
// "<prefix>_<lookup>".
func ID(k *store.Key) string { return prefixes[k.Kind] + "_" + k.Lookup }

// Options configures New.
type Options struct {
	Store store.Store // required
	// SessionTTL is how long an exchanged session lives (default 15m).
	SessionTTL time.Duration
	// AgentKnownFunc reports whether an agent is configured; nil accepts
	// any name.
	AgentKnownFunc func(name string) bool
	Now            func() time.Time // default time.Now
}

// Keys issues and checks credentials.
type Keys struct {
	st    store.Store
	ttl   time.Duration
	known func(string) bool
	now   func() time.Time
}

// New checks o and fills its defaults.
func New(o Options) (*Keys, error) {
	if o.Store == nil {
		return nil, errors.New("apikey: Options.Store is required")
	}
	if o.SessionTTL < 0 {
		return nil, fmt.Errorf("apikey: Options.SessionTTL %s is negative", o.SessionTTL)
	}
	if o.SessionTTL == 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AgentKnownFunc == nil {
		o.AgentKnownFunc = func(string) bool { return true }
	}
	return &Keys{st: o.Store, ttl: o.SessionTTL, known: o.AgentKnownFunc, now: o.Now}, nil
}

// SessionTTL is how long an exchanged session lives.
func (k *Keys) SessionTTL() time.Duration { return k.ttl }

// Issued is a credential just made; Token is shown once and never stored.
type Issued struct {
	Token string
	Key   *store.Key
}

// CreateAgentKey issues a key for a program that acts as agent.
func (k *Keys) CreateAgentKey(ctx context.Context, agent, label string) (*Issued, error) {
	if !k.known(agent) {
		return nil, fmt.Errorf("creating an agent key: %w: agent %q is not configured", ErrAgent, agent)
	}
	return k.issue(ctx, &store.KeyCreateParams{Kind: store.KeyAgent, Agents: []string{agent}, Label: label})
}

// CreateHostToken issues an exchange-only token for a host that runs the
// given agents.
func (k *Keys) CreateHostToken(ctx context.Context, agents []string, label string) (*Issued, error) {
	for _, a := range agents {
		if !k.known(a) {
			return nil, fmt.Errorf("creating a host token: %w: agent %q is not configured", ErrAgent, a)
		}
	}
	return k.issue(ctx, &store.KeyCreateParams{Kind: store.KeyHost, Agents: agents, Label: label})
}

// CreatePersonal issues a person's token for the given workspaces, living
// ttl (0: no expiry).
func (k *Keys) CreatePersonal(ctx context.Context, person uuid.UUID, workspaces []uuid.UUID, label string, ttl time.Duration) (*Issued, error) {
	var expires *time.Time
	if ttl > 0 {
		t := k.now().Add(ttl)
		expires = &t
	}
	return k.issue(ctx, &store.KeyCreateParams{
		Kind: store.KeyPersonal, PersonID: &person, Workspaces: workspaces, Label: label, ExpiresAt: expires,
	})
}

func (k *Keys) issue(ctx context.Context, p *store.KeyCreateParams) (*Issued, error) {
	var raw [8 + 32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("reading randomness: %w", err)
	}
	lookup := hex.EncodeToString(raw[:8])
	secret := base64.RawURLEncoding.EncodeToString(raw[8:])
	sum := sha256.Sum256([]byte(secret))
	p.Lookup, p.SecretHash, p.Now = lookup, sum[:], k.now()
	key, err := k.st.KeyCreate(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("storing %s key: %w", p.Kind, err)
	}
	return &Issued{Token: prefixes[p.Kind] + "_" + lookup + "_" + secret, Key: key}, nil
}

// Check finds the credential a token names and verifies its secret. It
// returns the key even when it is revoked or expired (with ErrRevoked or
// ErrExpired), so a caller can say which; a session whose parent key was
// revoked is revoked with it.
func (k *Keys) Check(ctx context.Context, token string) (*store.Key, error) {
	prefix, rest, _ := strings.Cut(token, "_")
	lookup, secret, ok := strings.Cut(rest, "_")
	if !ok || lookup == "" || secret == "" {
		return nil, ErrInvalid
	}
	key, err := k.st.KeyFind(ctx, lookup)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, fmt.Errorf("checking API token: %w", err)
	}
	sum := sha256.Sum256([]byte(secret))
	if prefixes[key.Kind] != prefix || subtle.ConstantTimeCompare(sum[:], key.SecretHash) != 1 {
		return nil, ErrInvalid
	}
	now := k.now()
	switch {
	case key.RevokedAt != nil:
		return key, ErrRevoked
	case key.ExpiresAt != nil && !key.ExpiresAt.After(now):
		return key, ErrExpired
	}
	return key, nil
}

// Exchange trades an agent key or a host token for a session of one agent.
// agent may be empty for an agent key (its own agent) and for a host token
// of one agent.
func (k *Keys) Exchange(ctx context.Context, token, agent string) (*Issued, error) {
	key, err := k.Check(ctx, token)
	if err != nil {
		return nil, err
	}
	return k.ExchangeKey(ctx, key, agent)
}

// ExchangeKey is Exchange for a key already checked.
func (k *Keys) ExchangeKey(ctx context.Context, key *store.Key, agent string) (*Issued, error) {
	if key.Kind != store.KeyAgent && key.Kind != store.KeyHost {
		return nil, ErrNotExchangeable
	}
	if agent == "" {
		if len(key.Agents) != 1 {
			return nil, fmt.Errorf("%w: this host token serves %s; name one as \"agent\"", ErrAgent, strings.Join(key.Agents, ", "))
		}
		agent = key.Agents[0]
	}
	if !slices.Contains(key.Agents, agent) {
		return nil, fmt.Errorf("%w: this credential may act only as %s, not %q", ErrAgent, strings.Join(key.Agents, ", "), agent)
	}
	now := k.now()
	// Sessions pile up at one per exchange; the expired ones go here.
	if _, err := k.st.KeyPruneSessions(ctx, &store.PruneParams{Before: now, Limit: 100}); err != nil {
		return nil, fmt.Errorf("pruning expired sessions: %w", err)
	}
	exp := now.Add(k.ttl)
	return k.issue(ctx, &store.KeyCreateParams{
		Kind: store.KeySession, Agents: []string{agent}, ParentID: &key.ID, ExpiresAt: &exp,
	})
}

// Find resolves what an operator names a key by: its public id
// ("sbk_<lookup>"), a whole token, or its row id.
func (k *Keys) Find(ctx context.Context, ref string) (*store.Key, error) {
	ref = strings.TrimSpace(ref)
	if id, err := uuid.Parse(ref); err == nil {
		return k.st.KeyGet(ctx, id)
	}
	prefix, rest, ok := strings.Cut(ref, "_")
	lookup, _, _ := strings.Cut(rest, "_")
	if !ok || lookup == "" || !Looks(ref) {
		return nil, fmt.Errorf("%w: %q is not a key id (sbk_…, sbh_…, sbp_…)", store.ErrInvalid, ref)
	}
	key, err := k.st.KeyFind(ctx, lookup)
	if err != nil {
		return nil, err
	}
	if prefixes[key.Kind] != prefix {
		return nil, fmt.Errorf("finding key %s: %w", ref, store.ErrNotFound)
	}
	return key, nil
}

// Revoke revokes the key ref names (see Find) and its sessions.
func (k *Keys) Revoke(ctx context.Context, ref string) (*store.Key, error) {
	key, err := k.Find(ctx, ref)
	if err != nil {
		return nil, err
	}
	return k.st.KeyRevoke(ctx, &store.KeyRevokeParams{ID: key.ID, Now: k.now()})
}

// List lists keys of kind (empty: every kind but sessions).
func (k *Keys) List(ctx context.Context, kind store.KeyKind, includeRevoked bool) ([]*store.Key, error) {
	return k.st.KeyList(ctx, &store.KeyListParams{Kind: kind, IncludeRevoked: includeRevoked, Limit: 1000})
}

// TouchEvery is how often a credential's last use is written: a busy
// token costs one write a minute, not one a request.
const TouchEvery = time.Minute

// Touch records that key was used just now from ip with userAgent.
func (k *Keys) Touch(ctx context.Context, key *store.Key, ip, userAgent string) error {
	return k.st.KeyTouch(ctx, &store.TouchParams{ID: key.ID, IP: ip, UserAgent: userAgent, Every: TouchEvery, Now: k.now()})
}
