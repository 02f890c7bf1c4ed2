package sso

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Identities a person signed in with SSO carries: (issuer, subject), and
// a verified email, by which a later sign-in (a new subject, another
// issuer) finds the same person.
const (
	PlatformOIDC  = "oidc"  // Identity.Workspace is the issuer, UserID the subject
	PlatformEmail = "email" // UserID is the lower-cased verified address
	// platformIdP names the identity provider itself: the owner of a
	// workspace SSO made for a group whose role is not owner.
	platformIdP = "sso"
)

// Audit actions of single sign-on and the console's sessions.
const (
	AuditSignIn     = "sign_in"
	AuditSignOut    = "sign_out"
	AuditSessionEnd = "session_end"
	AuditRoleChange = "sso_role_change"
)

// RoleChange is one role a sign-in gave, changed or took back.
type RoleChange struct {
	WorkspaceID uuid.UUID  `json:"workspace_id"`
	Workspace   string     `json:"workspace"` // as sso.groups names it
	From        store.Role `json:"from,omitempty"`
	To          store.Role `json:"to,omitempty"` // "": taken back
}

// Provisioned is the person a sign-in stands for and what changed.
type Provisioned struct {
	Person  *store.Person
	Created bool
	Changes []RoleChange
	// Skipped names sso.groups entries that could not be applied (a
	// workspace id that does not exist).
	Skipped []string
}

func rank(r store.Role) int {
	switch r {
	case store.RoleOwner:
		return 3
	case store.RoleAdmin:
		return 2
	case store.RoleMember:
		return 1
	}
	return 0
}

