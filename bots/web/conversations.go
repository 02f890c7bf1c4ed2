package web

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// visibleWorkspaces is what a principal may list conversations of: every
// one (all true) for the operator, else the workspaces a person belongs
// to, within their credential's scope.
func (a *API) visibleWorkspaces(ctx context.Context, p *Principal) (all bool, ids []uuid.UUID, err error) {
	switch {
	case p.Admin():
		return true, nil, nil
	case p.Kind != PrincipalPerson:
		return false, nil, &httpError{status: http.StatusForbidden, msg: "listing conversations is for people and the operator"}
	}
	v, err := a.svc.Workspaces().Visibility(ctx, p.actor())
	if err != nil || len(v.Workspaces) == 0 {
		return false, nil, err
	}
	return false, v.Workspaces, nil
}

// agentNames maps agent ids to names, for the agents the server knows.
func (a *API) agentNames(ctx context.Context) map[uuid.UUID]string {
	out := map[uuid.UUID]string{}
	if a.opts.AgentsFunc == nil {
		return out
	}
	for _, name := range a.opts.AgentsFunc() {
		if ag, err := a.svc.AgentByName(ctx, name); err == nil {
			out[ag.ID] = name
		}
	}
	return out
}

// ForkNode is a conversation in a fork tree. Agent is set when it has one
// (its name, "" when the server no longer knows it), WorkspaceID when it
// is in one; Current marks the conversation asked about, and Depth, in the
// tree from the root, how far down it is.
type ForkNode struct {
	ConversationJSON
	UpdatedAt   time.Time  `json:"updated_at"`
	Agent       *string    `json:"agent,omitempty"`
	WorkspaceID *uuid.UUID `json:"workspace_id,omitempty"`
	Current     bool       `json:"current"`
	Depth       *int       `json:"depth,omitempty"`
}

// ForkTree is GET /api/conversations/{id}/forks: the conversation, its
// parent and children, and the whole tree from the root, depth first
// (leaving out what the caller may not see).
type ForkTree struct {
	Conversation ForkNode   `json:"conversation"`
	Parent       *ForkNode  `json:"parent,omitempty"`
	Children     []ForkNode `json:"children"`
	Tree         []ForkNode `json:"tree"`
}

// forkNode is a conversation as a fork tree shows it.
func (a *API) forkNode(ctx context.Context, c *core.Conversation, names map[uuid.UUID]string, current uuid.UUID) ForkNode {
	out := ForkNode{ConversationJSON: conversationJSON(c), UpdatedAt: c.UpdatedAt, Current: c.ID == current}
	if c.AgentID != nil {
		name := names[*c.AgentID]
		out.Agent = &name
	}
	if ws, err := a.svc.ConversationWorkspace(ctx, c.ID); err == nil && ws != nil {
		out.WorkspaceID = ws
	}
	return out
}

// forkTree answers GET /api/conversations/{id}/forks: the conversation's
// place in its fork tree (its parent and its children, with their child
// counts), and the whole tree from its root, as far as the caller may see.
func (a *API) forkTree(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	conv, err := a.svc.Conversation(r.Context(), id)
	if err != nil {
		return err
	}
	names := a.agentNames(r.Context())
	node := func(c *core.Conversation) ForkNode { return a.forkNode(r.Context(), c, names, id) }
	res := ForkTree{Conversation: node(conv)}
	if conv.ParentID != nil {
		if _, err := a.allowedConversationID(r, *conv.ParentID); err == nil {
			if parent, err := a.svc.Conversation(r.Context(), *conv.ParentID); err == nil {
				p := node(parent)
				res.Parent = &p
			}
		}
	}
	children, err := a.svc.Forks(r.Context(), id)
	if err != nil {
		return err
	}
	res.Children = make([]ForkNode, 0, len(children))
	for _, c := range children {
		res.Children = append(res.Children, node(c))
	}
	// The tree from the root, depth first, bounded: a page draws it.
	root, err := a.svc.Conversation(r.Context(), conv.RootID)
	if err != nil {
		return err
	}
	const maxNodes = 500
	var walk func(c *core.Conversation, depth int) error
	walk = func(c *core.Conversation, depth int) error {
		if len(res.Tree) >= maxNodes {
			return nil
		}
		if _, err := a.allowedConversationID(r, c.ID); err != nil {
			return nil // a fork in a workspace the caller cannot see is left out
		}
		n := node(c)
		n.Depth = &depth
		res.Tree = append(res.Tree, n)
		kids, err := a.svc.Forks(r.Context(), c.ID)
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := walk(k, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// agentsFor lists the agents p may talk to: every configured agent for the
// operator, else those visible in the person's workspaces.
func (a *API) agentsFor(ctx context.Context, p *Principal) ([]string, error) {
	var all []string
	if a.opts.AgentsFunc != nil {
		all = a.opts.AgentsFunc()
	}
	if p.Admin() || p.Kind != PrincipalPerson {
		return all, nil
	}
	_, ids, err := a.visibleWorkspaces(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ws := range ids {
		ls, err := a.svc.Workspaces().Agents(ctx, p.actor(), ws)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			if !slices.Contains(out, l.Name) && (len(all) == 0 || slices.Contains(all, l.Name)) {
				out = append(out, l.Name)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
