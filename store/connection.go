package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Connections: an account at an outside provider (GitHub, Google) that a
// person or a workspace connected through the provider's OAuth flow, with
// the tokens agents act with. Both tokens are stored sealed (package
// secret), bound to the provider and the owner; the rules refuse a token
// that is not, so no clear-text token reaches a table.

// ConnectionProvider is the outside service a connection is to.
type ConnectionProvider string

const (
	ProviderGitHub ConnectionProvider = "github"
	ProviderGoogle ConnectionProvider = "google"
)

// Valid reports whether p is a provider Switchboard connects to.
func (p ConnectionProvider) Valid() bool { return p == ProviderGitHub || p == ProviderGoogle }

// ConnectionOwner is whose a connection is: a person's own, or a
// workspace's (shared by everyone who talks to agents there). Exactly one
// of the two is set.
type ConnectionOwner struct {
	PersonID    *uuid.UUID
	WorkspaceID *uuid.UUID
}

// PersonOwner is a person's own connection.
func PersonOwner(id uuid.UUID) ConnectionOwner { return ConnectionOwner{PersonID: &id} }

// WorkspaceOwner is a workspace's connection.
func WorkspaceOwner(id uuid.UUID) ConnectionOwner { return ConnectionOwner{WorkspaceID: &id} }

// Valid reports whether exactly one owner is set.
func (o ConnectionOwner) Valid() bool { return (o.PersonID == nil) != (o.WorkspaceID == nil) }

// String is "person:ID" or "workspace:ID", for messages and sealing.
func (o ConnectionOwner) String() string {
	switch {
	case o.PersonID != nil && o.WorkspaceID == nil:
		return "person:" + o.PersonID.String()
	case o.WorkspaceID != nil && o.PersonID == nil:
		return "workspace:" + o.WorkspaceID.String()
	}
	return "nobody"
}

// Connection is one connected account.
type Connection struct {
	ID       uuid.UUID
	Provider ConnectionProvider
	Owner    ConnectionOwner
	// Account is the account's login (GitHub) or email (Google); AccountID
	// the provider's stable id for it.
	Account   string
	AccountID string
	Scopes    []string // as granted
	// AccessToken and RefreshToken are sealed; open them with
	// ConnectionAAD(Provider, Owner, "access"|"refresh"). RefreshToken is ""
	// when the provider gave none.
	AccessToken  string
	RefreshToken string
	TokenType    string
	// Expiry is when the access token expires; nil when it does not.
	Expiry *time.Time
	// ConnectedBy is the person who went through the flow.
	ConnectedBy uuid.UUID
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ConnectionAAD is the additional data a connection's token is sealed with:
// the provider, the owner and which token, so a sealed token copied onto
// another row, or the refresh token into the access token's place, does not
// open. A reconnect replaces the row of the same provider and owner, so the
// binding outlives the row's id.
func ConnectionAAD(p ConnectionProvider, o ConnectionOwner, which string) string {
	return "connection:" + string(p) + ":" + o.String() + ":" + which
}

// ConnectionSaveParams connects an account, or replaces the owner's
// connection to the provider (a reconnect): one connection per provider and
// owner.
type ConnectionSaveParams struct {
	ID           uuid.UUID // optional; a new id when zero (a replacement keeps the row's)
	Provider     ConnectionProvider
	Owner        ConnectionOwner
	Account      string
	AccountID    string
	Scopes       []string
	AccessToken  string // sealed
	RefreshToken string // sealed, or "" for none
	TokenType    string
	Expiry       *time.Time
	ConnectedBy  uuid.UUID
	Now          time.Time
}

// ConnectionFindParams names the owner's connection to a provider.
type ConnectionFindParams struct {
	Provider ConnectionProvider
	Owner    ConnectionOwner
}

// ConnectionListParams pages through connections in id order: one owner's
// when Owner is set, else all of them.
type ConnectionListParams struct {
	Owner   *ConnectionOwner
	AfterID uuid.UUID
	Limit   int // 0 means DefaultListLimit
}

// ConnectionTokenParams replaces a connection's tokens (a refresh, or the
// same tokens sealed again under another key) only if the row still holds
// Expect as its access token: ErrConflict when another instance refreshed
// meanwhile, so a stale refresh never overwrites a newer token.
type ConnectionTokenParams struct {
	ID           uuid.UUID
	Expect       string // sealed access token read before
	AccessToken  string // sealed
	RefreshToken string // sealed, or "" for none
	Expiry       *time.Time
	Now          time.Time
}

// ConnectionQueries are the connections' queries.
type ConnectionQueries interface {
	// ConnectionSave inserts or replaces the owner's connection to the
	// provider; a replacement keeps ID and CreatedAt.
	ConnectionSave(ctx context.Context, p *ConnectionSaveParams) (*Connection, error)
	// ConnectionGet reads a connection; ErrNotFound when there is none.
	ConnectionGet(ctx context.Context, id uuid.UUID) (*Connection, error)
	// ConnectionFind reads the owner's connection to a provider;
	// ErrNotFound when there is none.
	ConnectionFind(ctx context.Context, p *ConnectionFindParams) (*Connection, error)
	ConnectionList(ctx context.Context, p *ConnectionListParams) ([]*Connection, error)
	// ConnectionSetTokens replaces the tokens (see the params).
	ConnectionSetTokens(ctx context.Context, p *ConnectionTokenParams) (*Connection, error)
	// ConnectionDelete removes a connection; ErrNotFound when there is none.
	ConnectionDelete(ctx context.Context, id uuid.UUID) error
}

// The owner as the drivers store it: a kind and an id.
const (
	ownerKindPerson    = "person"
	ownerKindWorkspace = "workspace"
)

// Columns returns the owner as stored: its kind ("person", "workspace")
// and id; "" and the nil id when no owner is set.
func (o ConnectionOwner) Columns() (kind string, id uuid.UUID) {
	switch {
	case o.PersonID != nil:
		return ownerKindPerson, *o.PersonID
	case o.WorkspaceID != nil:
		return ownerKindWorkspace, *o.WorkspaceID
	}
	return "", uuid.Nil
}

// OwnerFromColumns is the owner a row names (see Columns).
func OwnerFromColumns(kind string, id uuid.UUID) ConnectionOwner {
	if kind == ownerKindWorkspace {
		return WorkspaceOwner(id)
	}
	return PersonOwner(id)
}