// Provision finds or makes the person behind id and sets their roles from
// their groups, in one transaction, with an audit row for each role
// changed.
func (s *SSO) Provision(ctx context.Context, id *Identity) (*Provisioned, error) {
	var out *Provisioned
	err := s.o.Store.InTx(ctx, func(q store.Queries) error {
		var err error
		out, err = s.provision(ctx, q, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("signing in %s of %s: %w", id.Subject, id.Issuer, err)
	}
	return out, nil
}

func (s *SSO) provision(ctx context.Context, q store.Queries, id *Identity) (*Provisioned, error) {
	now := s.o.Now()
	out := &Provisioned{}
	oidcID := store.Identity{Platform: PlatformOIDC, Workspace: id.Issuer, UserID: id.Subject}
	var emailID *store.Identity
	if id.EmailVerified && id.Email != "" {
		emailID = &store.Identity{Platform: PlatformEmail, UserID: strings.ToLower(strings.TrimSpace(id.Email))}
	}
	find := func(i store.Identity) (*store.Person, error) {
		p, err := q.PersonFind(ctx, &store.PersonFindParams{Identity: i})
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return p, err
	}
	// link gives person another identity: made as a person of its own and
	// merged into theirs (the way !link joins two platforms).
	link := func(person *store.Person, i store.Identity) (*store.Person, error) {
		extra, err := q.PersonCreate(ctx, &store.PersonCreateParams{Identity: i, Now: now})
		if err != nil {
			return nil, err
		}
		return q.PersonMerge(ctx, &store.PersonMergeParams{Keep: person.ID, Drop: extra.ID, Now: now})
	}
	person, err := find(oidcID)
	if err != nil {
		return nil, err
	}
	if person == nil && emailID != nil {
		if person, err = find(*emailID); err != nil {
			return nil, err
		}
		if person != nil {
			if person, err = link(person, oidcID); err != nil {
				return nil, fmt.Errorf("linking the subject to the person of %s: %w", emailID.UserID, err)
			}
		}
	}
	if person == nil {
		if person, err = q.PersonCreate(ctx, &store.PersonCreateParams{Identity: oidcID, DisplayName: id.Name, Now: now}); err != nil {
			return nil, err
		}
		if _, err := workspace.EnsurePersonalWorkspace(ctx, q, person.ID, id.Name); err != nil {
			return nil, err
		}
		out.Created = true
	}
	if emailID != nil && !hasIdentity(person, *emailID) {
		owner, err := find(*emailID)
		if err != nil {
			return nil, err
		}
		if owner == nil {
			if person, err = link(person, *emailID); err != nil {
				return nil, fmt.Errorf("linking %s: %w", emailID.UserID, err)
			}
		} else if owner.ID != person.ID {
			s.o.Logger.WarnContext(ctx, "a verified email signed in under another subject belongs to another person; not linked",
				"issuer", id.Issuer, "subject", id.Subject, "person_id", person.ID, "other_person_id", owner.ID)
		}
	}
	if id.Name != "" && person.DisplayName == "" {
		if person, err = q.PersonSetProfile(ctx, &store.PersonProfileParams{ID: person.ID, Identity: oidcID, DisplayName: id.Name, Now: now}); err != nil {
			return nil, err
		}
	}
	out.Person = person
	if err := s.applyRoles(ctx, q, id, out); err != nil {
		return nil, err
	}
	return out, nil
}

func hasIdentity(p *store.Person, i store.Identity) bool {
	for _, pi := range p.Identities {
		if pi.Identity == i {
			return true
		}
	}
	return false
}

// want is the role a sign-in gives in one workspace.
type want struct {
	ref     string
	role    store.Role
	created bool // the workspace was made by this sign-in
}

// applyRoles makes the person's roles follow their groups.
func (s *SSO) applyRoles(ctx context.Context, q store.Queries, id *Identity, out *Provisioned) error {
	now := s.o.Now()
	person := out.Person.ID
	// The highest role each workspace gets from the person's groups, in a
	// stable order.
	groups := append([]string(nil), id.Groups...)
	sort.Strings(groups)
	desired := map[uuid.UUID]*want{}
	for _, g := range groups {
		m, ok := s.o.Config.Groups[g]
		if !ok {
			continue
		}
		role := store.Role(m.Role)
		ws, created, err := s.workspaceOf(ctx, q, m.Workspace, m.GroupPlatform(), person, role)
		if errors.Is(err, store.ErrNotFound) {
			out.Skipped = append(out.Skipped, fmt.Sprintf("sso.groups[%q]: workspace %s does not exist", g, m.Workspace))
			s.o.Logger.WarnContext(ctx, "sso.groups names a workspace that does not exist", "group", g, "workspace", m.Workspace)
			continue
		}
		if err != nil {
			return err
		}
		w := desired[ws]
		if w == nil {
			w = &want{ref: m.Workspace}
			desired[ws] = w
		}
		w.created = w.created || created
		if rank(role) > rank(w.role) {
			w.role = role
		}
	}
	prev, err := q.SSOGrantList(ctx, person)
	if err != nil {
		return err
	}
	previous := map[uuid.UUID]*store.SSOGrant{}
	for _, g := range prev {
		previous[g.WorkspaceID] = g
	}
	roleOf := func(ws uuid.UUID) (store.Role, error) {
		m, err := q.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: ws, PersonID: person})
		if errors.Is(err, store.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return m.Role, nil
	}
	ids := make([]uuid.UUID, 0, len(desired))
	for ws := range desired {
		ids = append(ids, ws)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, ws := range ids {
		w := desired[ws]
		cur, err := roleOf(ws)
		if err != nil {
			return err
		}
		role := w.role
		if role == store.RoleOwner && cur != store.RoleOwner {
			// The owner is set when a workspace is made and never moves.
			role = store.RoleAdmin
		}
		if cur != store.RoleOwner && cur != role {
			if _, err := q.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: ws, PersonID: person, Role: role, Now: now}); err != nil {
				return fmt.Errorf("giving %s the role %s in %s: %w", person, role, w.ref, err)
			}
			out.Changes = append(out.Changes, RoleChange{WorkspaceID: ws, Workspace: w.ref, From: cur, To: role})
		} else if w.created && cur == store.RoleOwner {
			out.Changes = append(out.Changes, RoleChange{WorkspaceID: ws, Workspace: w.ref, To: store.RoleOwner})
		}
		if cur == store.RoleOwner {
			role = store.RoleOwner
		}
		if _, err := q.SSOGrantPut(ctx, &store.SSOGrantPutParams{PersonID: person, WorkspaceID: ws, Role: role, Now: now}); err != nil {
			return err
		}
	}
	for _, g := range prev {
		if _, ok := desired[g.WorkspaceID]; ok {
			continue
		}
		cur, err := roleOf(g.WorkspaceID)
		if err != nil {
			return err
		}
		// Only the role SSO gave is taken back: one changed by hand since,
		// and the owner, stay.
		if cur == g.Role && cur != store.RoleOwner {
			if err := q.WorkspaceMemberRemove(ctx, &store.WorkspaceMemberParams{WorkspaceID: g.WorkspaceID, PersonID: person}); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("taking back the role %s of %s in %s: %w", cur, person, g.WorkspaceID, err)
			}
			out.Changes = append(out.Changes, RoleChange{WorkspaceID: g.WorkspaceID, Workspace: g.WorkspaceID.String(), From: cur})
		}
		if err := q.SSOGrantDelete(ctx, &store.SSOGrantDeleteParams{PersonID: person, WorkspaceID: g.WorkspaceID}); err != nil {
			return err
		}
	}
	for _, c := range out.Changes {
		ws := c.WorkspaceID
		if _, err := q.AuditLog(ctx, &store.AuditLogParams{
			Action: AuditRoleChange, Actor: "sso:" + id.Issuer, WorkspaceID: &ws, Now: now,
			Detail: Detail(map[string]any{
				"person": person, "subject": id.Subject, "workspace": c.Workspace, "from": c.From, "to": c.To, "groups": id.Groups,
			}),
		}); err != nil {
			return fmt.Errorf("auditing a role change: %w", err)
		}
	}
	return nil
}

