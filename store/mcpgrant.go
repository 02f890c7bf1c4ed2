package store

import (
	"context"
	"time"
)

// MCP OAuth grants: what Switchboard holds to reach an outside MCP server
// that has "oauth" in mcp-servers.json (package mcpclient decides what is
// in it: the token, the refresh token, the token endpoint and the client).
// Instances sharing the database share the grant, so a server authorized
// on one is usable on all, and a refresh on one is seen by the others. The
// grant is stored sealed (package secret), bound to MCPGrantAAD; the rules
// refuse a value that is not sealed.

// MCPGrantKey names a grant: the server's name in mcp-servers.json and its
// workspace ("" when the server's entry names none).
type MCPGrantKey struct {
	Server    string
	Workspace string
}

// String is "server" or "server (workspace W)", for messages.
func (k MCPGrantKey) String() string {
	if k.Workspace == "" {
		return k.Server
	}
	return k.Server + " (workspace " + k.Workspace + ")"
}

// MCPGrantAAD is the additional data a grant is sealed with: the server and
// the workspace, so a sealed grant copied onto another server's row does
// not open.
func MCPGrantAAD(k MCPGrantKey) string {
	return "mcp_oauth_grant:" + k.Server + ":" + k.Workspace
}

// MCPGrant is one stored grant.
type MCPGrant struct {
	MCPGrantKey
	SealedGrant string
	// Version counts the writes of the row: 1 when first stored, one more
	// on each replacement. MCPGrantSwap replaces a grant only at the
	// version the caller read.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// MCPGrantPutParams stores a grant.
type MCPGrantPutParams struct {
	MCPGrantKey
	SealedGrant string // sealed
	Now         time.Time
}

// MCPGrantSwapParams replaces a grant only if the row is still at Expect:
// ErrConflict when another instance replaced it meanwhile, so a stale
// refresh never overwrites a newer token.
type MCPGrantSwapParams struct {
	MCPGrantKey
	Expect      int64 // the version read before
	SealedGrant string
	Now         time.Time
}

// MCPGrantQueries are the MCP OAuth grants' queries.
type MCPGrantQueries interface {
	// MCPGrantGet reads a grant; ErrNotFound when there is none.
	MCPGrantGet(ctx context.Context, k *MCPGrantKey) (*MCPGrant, error)
	// MCPGrantPut stores a grant from a new authorization, replacing any
	// (the version goes on counting).
	MCPGrantPut(ctx context.Context, p *MCPGrantPutParams) (*MCPGrant, error)
	// MCPGrantCreate stores a grant only when the key has none (an import
	// that several instances may attempt at once): ErrConflict when there
	// is one, which is left as it was.
	MCPGrantCreate(ctx context.Context, p *MCPGrantPutParams) (*MCPGrant, error)
	// MCPGrantSwap replaces a grant (see the params); ErrNotFound when
	// there is none.
	MCPGrantSwap(ctx context.Context, p *MCPGrantSwapParams) (*MCPGrant, error)
	// MCPGrantList returns every grant, by server then workspace.
	MCPGrantList(ctx context.Context) ([]*MCPGrant, error)
	// MCPGrantDelete removes a grant; ErrNotFound when there is none.
	MCPGrantDelete(ctx context.Context, k *MCPGrantKey) error
}
