package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Standing grants: a person's "Always allow" on an approval prompt. The
// guard consults them before it asks again for the same agent and tool in
// the same workspace (and, when the grant is limited, the same arguments).

// Grant lets an agent run a tool in a workspace without asking.
type Grant struct {
	ID    uuid.UUID
	Agent string // the agent's name
	Tool  string
	// Workspace is the platform workspace (Slack team, Discord guild) the
	// grant holds in; "" for places without one (the API, the terminal).
	Workspace string
	// ArgsHash limits the grant to calls with exactly these arguments (a hex
	// SHA-256 of their canonical JSON); "" allows any arguments.
	ArgsHash  string
	GrantedBy string // the platform user id of the person who granted it
	CreatedAt time.Time
	RevokedAt *time.Time // nil while the grant holds
	// WorkspaceID is the workspace the grant holds in when it was made in a
	// conversation of one; then it holds there only, whatever the platform
	// workspace. nil: it holds by Workspace, in conversations of none.
	WorkspaceID *uuid.UUID
	// WorkspaceName is the name of WorkspaceID's workspace, read by
	// GrantList only ("" elsewhere, and for a grant of no workspace).
	WorkspaceName string
}

// GrantCreateParams records a grant.
type GrantCreateParams struct {
	ID        uuid.UUID // optional; a new id when zero
	Agent     string
	Tool      string
	Workspace string
	// WorkspaceID is the conversation's workspace, when it has one.
	WorkspaceID *uuid.UUID
	ArgsHash    string
	GrantedBy   string
	Now         time.Time
}

// GrantFindParams looks for a grant that allows a call: unrevoked, for the
// agent, tool and workspace, either unlimited or limited to ArgsHash. With
// WorkspaceID set only that workspace's grants hold (Workspace is not
// compared); without it, only grants of no workspace made in Workspace.
type GrantFindParams struct {
	Agent       string
	Tool        string
	Workspace   string
	WorkspaceID *uuid.UUID
	ArgsHash    string
}

// GrantListParams lists grants, newest first.
type GrantListParams struct {
	// Workspace, when set, lists only the grants made in that platform
	// workspace.
	Workspace *string
	// WorkspaceID, when set, lists only that workspace's grants.
	WorkspaceID *uuid.UUID
	// Revoked includes revoked grants.
	Revoked bool
	Limit   int // 0 means DefaultListLimit
}

// GrantRevokeParams revokes a grant.
type GrantRevokeParams struct {
	ID  uuid.UUID
	Now time.Time
}

// GrantQueries are the standing grants' queries.
type GrantQueries interface {
	GrantCreate(ctx context.Context, p *GrantCreateParams) (*Grant, error)
	// GrantFind returns the oldest grant that allows the call; ErrNotFound
	// when none does.
	GrantFind(ctx context.Context, p *GrantFindParams) (*Grant, error)
	GrantGet(ctx context.Context, id uuid.UUID) (*Grant, error)
	GrantList(ctx context.Context, p *GrantListParams) ([]*Grant, error)
	// GrantRevoke revokes a grant and returns it; revoking it again keeps
	// the first time. ErrNotFound for an unknown id.
	GrantRevoke(ctx context.Context, p *GrantRevokeParams) (*Grant, error)
}
