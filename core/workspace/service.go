package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Service is workspace administration, written once for every way in: the
// HTTP API and the switchboard workspaces and agents commands call it with
// their Actor, and it applies the roles (Rights) before it reads or
// writes.
type Service struct {
	q store.Queries
}

// NewService administers the workspaces of q.
func NewService(q store.Queries) *Service { return &Service{q: q} }

// Rights checks that a may do action in workspace ws (see Rights).
func (s *Service) Rights(ctx context.Context, a Actor, ws *uuid.UUID, action Action) error {
	return Rights(ctx, s.q, a, ws, action)
}

// Open reads workspace id after checking that a may do action there.
func (s *Service) Open(ctx context.Context, a Actor, id uuid.UUID, action Action) (*store.Workspace, error) {
	if err := s.Rights(ctx, a, &id, action); err != nil {
		return nil, err
	}
	return s.q.WorkspaceGet(ctx, id)
}

// Create makes a team workspace owned by owner, who holds every right in
// it. Whom a caller may name as owner is the caller's rule (a person makes
// their own, the operator any person's).
func (s *Service) Create(ctx context.Context, owner uuid.UUID, name string) (*store.Workspace, error) {
	return s.q.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: name, Kind: store.WorkspaceTeam, OwnerPersonID: owner})
}

// Memberships lists the workspaces person belongs to, with their role,
// keeping those a's credential reaches.
func (s *Service) Memberships(ctx context.Context, a Actor, person uuid.UUID) ([]*store.Membership, error) {
	ms, err := s.q.WorkspaceListByPerson(ctx, person)
	if err != nil {
		return nil, err
	}
	out := ms[:0:0]
	for _, m := range ms {
		if a.Operator || a.Reaches(m.Workspace.ID) {
			out = append(out, m)
		}
	}
	return out, nil
}

// Members reads workspace id and its members, for one who may use it.
func (s *Service) Members(ctx context.Context, a Actor, id uuid.UUID) (*store.Workspace, []*store.WorkspaceMember, error) {
	ws, err := s.Open(ctx, a, id, Use)
	if err != nil {
		return nil, nil, err
	}
	ms, err := s.q.WorkspaceMemberList(ctx, ws.ID)
	if err != nil {
		return nil, nil, err
	}
	return ws, ms, nil
}

// Delete deletes workspace id: its owner's decision. The store refuses a
// personal workspace (store.ErrConflict).
func (s *Service) Delete(ctx context.Context, a Actor, id uuid.UUID) error {
	if _, err := s.Open(ctx, a, id, Delete); err != nil {
		return err
	}
	return s.q.WorkspaceDelete(ctx, id)
}

// AddMember makes person a member of workspace id with role (member when
// empty). Adding someone already there with another role is a role
// change, which takes ChangeRoles besides Invite.
func (s *Service) AddMember(ctx context.Context, a Actor, id, person uuid.UUID, role store.Role) (*store.WorkspaceMember, error) {
	if _, err := s.Open(ctx, a, id, Invite); err != nil {
		return nil, err
	}
	if role == "" {
		role = store.RoleMember
	}
	cur, err := s.member(ctx, id, person)
	switch {
	case err == nil && cur.Role != role:
		if err := s.Rights(ctx, a, &id, ChangeRoles); err != nil {
			return nil, err
		}
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return s.put(ctx, id, person, role)
}

// SetRole changes the role of person, a member of workspace id: the
// owner's decision. The store refuses to change the owner's.
func (s *Service) SetRole(ctx context.Context, a Actor, id, person uuid.UUID, role store.Role) (*store.WorkspaceMember, error) {
	if _, err := s.Open(ctx, a, id, ChangeRoles); err != nil {
		return nil, err
	}
	if _, err := s.member(ctx, id, person); err != nil {
		return nil, err
	}
	return s.put(ctx, id, person, role)
}

// RemoveMember takes person out of workspace id. Removing an admin
// changes who holds a role: the owner's decision. The store refuses to
// remove the owner.
func (s *Service) RemoveMember(ctx context.Context, a Actor, id, person uuid.UUID) error {
	if _, err := s.Open(ctx, a, id, RemoveMember); err != nil {
		return err
	}
	m, err := s.member(ctx, id, person)
	if err != nil {
		return err
	}
	if m.Role == store.RoleAdmin {
		if err := s.Rights(ctx, a, &id, ChangeRoles); err != nil {
			return err
		}
	}
	return s.q.WorkspaceMemberRemove(ctx, &store.WorkspaceMemberParams{WorkspaceID: id, PersonID: person})
}

func (s *Service) member(ctx context.Context, ws, person uuid.UUID) (*store.WorkspaceMember, error) {
	return s.q.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws, PersonID: person})
}

