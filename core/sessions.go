package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/core/auth/sso"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Sessions people can see and end: their console sessions and personal
// API tokens, with when and where each was last used. A workspace's
// owners and admins see and end those of its people; the operator, all.
// Ending one is a write to the store that every instance reads on the
// next request (no instance caches a session), so it holds everywhere at
// once.

// Kinds of SessionInfo.
const (
	SessionConsole = "console" // a web console session (a cookie)
	SessionToken   = "token"   // a personal API token
)

// SessionInfo is one console session or personal token, never its secret.
type SessionInfo struct {
	// ID is a console session's id (a UUID) or a token's public id
	// (sbp_…); EndSession takes either.
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Method is how a console session was opened: link, token or oidc.
	Method string `json:"method,omitempty"`
	// PersonID is whose it is; null: the operator's.
	PersonID      *uuid.UUID `json:"person_id"`
	Label         string     `json:"label,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	ExpiresAt     *time.Time `json:"expires_at"`
	LastUsedAt    *time.Time `json:"last_used_at"`
	LastIP        string     `json:"last_ip,omitempty"`
	LastUserAgent string     `json:"last_user_agent,omitempty"`
	// Ended is when it was signed out or revoked; null while live.
	Ended *time.Time `json:"ended_at,omitempty"`
}

// SessionQuery says whose sessions to list. Empty: the caller's own (the
// operator: every one).
type SessionQuery struct {
	Person    *uuid.UUID
	Workspace *uuid.UUID
}

func sessionOfLogin(l *store.Login) *SessionInfo {
	exp := l.ExpiresAt
	return &SessionInfo{
		ID: l.ID.String(), Kind: SessionConsole, Method: string(l.Method), PersonID: l.PersonID, CreatedAt: l.CreatedAt,
		ExpiresAt: &exp, LastUsedAt: l.LastUsedAt, LastIP: l.LastIP, LastUserAgent: l.LastUserAgent, Ended: l.UsedAt,
	}
}

func sessionOfKey(k *store.Key) *SessionInfo {
	return &SessionInfo{
		ID: apikey.ID(k), Kind: SessionToken, PersonID: k.PersonID, Label: k.Label, CreatedAt: k.CreatedAt,
		ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt, LastIP: k.LastIP, LastUserAgent: k.LastUserAgent, Ended: k.RevokedAt,
	}
}

// ListSessions lists the live console sessions and personal tokens q
// names that a may see, newest first: the CLI on the database (as the
// operator), and Service.Sessions.
func ListSessions(ctx context.Context, st store.Store, a workspace.Actor, q SessionQuery, now time.Time) ([]*SessionInfo, error) {
	p := &store.LoginSessionsParams{Now: now, Limit: 1000}
	var people []uuid.UUID
	switch {
	case q.Workspace != nil:
		if err := workspace.Rights(ctx, st, a, q.Workspace, workspace.ManageConnections); err != nil {
			return nil, workspace.Forbidden(fmt.Sprintf("the sessions of workspace %s are for its owner and admins", *q.Workspace))
		}
		ms, err := st.WorkspaceMemberList(ctx, *q.Workspace)
		if err != nil {
			return nil, fmt.Errorf("listing the members of %s: %w", *q.Workspace, err)
		}
		for _, m := range ms {
			people = append(people, m.PersonID)
		}
		if q.Person != nil {
			if !slices.Contains(people, *q.Person) {
				return nil, fmt.Errorf("%w: person %s is not a member of workspace %s", store.ErrNotFound, *q.Person, *q.Workspace)
			}
			people = []uuid.UUID{*q.Person}
		}
	case q.Person != nil:
		if !a.Operator && *q.Person != a.Person {
			if err := mayManagePerson(ctx, st, a, *q.Person); err != nil {
				return nil, err
			}
		}
		people = []uuid.UUID{*q.Person}
	case a.Operator:
		p.All = true
	case a.Person != uuid.Nil:
		people = []uuid.UUID{a.Person}
	default:
		return nil, workspace.Forbidden("only a person or the operator has sessions to list")
	}
	p.PersonIDs = people
	var out []*SessionInfo
	if p.All || len(people) > 0 {
		ls, err := st.LoginSessions(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			out = append(out, sessionOfLogin(l))
		}
	}
	kp := &store.KeyListParams{Kind: store.KeyPersonal, PersonIDs: people, Limit: 1000}
	if !p.All && len(people) == 0 {
		return out, nil
	}
	ks, err := st.KeyList(ctx, kp)
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		if k.Usable(now) {
			out = append(out, sessionOfKey(k))
		}
	}
	slices.SortStableFunc(out, func(x, y *SessionInfo) int { return y.CreatedAt.Compare(x.CreatedAt) })
	return out, nil
}

// mayManagePerson says whether a may see and end the sessions of person:
// a is an owner of a workspace person belongs to, or an admin of one where
// person is not the owner.
func mayManagePerson(ctx context.Context, st store.Store, a workspace.Actor, person uuid.UUID) error {
	if a.Operator || (a.Person != uuid.Nil && a.Person == person) {
		return nil
	}
	if a.Person != uuid.Nil {
		ms, err := st.WorkspaceListByPerson(ctx, person)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Workspace.Kind != store.WorkspaceTeam || !a.Reaches(m.Workspace.ID) {
				continue
			}
			mine, err := st.WorkspaceMemberGet(ctx, &store.WorkspaceMemberParams{WorkspaceID: m.Workspace.ID, PersonID: a.Person})
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if mine.Role == store.RoleOwner || (mine.Role == store.RoleAdmin && m.Role != store.RoleOwner) {
				return nil
			}
		}
	}
	return workspace.Forbidden(fmt.Sprintf("the sessions of person %s are theirs, their workspaces' owners' and admins', and the operator's", person))
}

// EndSession ends the console session (by its id) or revokes the personal
// token (sbp_…) id names, if a may, and records it in the audit as by. A
// session or token a may not see is store.ErrNotFound.
func EndSession(ctx context.Context, st store.Store, a workspace.Actor, id, by string, now time.Time) (*SessionInfo, error) {
	id = strings.TrimSpace(id)
	notFound := fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	var (
		owner *uuid.UUID
		out   *SessionInfo
	)
	if u, err := uuid.Parse(id); err == nil {
		l, err := st.LoginGet(ctx, u)
		if errors.Is(err, store.ErrNotFound) || (err == nil && l.Kind != store.LoginSession) {
			return nil, notFound
		}
		if err != nil {
			return nil, err
		}
		owner = l.PersonID
		if err := mayEnd(ctx, st, a, owner); err != nil {
			return nil, err
		}
		if l, err = st.LoginEnd(ctx, &store.LoginEndParams{ID: u, Now: now}); err != nil {
			return nil, err
		}
		out = sessionOfLogin(l)
	} else {
		prefix, rest, _ := strings.Cut(id, "_")
		lookup, _, _ := strings.Cut(rest, "_")
		if prefix != "sbp" || lookup == "" {
			return nil, fmt.Errorf("%w: %q is neither a console session id (a UUID) nor a personal token id (sbp_…)", store.ErrInvalid, id)
		}
		k, err := st.KeyFind(ctx, lookup)
		if errors.Is(err, store.ErrNotFound) || (err == nil && k.Kind != store.KeyPersonal) {
			return nil, notFound
		}
		if err != nil {
			return nil, err
		}
		owner = k.PersonID
		if err := mayEnd(ctx, st, a, owner); err != nil {
			return nil, err
		}
		if k, err = st.KeyRevoke(ctx, &store.KeyRevokeParams{ID: k.ID, Now: now}); err != nil {
			return nil, err
		}
		out = sessionOfKey(k)
	}
	detail := map[string]any{"id": out.ID, "kind": out.Kind}
	if owner != nil {
		detail["person"] = *owner
	}
	if _, err := st.AuditLog(ctx, &store.AuditLogParams{Action: sso.AuditSessionEnd, Actor: by, Detail: sso.Detail(detail), Now: now}); err != nil {
		return nil, fmt.Errorf("auditing the end of session %s: %w", out.ID, err)
	}
	return out, nil
}

// mayEnd hides what a may not touch: another's session is not found.
func mayEnd(ctx context.Context, st store.Store, a workspace.Actor, owner *uuid.UUID) error {
	if a.Operator {
		return nil
	}
	if owner == nil { // the operator's own session
		return fmt.Errorf("that session: %w", store.ErrNotFound)
	}
	if err := mayManagePerson(ctx, st, a, *owner); err != nil {
		if errors.Is(err, workspace.ErrForbidden) {
			return fmt.Errorf("that session: %w", store.ErrNotFound)
		}
		return err
	}
	return nil
}

// Sessions lists sessions for a (see ListSessions).
func (s *Service) Sessions(ctx context.Context, a workspace.Actor, q SessionQuery) ([]*SessionInfo, error) {
	return ListSessions(ctx, s.st, a, q, s.now())
}

// EndSession ends a session or token for a (see EndSession).
func (s *Service) EndSession(ctx context.Context, a workspace.Actor, id, by string) (*SessionInfo, error) {
	return EndSession(ctx, s.st, a, id, by, s.now())
}
