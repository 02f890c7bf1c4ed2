package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Sign-in to the web console: one-time login links that the bot sends in a
// DM, and the browser sessions they (or the operator's token) open. The
// store keeps only the SHA-256 of each secret; making secrets and deciding
// what a row allows is the caller's (bots/web).

// LoginKind says what a login row is.
type LoginKind string

const (
	LoginLink    LoginKind = "link"    // a one-time link: used once, then spent
	LoginSession LoginKind = "session" // a browser session: used marks it signed out
)

// Valid reports whether k is a known kind.
func (k LoginKind) Valid() bool { return k == LoginLink || k == LoginSession }

// Login is one login link or browser session.
type Login struct {
	ID         uuid.UUID
	Kind       LoginKind
	SecretHash []byte
	// PersonID is who signs in; nil is the operator.
	PersonID  *uuid.UUID
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is when a link was spent or a session signed out; nil: not yet.
	UsedAt *time.Time
}

// Live reports whether the row may still be used at now: not used and not
// expired.
func (l *Login) Live(now time.Time) bool { return l.UsedAt == nil && now.Before(l.ExpiresAt) }

// LoginCreateParams stores a new link or session. A link names a person.
type LoginCreateParams struct {
	ID         uuid.UUID // zero: a new id
	Kind       LoginKind
	SecretHash []byte
	PersonID   *uuid.UUID
	ExpiresAt  time.Time
	Now        time.Time
}

// LoginUseParams spends a link or signs a session out.
type LoginUseParams struct {
	SecretHash []byte
	Now        time.Time
}

// LoginQueries is the web sign-in's part of Queries.
type LoginQueries interface {
	// LoginCreate stores a link or session; ErrConflict when its hash is
	// taken.
	LoginCreate(ctx context.Context, p *LoginCreateParams) (*Login, error)
	// LoginFind returns the row with this secret hash, used and expired ones
	// included (the caller says why it refuses); ErrNotFound if none.
	LoginFind(ctx context.Context, secretHash []byte) (*Login, error)
	// LoginUse marks the row used and returns it. Of two concurrent uses
	// exactly one succeeds: the other, and any later one, gets ErrConflict;
	// ErrNotFound when no row has the hash. Expiry is the caller's to check
	// on the returned row.
	LoginUse(ctx context.Context, p *LoginUseParams) (*Login, error)
	// LoginPrune deletes rows that expired before p.Before and returns how
	// many.
	LoginPrune(ctx context.Context, p *PruneParams) (int, error)
}
