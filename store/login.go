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

// LoginMethod says how a console session was opened.
type LoginMethod string

const (
	LoginByLink  LoginMethod = "link"  // a one-time link the bot sent
	LoginByToken LoginMethod = "token" // the operator token
	LoginByOIDC  LoginMethod = "oidc"  // single sign-on with the identity provider
)

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
	// Method is how a session was opened; "" on rows made before it was
	// kept.
	Method LoginMethod
	// IDToken is the identity provider's ID token of an OIDC session: the
	// hint of an RP-initiated logout.
	IDToken string
	// LastUsedAt, LastIP and LastUserAgent are the session's last use
	// (LoginTouch); nil and "" until the first.
	LastUsedAt    *time.Time
	LastIP        string
	LastUserAgent string
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
	// A session's Method, IDToken, and the IP and UserAgent it was opened
	// from (its first use).
	Method    LoginMethod
	IDToken   string
	IP        string
	UserAgent string
}

// LoginUseParams spends a link or signs a session out.
type LoginUseParams struct {
	SecretHash []byte
	Now        time.Time
}

// TouchParams records a use of a session or token: when, from which IP
// and user agent. A row used less than Every ago is left as it is, so a
// busy session costs one write a minute, not one a request.
type TouchParams struct {
	ID        uuid.UUID
	IP        string
	UserAgent string
	Every     time.Duration
	Now       time.Time
}

// LoginSessionsParams lists live console sessions (not used, not expired
// at Now), newest first.
type LoginSessionsParams struct {
	// PersonIDs are whose sessions; with Operator, the operator's too.
	// Neither: every session (All must be set, so no caller lists every
	// session by leaving a field empty).
	PersonIDs []uuid.UUID
	Operator  bool
	All       bool
	Now       time.Time
	Limit     int // 0: DefaultListLimit
}

// LoginEndParams ends a console session (signs it out) by its id.
type LoginEndParams struct {
	ID  uuid.UUID
	Now time.Time
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
	// LoginGet reads a row by id; ErrNotFound if none.
	LoginGet(ctx context.Context, id uuid.UUID) (*Login, error)
	// LoginTouch records a use of a session (see TouchParams); a row not
	// found is no error.
	LoginTouch(ctx context.Context, p *TouchParams) error
	// LoginSessions lists live sessions (see LoginSessionsParams).
	LoginSessions(ctx context.Context, p *LoginSessionsParams) ([]*Login, error)
	// LoginEnd marks a session used (signed out) and returns it; ending it
	// again keeps the first time. ErrNotFound when no session has the id.
	LoginEnd(ctx context.Context, p *LoginEndParams) (*Login, error)
	// LoginPrune deletes rows that expired before p.Before and returns how
	// many.
	LoginPrune(ctx context.Context, p *PruneParams) (int, error)
}
