package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Single sign-on (OIDC): the sign-ins under way, and the workspace roles
// the identity provider's groups gave each person. Making states and
// checking tokens is the caller's (core/auth/sso).

// OIDCState is one authorization request sent to the identity provider:
// the SHA-256 of its state, the nonce its ID token must carry, and the PKCE
// verifier its code is redeemed with.
type OIDCState struct {
	StateHash    []byte
	Nonce        string
	CodeVerifier string
	// ReturnTo is the page of this server the browser goes back to.
	ReturnTo  string
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is when the callback took it; nil: not yet.
	UsedAt *time.Time
}

// OIDCStateCreateParams stores a new state.
type OIDCStateCreateParams struct {
	StateHash    []byte
	Nonce        string
	CodeVerifier string
	ReturnTo     string
	ExpiresAt    time.Time
	Now          time.Time
}

// OIDCStateUseParams takes a state at the callback.
type OIDCStateUseParams struct {
	StateHash []byte
	Now       time.Time
}

// SSOGrant is a workspace role single sign-on gave a person.
type SSOGrant struct {
	PersonID    uuid.UUID
	WorkspaceID uuid.UUID
	Role        Role
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// SSOGrantPutParams records (or changes) the role SSO gave.
type SSOGrantPutParams struct {
	PersonID    uuid.UUID
	WorkspaceID uuid.UUID
	Role        Role
	Now         time.Time
}

// SSOGrantDeleteParams forgets a role SSO gave.
type SSOGrantDeleteParams struct {
	PersonID    uuid.UUID
	WorkspaceID uuid.UUID
}

// SSOQueries are single sign-on's part of Queries.
type SSOQueries interface {
	// OIDCStateCreate stores a state; ErrConflict when its hash is taken.
	OIDCStateCreate(ctx context.Context, p *OIDCStateCreateParams) (*OIDCState, error)
	// OIDCStateUse marks the state used and returns it. Of two concurrent
	// uses exactly one succeeds: the other, and any later one, gets
	// ErrConflict; ErrNotFound when no state has the hash. Expiry is the
	// caller's to check on the returned row.
	OIDCStateUse(ctx context.Context, p *OIDCStateUseParams) (*OIDCState, error)
	// OIDCStatePrune deletes states that expired before p.Before.
	OIDCStatePrune(ctx context.Context, p *PruneParams) (int, error)

	// SSOGrantList lists the roles SSO gave a person, by workspace.
	SSOGrantList(ctx context.Context, personID uuid.UUID) ([]*SSOGrant, error)
	SSOGrantPut(ctx context.Context, p *SSOGrantPutParams) (*SSOGrant, error)
	// SSOGrantDelete forgets a grant; one not found is no error.
	SSOGrantDelete(ctx context.Context, p *SSOGrantDeleteParams) error
}
