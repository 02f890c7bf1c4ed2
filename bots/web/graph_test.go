package web_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

type graphOut struct {
	Conversation uuid.UUID `json:"conversation"`
	Top          string    `json:"top"`
	Nodes        []struct {
		ID           string     `json:"id"`
		Kind         string     `json:"kind"`
		Label        string     `json:"label"`
		Parent       string     `json:"parent"`
		Agent        string     `json:"agent"`
		Conversation *uuid.UUID `json:"conversation"`
		Run          *uuid.UUID `json:"run"`
	} `json:"nodes"`
	Edges []struct {
		From, To, Kind, Label string
	} `json:"edges"`
	Truncated bool `json:"truncated"`
}

func (g *graphOut) kinds() map[string]string {
	out := map[string]string{}
	for _, n := range g.Nodes {
		out[n.ID] = n.Kind
	}
	return out
}

func (g *graphOut) edgeList() []string {
	var out []string
	for _, e := range g.Edges {
		out = append(out, e.Kind+" "+e.From+" "+e.To)
	}
	sort.Strings(out)
	return out
}

// The work graph around a conversation: its fork, a side thread, a
// delegated task, a run with a step working in a conversation of its own,
// and the agents on them. Asked from any conversation of the tree, the
// graph is the same; a delegated task in a workspace the caller does not
// share is left out; a person who may not see the conversation gets 404.
func TestWorkGraphThroughTheAPI(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		pp := startWithPeople(t, st)
		ctx := context.Background()
		ana, bo := uuid.New(), uuid.New()
		root := pp.newConv(t, ana, "")
		pp.as(t, ana, "POST", "/api/conversations/"+root.String()+"/messages", `{"text":"plan the launch"}`, http.StatusAccepted, nil)
		waitStatus(t, st, root, store.ConversationIdle)
		var fork struct {
			ConversationID uuid.UUID `json:"conversation_id"`
		}
		pp.as(t, ana, "POST", "/api/conversations/"+root.String()+"/fork", `{"seq":1,"content":"plan the launch, for Friday"}`, http.StatusCreated, &fork)
		if fork.ConversationID == uuid.Nil {
			t.Fatal("the fork answered no conversation id")
		}
		side := pp.newConv(t, ana, "")
		task := pp.newConv(t, ana, "")
		stepConv := pp.newConv(t, ana, "")
		hidden := pp.newConv(t, bo, "") // bo's own workspace: not ana's to see
		now := newClock().Now()
		if _, err := st.SideThreadCreate(ctx, &store.SideThreadCreateParams{ParentID: root, ParentSeq: 1, ChildID: side, Opener: "atlas", Peer: "scout", Now: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DelegationCreate(ctx, &store.DelegationCreateParams{FromConversation: root, FromAgent: "atlas", ToAgent: "writer", ChildID: task, Task: "draft the post", Now: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DelegationCreate(ctx, &store.DelegationCreateParams{FromConversation: root, FromAgent: "atlas", ToAgent: "spy", ChildID: hidden, Task: "secret", Now: now}); err != nil {
			t.Fatal(err)
		}
		run, err := st.RunCreate(ctx, &store.RunCreateParams{ConversationID: fork.ConversationID, LeadAgent: "atlas", Goal: "ship it", Now: now,
			Steps: []store.RunStepSpec{{Key: "build", Title: "Build it", Agent: "builder", Class: "default"}, {Key: "test", Title: "Test it", Agent: "tester", Class: "default", DependsOn: []string{"build"}}}})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := st.RunStepList(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.RunStepStart(ctx, &store.RunStepStartParams{ID: steps[0].ID, ConversationID: stepConv, Model: "scripted", Now: now}); err != nil {
			t.Fatal(err)
		}

		conv := func(id uuid.UUID) string { return "conversation:" + id.String() }
		runN, step0, step1 := "run:"+run.ID.String(), "step:"+steps[0].ID.String(), "step:"+steps[1].ID.String()
		var g graphOut
		pp.as(t, ana, "GET", "/api/graph?c="+root.String(), "", http.StatusOK, &g)
		if g.Top != conv(root) || g.Truncated {
			t.Fatalf("top %s truncated %v, want %s", g.Top, g.Truncated, conv(root))
		}
		wantKinds := map[string]string{
			conv(root): "conversation", conv(fork.ConversationID): "fork", conv(side): "side_thread", conv(task): "task",
			runN: "run", step0: "step", step1: "step", conv(stepConv): "task", "agent:atlas": "agent",
			"agent:builder": "agent", "agent:tester": "agent",
		}
		got := g.kinds()
		for id, k := range wantKinds {
			if got[id] != k {
				t.Errorf("node %s: want kind %q, got %q", id, k, got[id])
			}
		}
		if _, ok := got[conv(hidden)]; ok {
			t.Errorf("bo's conversation is in ana's graph: %v", got)
		}
		for id := range got {
			if _, ok := wantKinds[id]; !ok {
				t.Errorf("unexpected node %s (%s)", id, got[id])
			}
		}
		wantEdges := []string{
			"delegated-to " + conv(root) + " " + conv(task),
			"fork-of " + conv(fork.ConversationID) + " " + conv(root),
			"handled-by " + conv(fork.ConversationID) + " agent:atlas",
			"handled-by " + conv(root) + " agent:atlas",
			"handled-by " + conv(side) + " agent:atlas",
			"handled-by " + conv(stepConv) + " agent:atlas",
			"handled-by " + conv(task) + " agent:atlas",
			"handled-by " + runN + " agent:atlas",
			"handled-by " + step0 + " agent:builder",
			"handled-by " + step1 + " agent:tester",
			"run-of " + runN + " " + conv(fork.ConversationID),
			"runs-in " + step0 + " " + conv(stepConv),
			"side-thread-of " + conv(side) + " " + conv(root),
			"step-of " + step0 + " " + runN,
			"step-of " + step1 + " " + runN,
		}
		sort.Strings(wantEdges)
		if ge := g.edgeList(); strings.Join(ge, "\n") != strings.Join(wantEdges, "\n") {
			t.Fatalf("edges:\n%s\nwant:\n%s", strings.Join(ge, "\n"), strings.Join(wantEdges, "\n"))
		}
		for _, n := range g.Nodes {
			switch {
			case n.Kind == "run" && (n.Run == nil || *n.Run != run.ID):
				t.Errorf("the run node must name its run: %+v", n)
			case n.Kind == "fork" && n.Parent != conv(root):
				t.Errorf("the fork hangs from the root: %+v", n)
			case n.ID == conv(stepConv) && n.Parent != step0:
				t.Errorf("the step's conversation hangs from the step: %+v", n)
			}
		}

		// From the step's conversation the walk climbs to the same top.
		var g2 graphOut
		pp.as(t, ana, "GET", "/api/graph?c="+stepConv.String(), "", http.StatusOK, &g2)
		if g2.Top != conv(root) || strings.Join(g2.edgeList(), "\n") != strings.Join(wantEdges, "\n") {
			t.Fatalf("the graph from the step's conversation: top %s, edges %v", g2.Top, g2.edgeList())
		}
		// The operator sees bo's delegated task too.
		var g3 graphOut
		pp.as(t, uuid.Nil, "GET", "/api/graph?c="+root.String(), "", http.StatusOK, &g3)
		if g3.kinds()[conv(hidden)] != "task" {
			t.Fatalf("the operator's graph lacks the delegated task in bo's workspace: %v", g3.kinds())
		}
		// Bo may not see ana's conversation, nor learn it exists.
		pp.as(t, bo, "GET", "/api/graph?c="+root.String(), "", http.StatusNotFound, nil)
		// Bo's own conversation climbs no further than what bo may see.
		var g4 graphOut
		pp.as(t, bo, "GET", "/api/graph?c="+hidden.String(), "", http.StatusOK, &g4)
		if g4.Top != conv(hidden) || len(g4.Nodes) != 2 {
			t.Fatalf("bo's graph must hold only bo's conversation and its agent: %+v", g4)
		}
		pp.as(t, ana, "GET", "/api/graph", "", http.StatusBadRequest, nil)
		pp.as(t, ana, "GET", "/api/graph?c=nope", "", http.StatusBadRequest, nil)
	})
}