func (s *Service) put(ctx context.Context, ws, person uuid.UUID, role store.Role) (*store.WorkspaceMember, error) {
	return s.q.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws, PersonID: person, Role: role})
}

// Bind binds a platform team (a Slack team id, a Discord guild id) to
// workspace id, for one who manages its connections (see BindWorkspace).
func (s *Service) Bind(ctx context.Context, a Actor, id uuid.UUID, platform, externalID string) (*store.WorkspaceBinding, error) {
	if _, err := s.Open(ctx, a, id, ManageConnections); err != nil {
		return nil, err
	}
	return BindWorkspace(ctx, s.q, platform, externalID, id)
}

// Named is the workspace ref names, as the API and the commands take
// one: a workspace id, or a platform team (a Slack team id, a Discord
// guild id) bound to a workspace. A ref that names none is
// store.ErrNotFound. It checks no rights (ForNew and Open do).
func (s *Service) Named(ctx context.Context, ref string) (uuid.UUID, error) {
	if id, err := uuid.Parse(ref); err == nil {
		return id, nil
	}
	for _, platform := range []string{"slack", "discord"} {
		ws, err := Bound(ctx, s.q, platform, ref)
		if err != nil {
			return uuid.Nil, err
		}
		if ws != nil {
			return *ws, nil
		}
	}
	return uuid.Nil, fmt.Errorf("workspace %q, neither a workspace id nor a Slack team or Discord guild bound to one: %w", ref, store.ErrNotFound)
}

// Retention reads how long workspace id keeps its conversations.
func (s *Service) Retention(ctx context.Context, a Actor, id uuid.UUID) (*store.WorkspaceRetention, error) {
	if _, err := s.Open(ctx, a, id, Use); err != nil {
		return nil, err
	}
	return s.q.WorkspaceRetentionGet(ctx, id)
}

// RetentionChange is a new retention: KeepDays 0 keeps forever. ExportDir
// nil keeps the export directory set before (when KeepDays is not 0).
type RetentionChange struct {
	KeepDays  int
	ExportDir *string
}

// SetRetention sets how long workspace id keeps its conversations.
// Deleting a workspace's conversations is its owner's decision (as
// deleting the workspace is), and writing files on the server (the export
// directory) is the operator's.
func (s *Service) SetRetention(ctx context.Context, a Actor, id uuid.UUID, c RetentionChange) (*store.WorkspaceRetention, error) {
	if _, err := s.Open(ctx, a, id, Delete); err != nil {
		return nil, err
	}
	p := &store.WorkspaceRetentionSetParams{WorkspaceID: id, KeepDays: c.KeepDays}
	switch {
	case c.ExportDir != nil:
		if !a.Operator {
			return nil, Forbidden("only the operator may set or remove the export directory (a place on the server's disk)")
		}
		p.ExportDir = *c.ExportDir
	case p.KeepDays > 0:
		cur, err := s.q.WorkspaceRetentionGet(ctx, id)
		if err != nil {
			return nil, err
		}
		p.ExportDir = cur.ExportDir
	}
	return s.q.WorkspaceRetentionSet(ctx, p)
}

// Sharing reads agent name and where it answers, for its owner or the
// operator (for every agent, and the only one for the agents of
// switchboard.yaml).
func (s *Service) Sharing(ctx context.Context, a Actor, name string) (*store.Agent, *store.AgentSharing, error) {
	ag, err := s.q.AgentGetByName(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	sh, err := s.q.AgentSharingGet(ctx, ag.ID)
	if err != nil {
		return nil, nil, err
	}
	if !a.Operator && (sh.OwnerPersonID == nil || a.Person == uuid.Nil || *sh.OwnerPersonID != a.Person) {
		return nil, nil, fmt.Errorf("%w: only the owner of agent %s may change where it answers", ErrForbidden, ag.Name)
	}
	return ag, sh, nil
}

// Pin makes agent name answer only in workspaces (none: everywhere): its
// owner's or the operator's change, in workspaces where a configures
// agents.
func (s *Service) Pin(ctx context.Context, a Actor, name string, workspaces []uuid.UUID) (*store.Agent, *store.AgentSharing, error) {
	ag, _, err := s.Sharing(ctx, a, name)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range workspaces {
		if err := s.Rights(ctx, a, &id, ConfigureAgents); err != nil {
			return nil, nil, err
		}
	}
	sh, err := s.q.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: workspaces})
	return ag, sh, err
}