// workspaceOf is the workspace ref names: a workspace id, or the workspace
// a Slack team or Discord guild is bound to, made and bound when there is
// none (owned by the person when role is owner, else by the identity
// provider).
func (s *SSO) workspaceOf(ctx context.Context, q store.Queries, ref, platform string, person uuid.UUID, role store.Role) (uuid.UUID, bool, error) {
	if platform == "" {
		id, err := uuid.Parse(ref)
		if err != nil {
			return uuid.Nil, false, fmt.Errorf("%w: %q is not a workspace id", store.ErrNotFound, ref)
		}
		if _, err := q.WorkspaceGet(ctx, id); err != nil {
			return uuid.Nil, false, err
		}
		return id, false, nil
	}
	b, err := q.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: platform, ExternalID: ref})
	if err == nil {
		return b.WorkspaceID, false, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, false, err
	}
	owner := person
	if role != store.RoleOwner {
		idp, err := s.idpPerson(ctx, q)
		if err != nil {
			return uuid.Nil, false, err
		}
		owner = idp
	}
	ws, err := q.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: ref, Kind: store.WorkspaceTeam, OwnerPersonID: owner, Now: s.o.Now()})
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("making the workspace of %s %s: %w", platform, ref, err)
	}
	if _, err := workspace.BindWorkspace(ctx, q, platform, ref, ws.ID); err != nil {
		return uuid.Nil, false, err
	}
	s.o.Logger.InfoContext(ctx, "workspace made for an sso group", "platform", platform, "external_id", ref, "workspace_id", ws.ID)
	return ws.ID, true, nil
}

// idpPerson is the person standing for the identity provider.
func (s *SSO) idpPerson(ctx context.Context, q store.Queries) (uuid.UUID, error) {
	i := store.Identity{Platform: platformIdP, UserID: s.o.Issuer}
	p, err := q.PersonFind(ctx, &store.PersonFindParams{Identity: i})
	if err == nil {
		return p.ID, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, err
	}
	p, err = q.PersonCreate(ctx, &store.PersonCreateParams{Identity: i, DisplayName: "Single sign-on", Now: s.o.Now()})
	if err != nil {
		return uuid.Nil, err
	}
	return p.ID, nil
}
