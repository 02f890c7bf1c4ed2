package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) sideThreadTests() []namedTest {
	return []namedTest{
		{"SideThreadLifecycle", s.testSideThreadLifecycle},
		{"SideThreadStale", s.testSideThreadStale},
		{"SideThreadInvalid", s.testSideThreadInvalid},
		{"DelegationLifecycle", s.testDelegationLifecycle},
		{"AgentLoads", s.testAgentLoads},
		{"AgentLatencies", s.testAgentLatencies},
	}
}

func (s suite) testSideThreadLifecycle(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	parent := newConversation(t, st, clk)
	child := newConversation(t, st, clk)

	t0 := clk.Now()
	th, err := st.SideThreadCreate(ctx, &store.SideThreadCreateParams{ParentID: parent.ID, ParentSeq: 4, ChildID: child.ID, Opener: "atlas", Peer: "nova", Now: t0})
	noErr(t, err, "opening a side thread")
	eq(t, th.Status, store.SideThreadInProgress, "status of a new side thread")
	eq(t, th.ParentSeq, int64(4), "parent seq")
	eq(t, th.ProgressAt, t0, "progress time of a new side thread")
	isTrue(t, th.MarkerEntryID == nil, "a new side thread has no marker")

	_, err = st.SideThreadCreate(ctx, &store.SideThreadCreateParams{ParentID: parent.ID, ChildID: child.ID, Opener: "atlas", Peer: "nova", Now: t0})
	errIs(t, err, store.ErrConflict, "a second side thread on the same child")
	_, err = st.SideThreadCreate(ctx, &store.SideThreadCreateParams{ParentID: parent.ID, ChildID: uuid.New(), Opener: "atlas", Peer: "nova", Now: t0})
	errIs(t, err, store.ErrNotFound, "a side thread whose child does not exist")

	// Found in progress between the pair, in either order; not for others.
	found, err := st.SideThreadFindOpen(ctx, &store.SideThreadFindOpenParams{ParentID: parent.ID, A: "nova", B: "atlas"})
	noErr(t, err, "finding the side thread in the other order")
	eq(t, found.ID, th.ID, "the side thread found")
	_, err = st.SideThreadFindOpen(ctx, &store.SideThreadFindOpenParams{ParentID: parent.ID, A: "atlas", B: "scout"})
	errIs(t, err, store.ErrNotFound, "a side thread of another pair")
	byChild, err := st.SideThreadByChild(ctx, child.ID)
	noErr(t, err, "finding by child")
	eq(t, byChild.ID, th.ID, "the side thread of the child")
	_, err = st.SideThreadByChild(ctx, parent.ID)
	errIs(t, err, store.ErrNotFound, "the parent is no side thread's child")

	entry := uuid.New()
	marked, err := st.SideThreadMark(ctx, &store.SideThreadMarkParams{ID: th.ID, EntryID: entry, Now: clk.Advance(time.Second)})
	noErr(t, err, "recording the marker")
	isTrue(t, marked.MarkerEntryID != nil && *marked.MarkerEntryID == entry, "the marker entry is recorded")

	t2 := clk.Advance(time.Minute)
	moved, err := st.SideThreadProgress(ctx, &store.SideThreadProgressParams{ID: th.ID, Now: t2})
	noErr(t, err, "noting progress")
	eq(t, moved.ProgressAt, t2, "progress time after progress")
	back, err := st.SideThreadProgress(ctx, &store.SideThreadProgressParams{ID: th.ID, Now: t0})
	noErr(t, err, "noting progress at an earlier time")
	eq(t, back.ProgressAt, t2, "progress time never moves back")

	t3 := clk.Advance(time.Minute)
	done, err := st.SideThreadFinish(ctx, &store.SideThreadFinishParams{ID: th.ID, Status: store.SideThreadResolved, Summary: "agreed on Friday", FinishedBy: "nova", Now: t3})
	noErr(t, err, "resolving")
	eq(t, done.Status, store.SideThreadResolved, "status after resolving")
	eq(t, done.Summary, "agreed on Friday", "summary")
	eq(t, done.FinishedBy, "nova", "who resolved")
	_, err = st.SideThreadFinish(ctx, &store.SideThreadFinishParams{ID: th.ID, Status: store.SideThreadAbandoned, FinishedBy: "system", Now: t3})
	errIs(t, err, store.ErrConflict, "abandoning a resolved side thread")
	_, err = st.SideThreadFinish(ctx, &store.SideThreadFinishParams{ID: uuid.New(), Status: store.SideThreadResolved, FinishedBy: "nova", Now: t3})
	errIs(t, err, store.ErrNotFound, "resolving a side thread that does not exist")
	after, err := st.SideThreadProgress(ctx, &store.SideThreadProgressParams{ID: th.ID, Now: clk.Advance(time.Hour)})
	noErr(t, err, "noting progress after resolving")
	eq(t, after.ProgressAt, t2, "a finished side thread's progress time")
	_, err = st.SideThreadFindOpen(ctx, &store.SideThreadFindOpenParams{ParentID: parent.ID, A: "atlas", B: "nova"})
	errIs(t, err, store.ErrNotFound, "a resolved side thread is not reused")

	list, err := st.SideThreadList(ctx, parent.ID)
	noErr(t, err, "listing the parent's side threads")
	eq(t, len(list), 1, "side threads of the parent")
}