// Publish lists agent name in the public directory, or takes it out: its
// owner's or the operator's change.
func (s *Service) Publish(ctx context.Context, a Actor, name string, published bool) (*store.Agent, *store.AgentSharing, error) {
	ag, _, err := s.Sharing(ctx, a, name)
	if err != nil {
		return nil, nil, err
	}
	sh, err := s.q.AgentPublish(ctx, &store.AgentPublishParams{AgentID: ag.ID, Published: published})
	return ag, sh, err
}

// Agents lists the agents that answer in workspace id, for one who may
// use it.
func (s *Service) Agents(ctx context.Context, a Actor, id uuid.UUID) ([]*store.Listing, error) {
	if _, err := s.Open(ctx, a, id, Use); err != nil {
		return nil, err
	}
	return s.q.AgentListVisible(ctx, id)
}

// Directory lists the published agents: anyone may read it.
func (s *Service) Directory(ctx context.Context) ([]*store.Listing, error) {
	return s.q.AgentDirectory(ctx)
}

// UseConversation checks that a may use conversation id: a member of its
// workspace (any role), or the operator. A deleted conversation is gone
// for everyone, and a conversation in a workspace a is not a member of is
// store.ErrNotFound, as if it did not exist.
func (s *Service) UseConversation(ctx context.Context, a Actor, id uuid.UUID) error {
	if f, err := s.q.ConversationFilingGet(ctx, id); err == nil && f.DeletedAt != nil {
		return fmt.Errorf("conversation %s: %w", id, store.ErrNotFound)
	}
	if a.Operator {
		return nil
	}
	ws, err := s.q.ConversationWorkspace(ctx, id)
	if err != nil {
		return err
	}
	if err := s.Rights(ctx, a, ws, Use); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("conversation %s: %w", id, store.ErrNotFound)
	} else if err != nil {
		return err
	}
	return nil
}

// ForNew picks the workspace of a conversation a makes: asked (not nil),
// where a may use it; else a person's personal workspace, made the first
// time, when their credential reaches it; else (the operator, an agent)
// none.
func (s *Service) ForNew(ctx context.Context, a Actor, asked *uuid.UUID) (*uuid.UUID, error) {
	if asked != nil {
		if _, err := s.q.WorkspaceGet(ctx, *asked); err != nil {
			return nil, err
		}
		return asked, s.Rights(ctx, a, asked, Use)
	}
	if a.Operator || a.Person == uuid.Nil {
		return nil, nil
	}
	ws, err := s.q.WorkspaceEnsurePersonal(ctx, &store.WorkspaceEnsurePersonalParams{PersonID: a.Person})
	if err != nil {
		return nil, err
	}
	if !a.Reaches(ws.ID) {
		return nil, Forbidden(fmt.Sprintf("this token is not scoped to workspace %s (the personal one); name a workspace it is scoped to", ws.ID))
	}
	return &ws.ID, nil
}

// SetOwner gives agent name to a person (nil: back to the operator): the
// operator's act alone.
func (s *Service) SetOwner(ctx context.Context, a Actor, name string, owner *uuid.UUID) (*store.Agent, *store.AgentSharing, error) {
	if !a.Operator {
		return nil, nil, Forbidden("only the operator may give an agent to a person")
	}
	ag, err := s.q.AgentGetByName(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	sh, err := s.q.AgentOwnerSet(ctx, &store.AgentOwnerSetParams{AgentID: ag.ID, OwnerPersonID: owner})
	return ag, sh, err
}

// Visibility is what a sees of the workspaces' rows: every workspace (the
// operator), or those a person may use and their credential reaches, or
// none (nobody).
func (s *Service) Visibility(ctx context.Context, a Actor) (store.Visibility, error) {
	if a.Operator {
		return store.Visibility{All: true}, nil
	}
	if a.Person == uuid.Nil {
		return store.Visibility{}, nil
	}
	ms, err := s.q.WorkspaceListByPerson(ctx, a.Person)
	if err != nil {
		return store.Visibility{}, err
	}
	v := store.Visibility{Workspaces: []uuid.UUID{}}
	for _, m := range ms {
		if a.Reaches(m.Workspace.ID) && Can(m.Role, Use) {
			v.Workspaces = append(v.Workspaces, m.Workspace.ID)
		}
	}
	return v, nil
}
