package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/workspace"
)

// actor is p as core/workspace sees it: the operator, a person with their
// token's scope, or (an agent's or a host's credential) nobody.
func (p *Principal) actor() workspace.Actor {
	if p.Admin() {
		return workspace.TheOperator
	}
	if p.Kind != PrincipalPerson {
		return workspace.Actor{}
	}
	return workspace.Actor{Person: p.PersonID, Scope: p.Workspaces}
}

// rights checks that the caller p may do action in workspace ws (see
// workspace.Rights).
func (a *API) rights(ctx context.Context, p *Principal, ws *uuid.UUID, action workspace.Action) error {
	return a.svc.Workspaces().Rights(ctx, p.actor(), ws, action)
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
	actor := p.actor()
	if p.Kind == PrincipalAgent {
		// An agent's session was kept to its own agent's conversations
		// (mayUseConversation); the workspace's roles are not its.
		actor = workspace.TheOperator
	}
	if err := a.svc.Workspaces().UseConversation(r.Context(), actor, id); err != nil {
		if errors.Is(err, core.ErrNotFound) {
			return uuid.Nil, core.ErrNotFound // reported as the conversation not found
		}
		return uuid.Nil, err
	}
	return id, nil
}

// workspaceForNew picks the workspace of a conversation made through the
// API: the one asked for, where the caller may use it; else a person's
// personal workspace; else (the operator) none.
func (a *API) workspaceForNew(r *http.Request, asked string) (*uuid.UUID, error) {
	var id *uuid.UUID
	if asked != "" {
		ws, err := parseID("workspace", asked)
		if err != nil {
			return nil, err
		}
		id = &ws
	}
	return a.svc.Workspaces().ForNew(r.Context(), principal(r).actor(), id)
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
	return a.svc.Workspaces().Open(r.Context(), principal(r).actor(), id, action)
}

// pathWorkspace is the workspace id of the path.
func pathWorkspace(r *http.Request) (uuid.UUID, error) {
	return parseID("workspace", r.PathValue("ws"))
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
	ws, err := a.svc.Workspaces().Create(r.Context(), owner, body.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toWorkspaceJSON(ws, core.RoleOwner))
	return nil
}

func (a *API) workspaceList(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	person, err := personOf(p, r.URL.Query().Get("person"))
	if err != nil {
		return err
	}
	ms, err := a.svc.Workspaces().Memberships(r.Context(), p.actor(), person)
	if err != nil {
		return err
	}
	out := make([]workspaceJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, toWorkspaceJSON(m.Workspace, m.Role))
	}
	writeJSON(w, http.StatusOK, WorkspaceList{Workspaces: out})
	return nil
}

func (a *API) workspaceGet(w http.ResponseWriter, r *http.Request) error {
	id, err := pathWorkspace(r)
	if err != nil {
		return err
	}
	ws, ms, err := a.svc.Workspaces().Members(r.Context(), principal(r).actor(), id)
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
	id, err := pathWorkspace(r)
	if err != nil {
		return err
	}
	if err := a.svc.Workspaces().Delete(r.Context(), principal(r).actor(), id); err != nil {
		return conflict(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// workspaceAndPerson are the workspace of the path and a person: named in
// the path, or (named "") the one given.
func workspaceAndPerson(r *http.Request, person string) (ws, p uuid.UUID, err error) {
	if ws, err = pathWorkspace(r); err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	if person == "" {
		person = r.PathValue("person")
	}
	p, err = parseID("person", person)
	return ws, p, err
}

func (a *API) memberAdd(w http.ResponseWriter, r *http.Request) error {
	var body MemberRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	ws, person, err := workspaceAndPerson(r, body.Person)
	if err != nil {
		return err
	}
	m, err := a.svc.Workspaces().AddMember(r.Context(), principal(r).actor(), ws, person, core.Role(body.Role))
	return a.member(w, m, err, http.StatusCreated)
}

func (a *API) memberRole(w http.ResponseWriter, r *http.Request) error {
	var body RoleRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	ws, person, err := workspaceAndPerson(r, "")
	if err != nil {
		return err
	}
	m, err := a.svc.Workspaces().SetRole(r.Context(), principal(r).actor(), ws, person, core.Role(body.Role))
	return a.member(w, m, err, http.StatusOK)
}

func (a *API) member(w http.ResponseWriter, m *core.WorkspaceMember, err error, status int) error {
	if err != nil {
		return conflict(err)
	}
	writeJSON(w, status, memberJSON{Person: m.PersonID.String(), Role: string(m.Role)})
	return nil
}

func (a *API) memberRemove(w http.ResponseWriter, r *http.Request) error {
	ws, person, err := workspaceAndPerson(r, "")
	if err != nil {
		return err
	}
	if err := a.svc.Workspaces().RemoveMember(r.Context(), principal(r).actor(), ws, person); err != nil {
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
	ws, err := pathWorkspace(r)
	if err != nil {
		return err
	}
	b, err := a.svc.Workspaces().Bind(r.Context(), principal(r).actor(), ws, body.Platform, body.ExternalID)
	if err != nil {
		return conflict(err)
	}
	writeJSON(w, http.StatusCreated, BindingJSON{BindRequest: BindRequest{Platform: b.Platform, ExternalID: b.ExternalID}, Workspace: b.WorkspaceID.String()})
	return nil
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

// sharing answers where an agent answers after a change.
func sharing(w http.ResponseWriter, ag *core.Agent, sh *core.AgentSharing, err error) error {
	if err != nil {
		return conflict(err)
	}
	writeJSON(w, http.StatusOK, sharingJSON(ag.Name, sh))
	return nil
}

func (a *API) agentPin(w http.ResponseWriter, r *http.Request) error {
	var body PinRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	ids := make([]uuid.UUID, 0, len(body.Workspaces))
	for _, s := range body.Workspaces {
		id, err := parseID("workspace", s)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	ag, sh, err := a.svc.Workspaces().Pin(r.Context(), principal(r).actor(), r.PathValue("agent"), ids)
	return sharing(w, ag, sh, err)
}

func (a *API) agentPublish(w http.ResponseWriter, r *http.Request) error {
	var body PublishRequest
	if err := decode(w, r, &body, true); err != nil {
		return err
	}
	publish := body.Published == nil || *body.Published
	ag, sh, err := a.svc.Workspaces().Publish(r.Context(), principal(r).actor(), r.PathValue("agent"), publish)
	return sharing(w, ag, sh, err)
}

func (a *API) workspaceAgents(w http.ResponseWriter, r *http.Request) error {
	ws, err := pathWorkspace(r)
	if err != nil {
		return err
	}
	ls, err := a.svc.Workspaces().Agents(r.Context(), principal(r).actor(), ws)
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
	ls, err := a.svc.Workspaces().Directory(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AgentListings{Agents: listingsJSON(ls)})
	return nil
}
