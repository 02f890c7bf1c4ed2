// Package workspace decides who may do what in a workspace, and holds the
// two calls other parts make when people and platform teams appear:
// EnsurePersonalWorkspace (when a person is created) and BindWorkspace (when
// the app is installed in a Slack team or Discord guild).
//
// Roles come in two tiers. Owner and admin both invite, manage connections
// and credentials, and configure agents, channels and schedules; only the
// owner changes roles and deletes the workspace. A member uses the
// workspace: talks to its agents and reads its conversations. The owner is
// set at creation and can never be removed or reassigned (the store refuses
// it). Every check goes through Can, so the matrix lives in one place.
package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Action is something a person may or may not do in a workspace.
type Action string

const (
	// Use: talk to the workspace's agents, read its conversations,
	// schedules and approvals.
	Use Action = "use"
	// Invite: add a person as a member or admin.
	Invite Action = "invite"
	// RemoveMember: take a member (not an admin) out.
	RemoveMember Action = "remove_member"
	// ManageConnections: bind Slack teams and Discord guilds, manage
	// credentials.
	ManageConnections Action = "manage_connections"
	// ConfigureAgents: pin agents, configure channels and schedules.
	ConfigureAgents Action = "configure_agents"
	// ChangeRoles: make a member an admin or an admin a member, and remove
	// an admin.
	ChangeRoles Action = "change_roles"
	// Delete: delete the workspace.
	Delete Action = "delete"
	// Decide: decide the workspace's approvals when admins decide them,
	// let strangers in (approve pairing codes) and read its audit.
	Decide Action = "decide"
)

// Actions lists every action, for tests and docs.
var Actions = []Action{Use, Invite, RemoveMember, ManageConnections, ConfigureAgents, ChangeRoles, Delete, Decide}

// Can reports whether a person with role may do action. role is "" for a
// person who is not a member: they may do nothing.
func Can(role store.Role, action Action) bool {
	switch role {
	case store.RoleOwner:
		return true
	case store.RoleAdmin:
		return action != ChangeRoles && action != Delete
	case store.RoleMember:
		return action == Use
	}
	return false
}

// ErrForbidden is returned when a person may not do what they asked.
var ErrForbidden = errors.New("not allowed")

// Check returns nil when the person may do action in the workspace, and
// otherwise an ErrForbidden that says what role it takes.
func Check(ctx context.Context, q store.Queries, workspaceID, personID uuid.UUID, action Action) (store.Role, error) {
	m, err := q.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: workspaceID, PersonID: personID})
	var role store.Role
	switch {
	case err == nil:
		role = m.Role
	case !isNotFound(err):
		return "", fmt.Errorf("checking rights in workspace %s: %w", workspaceID, err)
	}
	if !Can(role, action) {
		return role, fmt.Errorf("%w: %s in workspace %s takes %s", ErrForbidden, action, workspaceID, needs(action))
	}
	return role, nil
}

// needs names the least role that may do action.
func needs(action Action) string {
	for _, r := range []store.Role{store.RoleMember, store.RoleAdmin, store.RoleOwner} {
		if Can(r, action) {
			if r == store.RoleOwner {
				return "the owner"
			}
			return "an " + string(r) + " or above"
		}
	}
	return "nobody"
}

// EnsurePersonalWorkspace returns the person's personal workspace, making it
// the first time: call it wherever a person is created, inside the same
// transaction. Calling it again is harmless.
func EnsurePersonalWorkspace(ctx context.Context, q store.Queries, personID uuid.UUID, name string) (*store.Workspace, error) {
	ws, err := q.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: personID, Name: name})
	if err != nil {
		return nil, fmt.Errorf("ensuring the personal workspace of %s: %w", personID, err)
	}
	return ws, nil
}

// BindWorkspace binds a platform team (a Slack team id, a Discord guild id)
// to a workspace: conversations and schedules made there from now on belong
// to it. A team belongs to one workspace: binding it to another is
// store.ErrConflict.
func BindWorkspace(ctx context.Context, q store.Queries, platform, externalID string, workspaceID uuid.UUID) (*store.WorkspaceBinding, error) {
	b, err := q.WorkspaceBind(ctx, &store.WorkspaceBindParams{Platform: platform, ExternalID: externalID, WorkspaceID: workspaceID})
	if err != nil {
		return nil, fmt.Errorf("binding %s %s: %w", platform, externalID, err)
	}
	return b, nil
}

// MayAnswer reports whether an agent may answer in a workspace: an agent
// without pins answers everywhere; a pinned one only in its pins. ws is nil
// for a place bound to no workspace, where only unpinned agents answer.
func MayAnswer(ctx context.Context, q store.Queries, agentID uuid.UUID, ws *uuid.UUID) (bool, error) {
	sh, err := q.AgentSharingGet(ctx, agentID)
	if err != nil {
		return false, fmt.Errorf("reading where agent %s answers: %w", agentID, err)
	}
	if len(sh.Pins) == 0 {
		return true, nil
	}
	if ws == nil {
		return false, nil
	}
	for _, p := range sh.Pins {
		if p == *ws {
			return true, nil
		}
	}
	return false, nil
}

// Bound returns the workspace a platform team (a Slack team id, a Discord
// guild id) is bound to, or nil when it is bound to none.
func Bound(ctx context.Context, q store.Queries, platform, externalID string) (*uuid.UUID, error) {
	if externalID == "" {
		return nil, nil
	}
	b, err := q.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: platform, ExternalID: externalID})
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("finding the workspace of %s %s: %w", platform, externalID, err)
	}
	return &b.WorkspaceID, nil
}

// MayDecide reports whether the person behind a platform identity is an
// owner or admin of the workspace (Decide). Someone the store has no person
// for is nobody's admin.
func MayDecide(ctx context.Context, q store.Queries, id store.Identity, workspaceID uuid.UUID) (bool, error) {
	if id.UserID == "" {
		return false, nil
	}
	p, err := q.PersonFind(ctx, &store.PersonFindParams{Identity: id})
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("finding the person behind %s user %s: %w", id.Platform, id.UserID, err)
	}
	_, err = Check(ctx, q, workspaceID, p.ID, Decide)
	if errors.Is(err, ErrForbidden) {
		return false, nil
	}
	return err == nil, err
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, store.ErrNotFound) }