func (s suite) testSideThreadStale(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	parent := newConversation(t, st, clk)
	open := func(peer string) *store.SideThread {
		child := newConversation(t, st, clk)
		th, err := st.SideThreadCreate(ctx, &store.SideThreadCreateParams{ParentID: parent.ID, ChildID: child.ID, Opener: "atlas", Peer: peer, Now: clk.Now()})
		noErr(t, err, "opening a side thread with %s", peer)
		return th
	}
	old := open("nova")
	clk.Advance(20 * time.Minute)
	open("scout") // fresh: not stale
	resolved := open("ledger")
	_, err := st.SideThreadFinish(ctx, &store.SideThreadFinishParams{ID: resolved.ID, Status: store.SideThreadResolved, FinishedBy: "ledger", Now: clk.Now()})
	noErr(t, err, "resolving")

	stale, err := st.SideThreadListStale(ctx, &store.SideThreadListStaleParams{Before: clk.Now().Add(-10 * time.Minute)})
	noErr(t, err, "listing stale side threads")
	eq(t, len(stale), 1, "stale side threads")
	eq(t, stale[0].ID, old.ID, "the stale side thread")

	_, err = st.SideThreadProgress(ctx, &store.SideThreadProgressParams{ID: old.ID, Now: clk.Now()})
	noErr(t, err, "noting progress on the old one")
	stale, err = st.SideThreadListStale(ctx, &store.SideThreadListStaleParams{Before: clk.Now().Add(-10 * time.Minute)})
	noErr(t, err, "listing stale side threads after progress")
	eq(t, len(stale), 0, "stale side threads after progress")
}

func (s suite) testSideThreadInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	parent := newConversation(t, st, clk)
	child := newConversation(t, st, clk)
	for name, p := range map[string]*store.SideThreadCreateParams{
		"no parent":       {ChildID: child.ID, Opener: "a", Peer: "b"},
		"child is parent": {ParentID: parent.ID, ChildID: parent.ID, Opener: "a", Peer: "b"},
		"same agent":      {ParentID: parent.ID, ChildID: child.ID, Opener: "a", Peer: "a"},
		"no peer":         {ParentID: parent.ID, ChildID: child.ID, Opener: "a"},
	} {
		_, err := st.SideThreadCreate(ctx, p)
		errIs(t, err, store.ErrInvalid, "opening a side thread with %s", name)
	}
	_, err := st.SideThreadFinish(ctx, &store.SideThreadFinishParams{ID: uuid.New(), Status: store.SideThreadInProgress, FinishedBy: "a"})
	errIs(t, err, store.ErrInvalid, "finishing as in progress")
	_, err = st.DelegationCreate(ctx, &store.DelegationCreateParams{FromConversation: parent.ID, ChildID: child.ID, FromAgent: "a", ToAgent: "b"})
	errIs(t, err, store.ErrInvalid, "a delegation with no task")
	_, err = st.DelegationFinish(ctx, &store.DelegationFinishParams{ID: uuid.New(), Status: store.DelegationRunning})
	errIs(t, err, store.ErrInvalid, "finishing a delegation as running")
}

