package core

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Deciders says who may decide an approval.
type Deciders string

const (
	// DecidersStarter: the person whose message started the turn.
	DecidersStarter Deciders = "starter"
	// DecidersAdmins: any admin of the conversation's workspace.
	DecidersAdmins Deciders = "admins"
)

// Admins tells whether a person is an admin of a workspace (a Slack team or
// a Discord guild id; "" where there is none) by the operator's say-so: the
// app answers from switchboard.yaml's approvals.admins. Workspace roles
// count besides it: an owner or admin of the conversation's workspace may
// always decide when admins decide.
type Admins interface {
	IsAdmin(ctx context.Context, workspace, userID string) (bool, error)
}

// AdminsFunc is an Admins made of a function.
type AdminsFunc func(ctx context.Context, workspace, userID string) (bool, error)

// IsAdmin calls f.
func (f AdminsFunc) IsAdmin(ctx context.Context, workspace, userID string) (bool, error) {
	return f(ctx, workspace, userID)
}

// The values of an approval prompt's buttons.
const (
	ChoiceAllowOnce       = "approve"     // run this call
	ChoiceAlwaysAllow     = "always"      // run it, and grant the tool to the agent in this workspace
	ChoiceAlwaysAllowArgs = "always_args" // run it, and grant the tool with exactly these arguments
	ChoiceDeny            = "deny"
)

