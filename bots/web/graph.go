package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	runpkg "github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/core/workspace"
)

// The work graph: how the work around one conversation connects. From the
// conversation named by ?c= it climbs to the top of its tree (a fork's
// parent, a side thread's or a delegated task's parent conversation, a run
// step's run) and walks down again through forks, side threads,
// delegations, runs and their steps, naming the agent on each. Every
// conversation is checked as the conversation API checks it: one the
// caller may not see is left out, with everything that hangs from it.

// GraphNode kinds.
const (
	NodeConversation = "conversation" // a root conversation
	NodeFork         = "fork"
	NodeSideThread   = "side_thread"
	NodeTask         = "task" // a delegated task's conversation
	NodeRun          = "run"
	NodeStep         = "step"
	NodeAgent        = "agent"
)

// GraphEdge kinds.
const (
	EdgeForkOf       = "fork-of"        // fork → the conversation it forked from
	EdgeSideThreadOf = "side-thread-of" // side thread → its parent conversation
	EdgeDelegatedTo  = "delegated-to"   // conversation → the task it delegated
	EdgeRunOf        = "run-of"         // run → the conversation it came from
	EdgeStepOf       = "step-of"        // step → its run
	EdgeRunsIn       = "runs-in"        // step → the conversation it runs in
	EdgeHandledBy    = "handled-by"     // conversation or step → its agent
)

// GraphNode is one node of the work graph. Parent is the node it hangs
// from in the tree the graph is drawn as ("" for the top and for agents).
type GraphNode struct {
	ID           string     `json:"id"`
	Kind         string     `json:"kind"`
	Label        string     `json:"label"`
	Status       string     `json:"status,omitempty"`
	Agent        string     `json:"agent,omitempty"`
	Parent       string     `json:"parent,omitempty"`
	Conversation *uuid.UUID `json:"conversation,omitempty"` // where a click goes: the chat/log view
	Run          *uuid.UUID `json:"run,omitempty"`          // where a click goes: the runs view
	Detail       string     `json:"detail,omitempty"`
}

// GraphEdge is one edge of the work graph, From → To.
type GraphEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
}

// maxGraphNodes bounds one graph; a bigger one is cut and says so.
const maxGraphNodes = 300

// maxGraphClimb bounds the walk up to the top of a conversation's tree.
const maxGraphClimb = 32

// WorkGraph is GET /api/graph: the graph around a conversation, drawn
// from Top. Truncated says it was cut at its bound.
type WorkGraph struct {
	Conversation uuid.UUID    `json:"conversation"`
	Top          string       `json:"top"`
	Nodes        []*GraphNode `json:"nodes"`
	Edges        []*GraphEdge `json:"edges"`
	Truncated    bool         `json:"truncated"`
}

// graph is GET /api/graph?c=<conversation id>.
func (a *API) graph(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query().Get("c")
	if v == "" {
		return fmt.Errorf("%w: c (the conversation id) is required", core.ErrInvalidParams)
	}
	id, err := parseID("conversation", v)
	if err != nil {
		return err
	}
	g := &graphBuilder{a: a, r: r, seen: map[string]bool{}, agents: map[uuid.UUID]string{}, visible: map[uuid.UUID]bool{}}
	ok, err := g.may(id)
	if err != nil {
		return err
	}
	if !ok {
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("conversation %s not found", id)}
	}
	top, err := g.climb(r.Context(), id)
	if err != nil {
		return err
	}
	if err := g.walk(r.Context(), top); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, WorkGraph{Conversation: id, Top: convNodeID(top), Nodes: g.nodes, Edges: g.edges, Truncated: g.truncated})
	return nil
}

type graphBuilder struct {
	a         *API
	r         *http.Request
	nodes     []*GraphNode
	edges     []*GraphEdge
	seen      map[string]bool
	agents    map[uuid.UUID]string
	visible   map[uuid.UUID]bool
	truncated bool
}

func convNodeID(id uuid.UUID) string { return "conversation:" + id.String() }