func (s suite) testDelegationLifecycle(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	from := newConversation(t, st, clk)
	delegate := func(to string) *store.Delegation {
		child := newConversation(t, st, clk)
		d, err := st.DelegationCreate(ctx, &store.DelegationCreateParams{
			FromConversation: from.ID, FromAgent: "atlas", ToAgent: to, ChildID: child.ID, Task: "check the invoice",
			Factors: json.RawMessage(`{"chosen":"` + to + `"}`), Now: clk.Advance(time.Second),
		})
		noErr(t, err, "delegating to %s", to)
		return d
	}
	d1 := delegate("ledger")
	eq(t, d1.Status, store.DelegationRunning, "status of a new delegation")
	isTrue(t, d1.FinishedAt == nil, "a running delegation has no finish time")
	var factors map[string]string
	noErr(t, json.Unmarshal(d1.Factors, &factors), "decoding the factors")
	eq(t, factors["chosen"], "ledger", "the factors kept")
	got, err := st.DelegationByChild(ctx, d1.ChildID)
	noErr(t, err, "finding by child")
	eq(t, got.ID, d1.ID, "the delegation of the child")
	_, err = st.DelegationCreate(ctx, &store.DelegationCreateParams{FromConversation: from.ID, FromAgent: "atlas", ToAgent: "x", ChildID: d1.ChildID, Task: "t", Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "a second delegation on the same child")

	d2 := delegate("ledger")
	d3 := delegate("forge")
	tEnd := clk.Advance(time.Minute)
	done, err := st.DelegationFinish(ctx, &store.DelegationFinishParams{ID: d1.ID, Status: store.DelegationCompleted, Result: "paid twice; refunded", Now: tEnd})
	noErr(t, err, "completing")
	eq(t, done.Result, "paid twice; refunded", "result")
	isTrue(t, done.FinishedAt != nil && done.FinishedAt.Equal(tEnd), "finish time")
	_, err = st.DelegationFinish(ctx, &store.DelegationFinishParams{ID: d1.ID, Status: store.DelegationFailed, Now: tEnd})
	errIs(t, err, store.ErrConflict, "failing a completed delegation")
	_, err = st.DelegationFinish(ctx, &store.DelegationFinishParams{ID: d3.ID, Status: store.DelegationFailed, Result: "no access", Now: tEnd})
	noErr(t, err, "failing")

	list, err := st.DelegationList(ctx, from.ID)
	noErr(t, err, "listing")
	eq(t, len(list), 3, "delegations from the conversation")
	eq(t, list[1].ID, d2.ID, "the second delegation, in order")

	recs, err := st.DelegationTrackRecords(ctx)
	noErr(t, err, "reading track records")
	deepEq(t, recs, []*store.TrackRecord{
		{Agent: "forge", Delegated: 1, Failed: 1},
		{Agent: "ledger", Delegated: 2, Completed: 1},
	}, "track records by agent")
}

func (s suite) testAgentLoads(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	busy, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "busy", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "registering an agent")
	conv, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{AgentID: &busy.ID, Now: clk.Now()})
	noErr(t, err, "creating the agent's conversation")
	other, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{AgentID: &busy.ID, Now: clk.Now()})
	noErr(t, err, "creating another of its conversations")
	for _, c := range []uuid.UUID{conv.ID, conv.ID, other.ID} {
		_, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &c, Now: clk.Now()})
		noErr(t, err, "enqueueing")
	}
	items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w1", Limit: 1, LeaseTTL: time.Minute, Now: clk.Now()})
	noErr(t, err, "claiming one")
	eq(t, len(items), 1, "claimed items")
	loads, err := st.AgentLoads(ctx)
	noErr(t, err, "counting loads")
	eq(t, len(loads), 1, "agents with open work")
	eq(t, loads[0].AgentID, busy.ID, "the busy agent")
	eq(t, loads[0].OpenWork, 3, "open work of the busy agent")
	eq(t, loads[0].Running, 1, "running work of the busy agent")
	_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "w1", Now: clk.Now()})
	noErr(t, err, "completing")
	loads, err = st.AgentLoads(ctx)
	noErr(t, err, "counting loads after a completion")
	eq(t, loads[0].OpenWork, 2, "open work after a completion")
}

// testAgentLatencies: an agent's latency is the mean time of its finished
// turns that made model calls since a time, queued to done; turns before
// the time, unfinished ones and other kinds are left out.
func (s suite) testAgentLatencies(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	slow, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "slow", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "registering an agent")
	quick, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "quick", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "registering another agent")
	conv, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{AgentID: &slow.ID, Now: clk.Now()})
	noErr(t, err, "creating a conversation")
	since := clk.Now()
	// turn runs one item of kind for agent that takes d, with a model call
	// (a usage row) when called; finish false leaves it running.
	turn := func(kind string, agent uuid.UUID, d time.Duration, called, finish bool) {
		t.Helper()
		_, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind, ConversationID: &conv.ID, Now: clk.Now()})
		noErr(t, err, "enqueueing")
		items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w1", Limit: 1, LeaseTTL: time.Hour, Now: clk.Now()})
		noErr(t, err, "claiming")
		eq(t, len(items), 1, "claimed items")
		clk.Advance(d)
		if called {
			noErr(t, st.UsageRecord(ctx, &store.Usage{ConversationID: conv.ID, TurnID: &items[0].ID, AgentID: &agent,
				Provider: "scripted", Model: "m", InputTokens: 1, CreatedAt: clk.Now()}), "recording usage")
		}
		if finish {
			_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "w1", Now: clk.Now()})
			noErr(t, err, "completing")
		}
	}
	turn("turn", slow.ID, 2*time.Second, true, true)
	turn("turn", slow.ID, 4*time.Second, true, true)
	turn("turn", quick.ID, time.Second, true, true)
	turn("turn", quick.ID, time.Minute, false, true)   // no model call
	turn("deliver", quick.ID, time.Minute, true, true) // not a turn
	turn("turn", quick.ID, time.Minute, true, false)   // still running

	lats, err := st.AgentLatencies(ctx, since)
	noErr(t, err, "measuring")
	got := map[uuid.UUID]*store.AgentLatency{}
	for _, l := range lats {
		got[l.AgentID] = l
	}
	eq(t, len(got), 2, "agents measured")
	eq(t, got[slow.ID].Turns, 2, "slow's turns")
	eq(t, got[slow.ID].Mean, 3*time.Second, "slow's mean")
	eq(t, got[quick.ID].Turns, 1, "quick's turns")
	eq(t, got[quick.ID].Mean, time.Second, "quick's mean")

	lats, err = st.AgentLatencies(ctx, clk.Now().Add(time.Second))
	noErr(t, err, "measuring after every call")
	eq(t, len(lats), 0, "agents measured since after every call")
}
