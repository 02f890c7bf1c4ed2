package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// API credentials other than the operator's token: agent keys, the sessions
// they are exchanged for, personal access tokens and hosts' exchange-only
// tokens. The store keeps only a hash of each token's secret; making and
// checking tokens is the caller's (package apikey).

// KeyKind says what a credential is and what it may do.
type KeyKind string

const (
	KeyAgent    KeyKind = "agent"    // an agent key: exchanged for sessions, refused anywhere else
	KeySession  KeyKind = "session"  // a short-lived session of one agent, from a key or a host token
	KeyPersonal KeyKind = "personal" // a person's token, scoped to workspaces
	KeyHost     KeyKind = "host"     // exchange-only, for the agents it lists
)

// Valid reports whether k is a known kind.
func (k KeyKind) Valid() bool {
	switch k {
	case KeyAgent, KeySession, KeyPersonal, KeyHost:
		return true
	}
	return false
}

// Key is one stored credential.
type Key struct {
	ID   uuid.UUID
	Kind KeyKind
	// Lookup is the public part of the token that finds the row; unique.
	Lookup string
	// SecretHash is the SHA-256 of the token's secret part.
	SecretHash []byte
	// Agents: the agent of an agent key or a session; the agents a host
	// token may open sessions for.
	Agents []string
	// PersonID and Workspaces scope a personal token.
	PersonID   *uuid.UUID
	Workspaces []uuid.UUID
	// ParentID is the key or host token a session was exchanged from.
	ParentID  *uuid.UUID
	Label     string
	CreatedAt time.Time
	ExpiresAt *time.Time // nil: does not expire
	RevokedAt *time.Time // nil: live
	// LastUsedAt, LastIP and LastUserAgent are the token's last use
	// (KeyTouch); nil and "" until the first.
	LastUsedAt    *time.Time
	LastIP        string
	LastUserAgent string
}

// Usable reports whether the key is neither revoked nor expired at now.
func (k *Key) Usable(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || k.ExpiresAt.After(now))
}

// KeyCreateParams stores a new credential. Agent keys and sessions name
// exactly one agent, host tokens at least one; personal tokens name a
// person and at least one workspace; a session has a parent and an expiry.
type KeyCreateParams struct {
	ID         uuid.UUID // zero: a new id
	Kind       KeyKind
	Lookup     string
	SecretHash []byte
	Agents     []string
	PersonID   *uuid.UUID
	Workspaces []uuid.UUID
	ParentID   *uuid.UUID
	Label      string
	ExpiresAt  *time.Time
	Now        time.Time
}

// KeyListParams filters KeyList. Sessions are never listed.
type KeyListParams struct {
	Kind KeyKind // empty: every kind but sessions
	// PersonIDs, when set, lists only the personal tokens of these people.
	PersonIDs      []uuid.UUID
	IncludeRevoked bool
	Limit          int // 0: DefaultListLimit
}

// KeyRevokeParams revokes a credential and every session made from it.
type KeyRevokeParams struct {
	ID  uuid.UUID
	Now time.Time
}

// KeyQueries is the credentials' part of Queries.
type KeyQueries interface {
	// KeyCreate stores a credential; ErrConflict when its lookup is taken.
	KeyCreate(ctx context.Context, p *KeyCreateParams) (*Key, error)
	// KeyFind returns the credential with this lookup, revoked and expired
	// ones included (the caller tells why it refuses); ErrNotFound if none.
	KeyFind(ctx context.Context, lookup string) (*Key, error)
	KeyGet(ctx context.Context, id uuid.UUID) (*Key, error)
	// KeyList lists credentials, oldest first.
	KeyList(ctx context.Context, p *KeyListParams) ([]*Key, error)
	// KeyRevoke marks the credential and its sessions revoked (the first
	// revocation's time stays) and returns the credential; ErrNotFound if
	// it does not exist.
	KeyRevoke(ctx context.Context, p *KeyRevokeParams) (*Key, error)
	// KeyTouch records a use of a credential (see TouchParams); a row not
	// found is no error.
	KeyTouch(ctx context.Context, p *TouchParams) error
	// KeyPruneSessions deletes sessions that expired before p.Before and
	// returns how many.
	KeyPruneSessions(ctx context.Context, p *PruneParams) (int, error)
}
