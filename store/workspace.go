package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// WorkspaceKind says whose a workspace is.
type WorkspaceKind string

const (
	// WorkspacePersonal: one per person, made with the person, never
	// deleted or transferred.
	WorkspacePersonal WorkspaceKind = "personal"
	// WorkspaceTeam: made by a person for a team; Slack teams and Discord
	// guilds are bound to these.
	WorkspaceTeam WorkspaceKind = "team"
)

// Role is a member's standing in a workspace. What each may do is decided
// in one place, package workspace.
type Role string

const (
	RoleOwner  Role = "owner"  // set at creation, never removed or reassigned
	RoleAdmin  Role = "admin"  // everything but roles and deletion
	RoleMember Role = "member" // talks to the workspace's agents
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool { return r == RoleOwner || r == RoleAdmin || r == RoleMember }

// Workspace is where people, platform teams, conversations and schedules
// belong together.
type Workspace struct {
	ID            uuid.UUID
	Name          string
	Kind          WorkspaceKind
	OwnerPersonID uuid.UUID
	CreatedAt     time.Time
}

// WorkspaceMember is one person's role in a workspace.
type WorkspaceMember struct {
	WorkspaceID uuid.UUID
	PersonID    uuid.UUID
	Role        Role
	CreatedAt   time.Time
}

// Membership is a workspace seen by one of its members.
type Membership struct {
	Workspace *Workspace
	Role      Role
}

// WorkspaceBinding ties a platform's team (a Slack team id, a Discord guild
// id) to a workspace. A team binds to one workspace.
type WorkspaceBinding struct {
	Platform    string
	ExternalID  string
	WorkspaceID uuid.UUID
	CreatedAt   time.Time
}

// AgentSharing is who an agent belongs to and where it may answer.
type AgentSharing struct {
	AgentID uuid.UUID
	// OwnerPersonID is the person the agent belongs to; nil for the
	// operator's agents (those of switchboard.yaml).
	OwnerPersonID *uuid.UUID
	// Pins restrict where the agent answers; empty means everywhere its
	// owner belongs (the operator's agents: everywhere).
	Pins []uuid.UUID
	// Published lists the agent in the public directory.
	Published bool
	UpdatedAt time.Time
}

// Listing is a published agent as the directory shows it.
type Listing struct {
	AgentID       uuid.UUID
	Name          string
	OwnerPersonID *uuid.UUID
}

// WorkspaceCreateParams makes a workspace; its owner becomes its first
// member with the owner role, in the same transaction.
type WorkspaceCreateParams struct {
	ID            uuid.UUID // optional; a new id when zero
	Name          string
	Kind          WorkspaceKind
	OwnerPersonID uuid.UUID
	Now           time.Time
}

// WorkspaceEnsurePersonalParams finds or makes a person's personal workspace.
type WorkspaceEnsurePersonalParams struct {
	PersonID uuid.UUID
	Name     string // used only when making it
	Now      time.Time
}

// WorkspaceMemberParams names one member of a workspace.
type WorkspaceMemberParams struct {
	WorkspaceID uuid.UUID
	PersonID    uuid.UUID
}

// WorkspaceMemberPutParams adds a member or changes a member's role. The
// owner role is given only at creation, and the owner's row never changes.
type WorkspaceMemberPutParams struct {
	WorkspaceID uuid.UUID
	PersonID    uuid.UUID
	Role        Role // admin or member
	Now         time.Time
}

// WorkspaceBindParams binds a platform team to a workspace.
type WorkspaceBindParams struct {
	Platform    string
	ExternalID  string
	WorkspaceID uuid.UUID
	Now         time.Time
}

// WorkspaceBindingFindParams names a platform team.
type WorkspaceBindingFindParams struct {
	Platform   string
	ExternalID string
}

// ConversationWorkspaceSetParams puts a conversation that has none in a
// workspace (one made through the API, which has no platform team).
type ConversationWorkspaceSetParams struct {
	ConversationID uuid.UUID
	WorkspaceID    uuid.UUID
}

// AgentOwnerSetParams gives an agent to a person (nil: the operator).
type AgentOwnerSetParams struct {
	AgentID       uuid.UUID
	OwnerPersonID *uuid.UUID
	Now           time.Time
}

// AgentPinParams replaces the workspaces an agent is pinned to; none unpins
// it.
type AgentPinParams struct {
	AgentID      uuid.UUID
	WorkspaceIDs []uuid.UUID
	Now          time.Time
}

// AgentPublishParams lists an agent in the public directory or takes it off.
type AgentPublishParams struct {
	AgentID   uuid.UUID
	Published bool
	Now       time.Time
}

// WorkspaceQueries keeps workspaces, members, team bindings and where agents
// answer.
//
// Rules every driver keeps (the conformance suite checks each):
//   - A person has at most one personal workspace; a personal workspace is
//     never deleted (ErrConflict).
//   - The owner's membership is never removed nor changed, and no one else
//     is given the owner role (ErrConflict).
//   - A platform team binds to one workspace: binding it to another is
//     ErrConflict; binding it again to the same one is a no-op.
//   - Conversations, schedules, approvals, audit rows and usage carry the
//     workspace they were made in (ConversationWorkspace reads it).
//   - An agent pinned to a team workspace is never published (ErrConflict).
type WorkspaceQueries interface {
	WorkspaceCreate(ctx context.Context, p *WorkspaceCreateParams) (*Workspace, error)
	// WorkspaceEnsurePersonal returns the person's personal workspace,
	// making it (with the person as owner) the first time. Safe to race.
	WorkspaceEnsurePersonal(ctx context.Context, p *WorkspaceEnsurePersonalParams) (*Workspace, error)
	WorkspaceGet(ctx context.Context, id uuid.UUID) (*Workspace, error)
	// WorkspaceListByPerson lists the workspaces a person is a member of,
	// oldest first.
	WorkspaceListByPerson(ctx context.Context, personID uuid.UUID) ([]*Membership, error)
	// WorkspaceDelete deletes a team workspace with its members, bindings
	// and pins. What was made in it keeps its workspace id.
	WorkspaceDelete(ctx context.Context, id uuid.UUID) error

	WorkspaceMemberPut(ctx context.Context, p *WorkspaceMemberPutParams) (*WorkspaceMember, error)
	// WorkspaceMemberGet is ErrNotFound for a person who is not a member.
	WorkspaceMemberGet(ctx context.Context, p *WorkspaceMemberParams) (*WorkspaceMember, error)
	WorkspaceMemberList(ctx context.Context, workspaceID uuid.UUID) ([]*WorkspaceMember, error)
	WorkspaceMemberRemove(ctx context.Context, p *WorkspaceMemberParams) error

	WorkspaceBind(ctx context.Context, p *WorkspaceBindParams) (*WorkspaceBinding, error)
	// WorkspaceBindingFind is ErrNotFound for a team bound to no workspace.
	WorkspaceBindingFind(ctx context.Context, p *WorkspaceBindingFindParams) (*WorkspaceBinding, error)

	// ConversationWorkspace returns the workspace a conversation belongs
	// to; nil when none. ErrNotFound for an unknown conversation.
	ConversationWorkspace(ctx context.Context, conversationID uuid.UUID) (*uuid.UUID, error)
	// ScheduleWorkspace returns the workspace a schedule was made in; nil
	// when none. ErrNotFound for an unknown schedule.
	ScheduleWorkspace(ctx context.Context, scheduleID uuid.UUID) (*uuid.UUID, error)
	// ConversationWorkspaceSet puts a conversation in a workspace; a
	// conversation already in another one is ErrConflict.
	ConversationWorkspaceSet(ctx context.Context, p *ConversationWorkspaceSetParams) error

	// AgentSharingGet returns an agent's owner, pins and publication; an
	// agent never shared is the operator's, unpinned and unpublished.
	AgentSharingGet(ctx context.Context, agentID uuid.UUID) (*AgentSharing, error)
	AgentOwnerSet(ctx context.Context, p *AgentOwnerSetParams) (*AgentSharing, error)
	AgentPin(ctx context.Context, p *AgentPinParams) (*AgentSharing, error)
	AgentPublish(ctx context.Context, p *AgentPublishParams) (*AgentSharing, error)
	// AgentListVisible lists, by name, the agents seen in a workspace: the
	// operator's and those whose owner is a member, unless pinned elsewhere.
	AgentListVisible(ctx context.Context, workspaceID uuid.UUID) ([]*Listing, error)
	// AgentDirectory lists the published agents by name.
	AgentDirectory(ctx context.Context) ([]*Listing, error)
}