// confirmRequest is what a confirmation approval stores besides the
// prompt: enough for Act to check the decider and make a grant without
// reading the conversation again.
type confirmRequest struct {
	Agent     string          `json:"agent,omitempty"`
	Workspace string          `json:"workspace,omitempty"`
	Deciders  Deciders        `json:"deciders,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// ArgsHash is the hash a grant limited to a call's arguments keeps: the hex
// SHA-256 of the arguments' canonical JSON (keys sorted, no spaces), so the
// same arguments match however the model spaced or ordered them.
func ArgsHash(input json.RawMessage) string {
	canon := []byte(input)
	var v any
	if json.Unmarshal(input, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// workspaceOf is the platform workspace a conversation is bound to (a
// Slack team, a Discord guild); "" when it has none (the API, the terminal,
// a Discord DM).
func (s *Service) workspaceOf(ctx context.Context, conv uuid.UUID) (string, error) {
	p, err := s.placeOf(ctx, conv)
	return p.Workspace, err
}

// placeOf is where the conversation is bound: its first binding with a
// workspace, else its first binding; zero when it has none.
func (s *Service) placeOf(ctx context.Context, conv uuid.UUID) (store.Place, error) {
	bs, err := s.st.BindingListByConversation(ctx, conv)
	if err != nil {
		return store.Place{}, fmt.Errorf("finding the workspace of %s: %w", conv, err)
	}
	return placeIn(bs), nil
}

// placeIn is placeOf from the conversation's bindings read already.
func placeIn(bs []*store.Binding) store.Place {
	for _, b := range bs {
		if b.Place.Workspace != "" {
			return b.Place
		}
	}
	if len(bs) > 0 {
		return bs[0].Place
	}
	return store.Place{}
}

// turnStarter is the person whose message started the turn: the author of
// the last message from a person, else the conversation's starter.
func (t *turn) turnStarter() string {
	for i := len(t.entries) - 1; i >= 0; i-- {
		if e := t.entries[i]; e.Kind == store.EntryUser || e.Kind == store.EntryAction {
			if u, ok := e.Author.User(); ok && u != "" {
				return u
			}
		}
	}
	return t.meta.Starter
}

// granted returns the standing grant that lets this call run without
// asking, or nil.
func (t *turn) granted(ctx context.Context, c ToolCallContent) (*store.Grant, error) {
	g, err := t.s.st.GrantFind(ctx, &store.GrantFindParams{
		Agent: t.agent.Name, Tool: c.Name, Workspace: t.workspace, WorkspaceID: t.workspaceID, ArgsHash: ArgsHash(c.Input),
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("looking for a grant of %s: %w", c.Name, err)
	}
	return g, nil
}

// notice is the line a notify decision posts: what ran, with its
// arguments shortened and redacted.
func notice(c ToolCallContent) SystemContent {
	args := redact.String(strings.Join(strings.Fields(string(c.Input)), " "))
	if r := []rune(args); len(r) > 120 {
		args = string(r[:119]) + "…"
	}
	return SystemContent{Text: fmt.Sprintf("ran `%s` with `%s`", c.Name, args), Notice: true}
}

// mayDecide checks that the person clicking may decide ap; the reason is
// for an ephemeral reply when they may not.
func (s *Service) mayDecide(ctx context.Context, ap *store.Approval, a *Action) (bool, string, error) {
	if a.Operator {
		return true, "", nil
	}
	var req confirmRequest
	_ = json.Unmarshal(ap.Request, &req)
	if req.Deciders == DecidersAdmins {
		ok, err := s.isAdmin(ctx, ap.ConversationID, req.Workspace, a)
		if err != nil {
			return false, "", fmt.Errorf("checking whether %s is an admin: %w", a.UserID, err)
		}
		if !ok {
			return false, "This isn't yours to answer: only an admin of this workspace can decide.", nil
		}
		return true, "", nil
	}
	for _, d := range ap.Deciders {
		if d == a.UserID {
			return true, "", nil
		}
	}
	if len(ap.Deciders) > 0 {
		return false, "This isn't yours to answer: only the person who asked can decide.", nil
	}
	return true, "", nil
}

// isAdmin reports whether the person clicking is an admin of the
// conversation's workspace: an owner or admin there (the person found from
// their platform identity), or one the operator lists (Options.Admins).
func (s *Service) isAdmin(ctx context.Context, conv uuid.UUID, team string, a *Action) (bool, error) {
	if admins := s.settings().admins; admins != nil {
		if ok, err := admins.IsAdmin(ctx, team, a.UserID); err != nil || ok {
			return ok, err
		}
	}
	ws, err := s.st.ConversationWorkspace(ctx, conv)
	if err != nil || ws == nil {
		return false, err
	}
	id := IdentityOf(a.Platform, cmp.Or(a.Workspace, team), a.UserID)
	return workspace.MayDecide(ctx, s.st, id, *ws)
}

// grantFor is the standing grant an "Always allow" click makes; nil for
// any other choice.
func grantFor(ap *store.Approval, choice, userID string) *store.GrantCreateParams {
	if ap.Kind != store.ApprovalConfirm || (choice != ChoiceAlwaysAllow && choice != ChoiceAlwaysAllowArgs) {
		return nil
	}
	var req confirmRequest
	if json.Unmarshal(ap.Request, &req) != nil || req.Agent == "" {
		return nil
	}
	g := &store.GrantCreateParams{Agent: req.Agent, Tool: ap.Tool, Workspace: req.Workspace, GrantedBy: userID}
	if choice == ChoiceAlwaysAllowArgs {
		g.ArgsHash = ArgsHash(req.Input)
	}
	return g
}

// GrantPlace is where standing grants are listed or revoked from.
type GrantPlace struct {
	// WorkspaceID names a workspace; Platform and Team are then ignored.
	WorkspaceID *uuid.UUID
	// Team is a platform workspace (a Slack team, a Discord guild). With
	// Platform, a team bound to a workspace stands for that workspace (its
	// grants are held by its id); without Platform, or unbound, it names
	// the grants made there that belong to no workspace.
	Platform, Team string
}

// resolve is the workspace a place stands for; nil when it names grants by
// their platform string.
func (s *Service) resolve(ctx context.Context, p *GrantPlace) (*uuid.UUID, error) {
	if p.WorkspaceID != nil || p.Platform == "" || p.Team == "" {
		return p.WorkspaceID, nil
	}
	b, err := s.st.WorkspaceBindingFind(ctx, &store.WorkspaceBindingFindParams{Platform: p.Platform, ExternalID: p.Team})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("finding the workspace of %s team %s: %w", p.Platform, p.Team, err)
	}
	return &b.WorkspaceID, nil
}

// Grants lists the standing grants that hold, of one place or (nil) of
// all, with their workspace's name.
func (s *Service) Grants(ctx context.Context, place *GrantPlace) ([]*store.Grant, error) {
	lp := &store.GrantListParams{}
	if place != nil {
		ws, err := s.resolve(ctx, place)
		if err != nil {
			return nil, err
		}
		if lp.WorkspaceID = ws; ws == nil {
			lp.Workspace = &place.Team
		}
	}
	gs, err := s.st.GrantList(ctx, lp)
	if err != nil {
		return nil, fmt.Errorf("listing grants: %w", err)
	}
	if lp.Workspace != nil {
		// Named by the platform string: only the grants of no workspace.
		gs = slices.DeleteFunc(gs, func(g *store.Grant) bool { return g.WorkspaceID != nil })
	}
	return gs, nil
}

// RevokeGrant revokes a standing grant: the guard asks again from the next
// call on. With place set, a grant of another place is store.ErrNotFound.
func (s *Service) RevokeGrant(ctx context.Context, id uuid.UUID, place *GrantPlace) (*store.Grant, error) {
	g, err := s.st.GrantGet(ctx, id)
	if err == nil && place != nil {
		var ws *uuid.UUID
		if ws, err = s.resolve(ctx, place); err == nil && !grantIn(g, ws, place.Team) {
			err = store.ErrNotFound
		}
	}
	if err != nil {
		return nil, fmt.Errorf("revoking grant %s: %w", id, err)
	}
	g, err = s.st.GrantRevoke(ctx, &store.GrantRevokeParams{ID: id, Now: s.now()})
	if err != nil {
		return nil, fmt.Errorf("revoking grant %s: %w", id, err)
	}
	return g, nil
}

// grantIn reports whether g holds in the workspace ws, or (ws nil) among
// the grants of no workspace made in team.
func grantIn(g *store.Grant, ws *uuid.UUID, team string) bool {
	if ws != nil {
		return g.WorkspaceID != nil && *g.WorkspaceID == *ws
	}
	return g.WorkspaceID == nil && g.Workspace == team
}