// may reports whether the caller may see conversation id, as the
// conversation API decides; a refusal or a missing conversation is false.
func (g *graphBuilder) may(id uuid.UUID) (bool, error) {
	if v, ok := g.visible[id]; ok {
		return v, nil
	}
	err := g.a.mayUseConversation(g.r, principal(g.r), id)
	if err == nil {
		_, err = g.a.allowedConversationID(g.r, id)
	}
	var he *httpError
	switch {
	case err == nil:
		g.visible[id] = true
	case errors.As(err, &he) || errors.Is(err, core.ErrNotFound) || errors.Is(err, workspace.ErrForbidden):
		g.visible[id] = false
	default:
		return false, err
	}
	return g.visible[id], nil
}

// climb goes up from id to the top of its tree, as far as the caller may
// see.
func (g *graphBuilder) climb(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	for range maxGraphClimb {
		up, err := g.up(ctx, id)
		if err != nil {
			return uuid.Nil, err
		}
		if up == uuid.Nil {
			return id, nil
		}
		ok, err := g.may(up)
		if err != nil || !ok {
			return id, err
		}
		id = up
	}
	return id, nil
}

// up is the conversation id hangs from: a fork's parent, a side thread's
// or delegated task's parent, a run step's run's conversation; uuid.Nil
// for a top.
func (g *graphBuilder) up(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	st := g.a.svc
	conv, err := st.Conversation(ctx, id)
	if err != nil {
		return uuid.Nil, err
	}
	if conv.ParentID != nil {
		return *conv.ParentID, nil
	}
	if t, err := st.SideThreadOf(ctx, id); err == nil {
		return t.ParentID, nil
	} else if !errors.Is(err, core.ErrNotFound) {
		return uuid.Nil, err
	}
	if d, err := st.DelegationOf(ctx, id); err == nil {
		return d.FromConversation, nil
	} else if !errors.Is(err, core.ErrNotFound) {
		return uuid.Nil, err
	}
	if s, err := st.RunStepOf(ctx, id); err == nil {
		run, err := st.Run(ctx, s.RunID)
		if err != nil {
			return uuid.Nil, err
		}
		if run.ConversationID != id {
			return run.ConversationID, nil
		}
	} else if !errors.Is(err, core.ErrNotFound) {
		return uuid.Nil, err
	}
	return uuid.Nil, nil
}

func (g *graphBuilder) add(n *GraphNode) bool {
	if g.seen[n.ID] {
		return false
	}
	if len(g.nodes) >= maxGraphNodes {
		g.truncated = true
		return false
	}
	g.seen[n.ID] = true
	g.nodes = append(g.nodes, n)
	return true
}

func (g *graphBuilder) edge(from, to, kind, label string) {
	if g.seen[from] && g.seen[to] {
		g.edges = append(g.edges, &GraphEdge{From: from, To: to, Kind: kind, Label: label})
	}
}

// agentName names the agent of id (cached); "" when it has none.
func (g *graphBuilder) agentName(ctx context.Context, id *uuid.UUID) (string, error) {
	if id == nil {
		return "", nil
	}
	if n, ok := g.agents[*id]; ok {
		return n, nil
	}
	n, err := g.a.svc.AgentName(ctx, *id)
	if errors.Is(err, core.ErrNotFound) {
		n, err = "", nil
	}
	if err != nil {
		return "", err
	}
	g.agents[*id] = n
	return n, nil
}

// handledBy adds the agent node of name and the edge from node to it.
func (g *graphBuilder) handledBy(node, name string) {
	if name == "" {
		return
	}
	aid := "agent:" + name
	g.add(&GraphNode{ID: aid, Kind: NodeAgent, Label: name})
	g.edge(node, aid, EdgeHandledBy, "")
}

// pending is a conversation to visit: how it joins the graph.
type pending struct {
	id     uuid.UUID
	kind   string
	parent string // the node it hangs from
	edge   *GraphEdge
	label  string // a side thread's or task's own words
}

// walk visits the tree from top, breadth first.
func (g *graphBuilder) walk(ctx context.Context, top uuid.UUID) error {
	queue := []pending{{id: top, kind: NodeConversation}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if g.seen[convNodeID(p.id)] {
			continue
		}
		if ok, err := g.may(p.id); err != nil {
			return err
		} else if !ok {
			continue
		}
		more, err := g.visit(ctx, p)
		if err != nil {
			return err
		}
		queue = append(queue, more...)
	}
	return nil
}

