package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Rights checks that p may do action in workspace ws. ws nil is a row made
// outside any workspace: only the operator reaches it. A principal who is
// not a member of ws gets core.ErrNotFound, so that what exists elsewhere
// is not revealed; a member without the role gets workspace.ErrForbidden.
func Rights(ctx context.Context, q store.Queries, p *Principal, ws *uuid.UUID, action workspace.Action) error {
	if p.Admin() {
		return nil
	}
	if p.Kind != PrincipalPerson || ws == nil {
		return fmt.Errorf("%w: only the operator may do that", workspace.ErrForbidden)
	}
	if len(p.Workspaces) > 0 && !contains(p.Workspaces, *ws) {
		return fmt.Errorf("%w: this credential is not for workspace %s", workspace.ErrForbidden, *ws)
	}
	role, err := workspace.Check(ctx, q, *ws, p.PersonID, action)
	if role == "" && errors.Is(err, workspace.ErrForbidden) {
		return fmt.Errorf("workspace %s: %w", *ws, core.ErrNotFound)
	}
	return err
}

func contains(ids []uuid.UUID, id uuid.UUID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// allowedConversation parses the conversation id of the path and checks
// that the caller may use the conversation's workspace.
func (a *API) allowedConversation(r *http.Request) (uuid.UUID, error) {
	id, err := convID(r)
	if err != nil {
		return uuid.Nil, err
	}
	return a.allowedConversationID(r, id)
}

// allowedConversationID is allowedConversation for a conversation named
// other than by the path's id (a delegation's).
func (a *API) allowedConversationID(r *http.Request, id uuid.UUID) (uuid.UUID, error) {
	p := principal(r)
	// A deleted conversation is gone for everyone (see ConversationDelete).
	if f, err := a.st.ConversationFilingGet(r.Context(), id); err == nil && f.DeletedAt != nil {
		return uuid.Nil, core.ErrNotFound
	}
	if p.Admin() || p.Kind == PrincipalAgent {
		return id, nil // an agent session was kept to its own agent's conversations (mayUseConversation)
	}
	ws, err := a.st.ConversationWorkspace(r.Context(), id)
	if err != nil {
		return uuid.Nil, err
	}
	if err := Rights(r.Context(), a.st, p, ws, workspace.Use); errors.Is(err, core.ErrNotFound) {
		return uuid.Nil, core.ErrNotFound // reported as the conversation not found
	} else if err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// workspaceForNew picks the workspace of a conversation made through the
// API: the one asked for, where the caller may use it; else a person's
// personal workspace; else (the operator) none.
func (a *API) workspaceForNew(r *http.Request, asked string) (*uuid.UUID, error) {
	p := principal(r)
	if asked != "" {
		id, err := parseID("workspace", asked)
		if err != nil {
			return nil, err
		}
		if _, err := a.st.WorkspaceGet(r.Context(), id); err != nil {
			return nil, err
		}
		return &id, Rights(r.Context(), a.st, p, &id, workspace.Use)
	}
	if p.Kind != PrincipalPerson {
		return nil, nil
	}
	ws, err := a.st.WorkspaceEnsurePersonal(r.Context(), &store.WorkspaceEnsurePersonalParams{PersonID: p.PersonID})
	if err != nil {
		return nil, err
	}
	// A credential narrowed to some workspaces reaches the personal one
	// only when it names it.
	if len(p.Workspaces) > 0 && !contains(p.Workspaces, ws.ID) {
		return nil, &httpError{status: http.StatusForbidden, msg: fmt.Sprintf(
			"this token is not scoped to workspace %s (the personal one); name a workspace it is scoped to", ws.ID)}
	}
	return &ws.ID, nil
}

func parseID(what, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, fmt.Errorf("%w: %s id %q is not a UUID", core.ErrInvalidParams, what, s)
	}
	return id, nil
}

// conflict turns a store conflict into a 409 whose message says why.
func conflict(err error) error {
	if errors.Is(err, core.ErrConflict) {
		return &httpError{status: http.StatusConflict, msg: err.Error()}
	}
	return err
}

// allowedWorkspace reads the workspace of the path and checks the action.
func (a *API) allowedWorkspace(r *http.Request, action workspace.Action) (*core.Workspace, error) {
	id, err := parseID("workspace", r.PathValue("ws"))
	if err != nil {
		return nil, err
	}
	if err := Rights(r.Context(), a.st, principal(r), &id, action); err != nil {
		return nil, err
	}
	return a.st.WorkspaceGet(r.Context(), id)
}

type workspaceJSON struct {
	ID      string       `json:"id"`
	Name    string       `json:"name"`
	Kind    string       `json:"kind"`
	Owner   string       `json:"owner"`
	Role    string       `json:"role,omitempty"`
	Members []memberJSON `json:"members,omitempty"`
}

type memberJSON struct {
	Person string `json:"person"`
	Role   string `json:"role"`
}

// WorkspaceList is GET /api/workspaces.
type WorkspaceList struct {
	Workspaces []workspaceJSON `json:"workspaces"`
}

// WorkspaceRequest is the body of POST /api/workspaces.
type WorkspaceRequest struct {
	Name  string `json:"name"`
	Owner string `json:"owner,omitempty"` // the operator only: who owns it
}

// MemberRequest is the body of POST /api/workspaces/{ws}/members.
type MemberRequest struct {
	Person string `json:"person"`
	Role   string `json:"role,omitempty"` // admin or member (the default)
}

// RoleRequest is the body of PUT /api/workspaces/{ws}/members/{person}.
type RoleRequest struct {
	Role string `json:"role"`
}

// BindRequest is the body of POST /api/workspaces/{ws}/bindings: a
// platform workspace (a Slack team, a Discord guild) to bind to it.
type BindRequest struct {
	Platform   string `json:"platform"`
	ExternalID string `json:"external_id"`
}

// BindingJSON is a platform workspace bound to a workspace.
type BindingJSON struct {
	BindRequest
	Workspace string `json:"workspace"`
}

// SharingJSON is where an agent answers: the workspaces it is pinned to,
// whether the public directory lists it, and its owner when a person owns
// it.
type SharingJSON struct {
	Agent     string   `json:"agent"`
	Pins      []string `json:"pins"`
	Published bool     `json:"published"`
	Owner     string   `json:"owner,omitempty"`
}

// PinRequest is the body of PUT /api/agents/{agent}/pins.
type PinRequest struct {
	Workspaces []string `json:"workspaces"` // empty: unpinned
}

// PublishRequest is the (optional) body of POST /api/agents/{agent}/publish.
type PublishRequest struct {
	Published *bool `json:"published,omitempty"` // default true
}

// AgentListing is an agent in a workspace's list or the directory.
type AgentListing struct {
	Name  string `json:"name"`
	Owner string `json:"owner,omitempty"`
}

// AgentListings lists agents.
type AgentListings struct {
	Agents []AgentListing `json:"agents"`
}

func toWorkspaceJSON(ws *core.Workspace, role core.Role) workspaceJSON {
	return workspaceJSON{ID: ws.ID.String(), Name: ws.Name, Kind: string(ws.Kind), Owner: ws.OwnerPersonID.String(), Role: string(role)}
}

// personOf is whom a workspace call is about: the person calling, or, for
// the operator, the person named in the request.
func personOf(p *Principal, named string) (uuid.UUID, error) {
	if p.Kind == PrincipalPerson {
		return p.PersonID, nil
	}
	if named == "" {
		return uuid.Nil, fmt.Errorf("%w: the operator names the person (\"owner\" in the body, ?person= in a query)", core.ErrInvalidParams)
	}
	return parseID("person", named)
}

func (a *API) workspaceCreate(w http.ResponseWriter, r *http.Request) error {
	var body WorkspaceRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	owner, err := personOf(principal(r), body.Owner)
	if err != nil {
		return err
	}
	ws, err := a.st.WorkspaceCreate(r.Context(), &store.WorkspaceCreateParams{Name: body.Name, Kind: store.WorkspaceTeam, OwnerPersonID: owner})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toWorkspaceJSON(ws, core.RoleOwner))
	return nil
}