// visit adds one conversation, its runs and steps, and returns the
// conversations that hang from it.
func (g *graphBuilder) visit(ctx context.Context, p pending) ([]pending, error) {
	st := g.a.svc
	conv, err := st.Conversation(ctx, p.id)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	agent, err := g.agentName(ctx, conv.AgentID)
	if err != nil {
		return nil, err
	}
	nid := convNodeID(conv.ID)
	label := conv.Title
	if label == "" {
		label = p.label
	}
	if label == "" {
		label = "Conversation " + conv.ID.String()[:8]
	}
	detail := fmt.Sprintf("%d entries", conv.LastSeq)
	if conv.ForkSeq != nil {
		detail = fmt.Sprintf("forked at seq %d · %s", *conv.ForkSeq, detail)
	}
	id := conv.ID
	if !g.add(&GraphNode{ID: nid, Kind: p.kind, Label: clip(label, 60), Status: string(conv.Status), Agent: agent,
		Parent: p.parent, Conversation: &id, Detail: detail}) {
		return nil, nil
	}
	if p.edge != nil {
		g.edge(p.edge.From, p.edge.To, p.edge.Kind, p.edge.Label)
	}
	g.handledBy(nid, agent)

	var next []pending
	forks, err := st.Forks(ctx, conv.ID)
	if err != nil {
		return nil, err
	}
	for _, f := range forks {
		fid := convNodeID(f.ID)
		next = append(next, pending{id: f.ID, kind: NodeFork, parent: nid, edge: &GraphEdge{From: fid, To: nid, Kind: EdgeForkOf}})
	}
	threads, err := st.SideThreads(ctx, conv.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range threads {
		cid := convNodeID(t.ChildID)
		next = append(next, pending{id: t.ChildID, kind: NodeSideThread, parent: nid, label: t.Opener + " ↔ " + t.Peer,
			edge: &GraphEdge{From: cid, To: nid, Kind: EdgeSideThreadOf, Label: string(t.Status)}})
	}
	dels, err := st.Delegations(ctx, conv.ID)
	if err != nil {
		return nil, err
	}
	for _, d := range dels {
		cid := convNodeID(d.ChildID)
		next = append(next, pending{id: d.ChildID, kind: NodeTask, parent: nid, label: d.Task,
			edge: &GraphEdge{From: nid, To: cid, Kind: EdgeDelegatedTo, Label: d.ToAgent}})
	}
	runs, err := st.Runs(ctx, core.RunFilter{Conversation: &id, Limit: 50})
	if err != nil {
		return nil, err
	}
	for _, run := range runs {
		rid := "run:" + run.ID.String()
		runID := run.ID
		label := run.Goal
		if label == "" {
			label = "Run " + runpkg.ShortOf(run.ID)
		}
		if !g.add(&GraphNode{ID: rid, Kind: NodeRun, Label: clip(label, 60), Status: string(run.Status), Agent: run.LeadAgent, Parent: nid, Run: &runID}) {
			continue
		}
		g.edge(rid, nid, EdgeRunOf, "")
		g.handledBy(rid, run.LeadAgent)
		steps, err := st.RunSteps(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		for _, s := range steps {
			sid := "step:" + s.ID.String()
			title := s.Title
			if title == "" {
				title = s.Key
			}
			if !g.add(&GraphNode{ID: sid, Kind: NodeStep, Label: clip(title, 60), Status: string(s.Status), Agent: s.Agent, Parent: rid, Run: &runID,
				Conversation: s.ConversationID, Detail: s.Key}) {
				continue
			}
			g.edge(sid, rid, EdgeStepOf, "")
			g.handledBy(sid, s.Agent)
			if s.ConversationID != nil && *s.ConversationID != conv.ID {
				cid := convNodeID(*s.ConversationID)
				next = append(next, pending{id: *s.ConversationID, kind: NodeTask, parent: sid, label: title,
					edge: &GraphEdge{From: sid, To: cid, Kind: EdgeRunsIn}})
			}
		}
	}
	return next, nil
}

// clip shortens s to n runes, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