func (a *API) workspaceList(w http.ResponseWriter, r *http.Request) error {
	person, err := personOf(principal(r), r.URL.Query().Get("person"))
	if err != nil {
		return err
	}
	ms, err := a.st.WorkspaceListByPerson(r.Context(), person)
	if err != nil {
		return err
	}
	p := principal(r)
	out := make([]workspaceJSON, 0, len(ms))
	for _, m := range ms {
		if len(p.Workspaces) == 0 || contains(p.Workspaces, m.Workspace.ID) {
			out = append(out, toWorkspaceJSON(m.Workspace, m.Role))
		}
	}
	writeJSON(w, http.StatusOK, WorkspaceList{Workspaces: out})
	return nil
}

func (a *API) workspaceGet(w http.ResponseWriter, r *http.Request) error {
	ws, err := a.allowedWorkspace(r, workspace.Use)
	if err != nil {
		return err
	}
	ms, err := a.st.WorkspaceMemberList(r.Context(), ws.ID)
	if err != nil {
		return err
	}
	out := toWorkspaceJSON(ws, "")
	for _, m := range ms {
		out.Members = append(out.Members, memberJSON{Person: m.PersonID.String(), Role: string(m.Role)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) workspaceDelete(w http.ResponseWriter, r *http.Request) error {
	ws, err := a.allowedWorkspace(r, workspace.Delete)
	if err != nil {
		return err
	}
	if err := a.st.WorkspaceDelete(r.Context(), ws.ID); err != nil {
		return conflict(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) memberAdd(w http.ResponseWriter, r *http.Request) error {
	var body MemberRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	ws, err := a.allowedWorkspace(r, workspace.Invite)
	if err != nil {
		return err
	}
	person, err := parseID("person", body.Person)
	if err != nil {
		return err
	}
	role := core.Role(body.Role)
	if role == "" {
		role = core.RoleMember
	}
	// Adding someone already there with another role is a role change.
	cur, err := a.st.WorkspaceMemberGet(r.Context(), &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: person})
	switch {
	case err == nil && cur.Role != role:
		if err := Rights(r.Context(), a.st, principal(r), &ws.ID, workspace.ChangeRoles); err != nil {
			return err
		}
	case err != nil && !errors.Is(err, core.ErrNotFound):
		return err
	}
	return a.putMember(w, r, ws.ID, person, role, http.StatusCreated)
}

func (a *API) memberRole(w http.ResponseWriter, r *http.Request) error {
	var body RoleRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	ws, err := a.allowedWorkspace(r, workspace.ChangeRoles)
	if err != nil {
		return err
	}
	person, err := parseID("person", r.PathValue("person"))
	if err != nil {
		return err
	}
	if _, err := a.st.WorkspaceMemberGet(r.Context(), &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: person}); err != nil {
		return err
	}
	return a.putMember(w, r, ws.ID, person, core.Role(body.Role), http.StatusOK)
}

func (a *API) putMember(w http.ResponseWriter, r *http.Request, ws, person uuid.UUID, role core.Role, status int) error {
	m, err := a.st.WorkspaceMemberPut(r.Context(), &store.WorkspaceMemberPutParams{WorkspaceID: ws, PersonID: person, Role: role})
	if err != nil {
		return conflict(err)
	}
	writeJSON(w, status, memberJSON{Person: m.PersonID.String(), Role: string(m.Role)})
	return nil
}

func (a *API) memberRemove(w http.ResponseWriter, r *http.Request) error {
	ws, err := a.allowedWorkspace(r, workspace.RemoveMember)
	if err != nil {
		return err
	}
	person, err := parseID("person", r.PathValue("person"))
	if err != nil {
		return err
	}
	m, err := a.st.WorkspaceMemberGet(r.Context(), &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: person})
	if err != nil {
		return err
	}
	// Removing an admin changes who holds a role: the owner's decision.
	if m.Role == core.RoleAdmin {
		if err := Rights(r.Context(), a.st, principal(r), &ws.ID, workspace.ChangeRoles); err != nil {
			return err
		}
	}
	if err := a.st.WorkspaceMemberRemove(r.Context(), &store.WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: person}); err != nil {
		return conflict(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) workspaceBind(w http.ResponseWriter, r *http.Request) error {
	var body BindRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	ws, err := a.allowedWorkspace(r, workspace.ManageConnections)
	if err != nil {
		return err
	}
	b, err := workspace.BindWorkspace(r.Context(), a.st, body.Platform, body.ExternalID, ws.ID)
	if err != nil {
		return conflict(err)
	}
	writeJSON(w, http.StatusCreated, BindingJSON{BindRequest: BindRequest{Platform: b.Platform, ExternalID: b.ExternalID}, Workspace: b.WorkspaceID.String()})
	return nil
}

// sharedAgent reads the agent of the path and checks that the caller may
// change where it answers: its owner, or the operator (for every agent,
// and the only one for the agents of switchboard.yaml).
func (a *API) sharedAgent(r *http.Request) (*core.Agent, *core.AgentSharing, error) {
	ag, err := a.st.AgentGetByName(r.Context(), r.PathValue("agent"))
	if err != nil {
		return nil, nil, err
	}
	sh, err := a.st.AgentSharingGet(r.Context(), ag.ID)
	if err != nil {
		return nil, nil, err
	}
	p := principal(r)
	if !p.Admin() && (sh.OwnerPersonID == nil || p.Kind != PrincipalPerson || *sh.OwnerPersonID != p.PersonID) {
		return nil, nil, fmt.Errorf("%w: only the owner of agent %s may change where it answers", workspace.ErrForbidden, ag.Name)
	}
	return ag, sh, nil
}

func sharingJSON(name string, sh *core.AgentSharing) SharingJSON {
	out := SharingJSON{Agent: name, Pins: make([]string, 0, len(sh.Pins)), Published: sh.Published}
	for _, p := range sh.Pins {
		out.Pins = append(out.Pins, p.String())
	}
	if sh.OwnerPersonID != nil {
		out.Owner = sh.OwnerPersonID.String()
	}
	return out
}

func (a *API) agentPin(w http.ResponseWriter, r *http.Request) error {
	var body PinRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	ag, _, err := a.sharedAgent(r)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, 0, len(body.Workspaces))
	for _, s := range body.Workspaces {
		id, err := parseID("workspace", s)
		if err != nil {
			return err
		}
		if err := Rights(r.Context(), a.st, principal(r), &id, workspace.ConfigureAgents); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	sh, err := a.st.AgentPin(r.Context(), &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: ids})
	if err != nil {
		return conflict(err)
	}
	writeJSON(w, http.StatusOK, sharingJSON(ag.Name, sh))
	return nil
}

func (a *API) agentPublish(w http.ResponseWriter, r *http.Request) error {
	var body PublishRequest
	if err := decode(w, r, &body, true); err != nil {
		return err
	}
	ag, _, err := a.sharedAgent(r)
	if err != nil {
		return err
	}
	publish := body.Published == nil || *body.Published
	sh, err := a.st.AgentPublish(r.Context(), &store.AgentPublishParams{AgentID: ag.ID, Published: publish})
	if err != nil {
		return conflict(err)
	}
	writeJSON(w, http.StatusOK, sharingJSON(ag.Name, sh))
	return nil
}

func (a *API) workspaceAgents(w http.ResponseWriter, r *http.Request) error {
	ws, err := a.allowedWorkspace(r, workspace.Use)
	if err != nil {
		return err
	}
	ls, err := a.st.AgentListVisible(r.Context(), ws.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AgentListings{Agents: listingsJSON(ls)})
	return nil
}

func listingsJSON(ls []*core.Listing) []AgentListing {
	out := make([]AgentListing, 0, len(ls))
	for _, l := range ls {
		e := AgentListing{Name: l.Name}
		if l.OwnerPersonID != nil {
			e.Owner = l.OwnerPersonID.String()
		}
		out = append(out, e)
	}
	return out
}

func (a *API) directory(w http.ResponseWriter, r *http.Request) error {
	ls, err := a.st.AgentDirectory(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AgentListings{Agents: listingsJSON(ls)})
	return nil
}
