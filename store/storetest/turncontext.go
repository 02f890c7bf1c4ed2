package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) turnContextTests() []namedTest {
	return []namedTest{
		{"TurnContextEmpty", s.testTurnContextEmpty},
		{"TurnContextMatchesSingleReads", s.testTurnContextMatchesSingleReads},
	}
}

// testTurnContextEmpty: a conversation with nothing around it reads as its
// row and nothing else; an unknown one is ErrNotFound.
func (s suite) testTurnContextEmpty(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)

	tc, err := st.TurnContextGet(ctx, c.ID)
	noErr(t, err, "reading the turn context of a bare conversation")
	deepEq(t, tc.Conversation, c, "the conversation")
	isTrue(t, tc.LatestSummary == nil, "a conversation with no summary has none in its turn context")
	eq(t, len(tc.Bindings), 0, "bindings of an unbound conversation")
	isTrue(t, tc.Rulebook == nil, "a conversation with no rulebook has none in its turn context")
	isTrue(t, tc.SideThread == nil, "a conversation that is no side thread's child has none")
	isTrue(t, tc.Delegation == nil, "a conversation no delegation runs in has none")
	isTrue(t, tc.Personality == nil, "a conversation with no agent has no personality")

	_, err = st.TurnContextGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "the turn context of a conversation that does not exist")
}

// testTurnContextMatchesSingleReads: each field is what the single read it
// stands for returns, with every optional row present, and none of another
// conversation's rows; also inside a transaction.
func (s suite) testTurnContextMatchesSingleReads(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()

	agent, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "atlas", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "adding an agent")
	for v := range 2 {
		_, err := st.PersonalityAppend(ctx, &store.PersonalityAppendParams{AgentID: agent.ID, After: v, Text: "version " + jsonInt(int64(v+1)), Author: "config", Now: clk.Advance(time.Second)})
		noErr(t, err, "writing personality version %d", v+1)
	}
	parent := newConversation(t, st, clk)
	p := ensureParams(clk, "C1", "171.1")
	p.Conversation.AgentID = &agent.ID
	bound, err := st.BindingEnsure(ctx, p)
	noErr(t, err, "binding a conversation")
	conv := bound.Binding.ConversationID
	_, err = st.BindingEnsure(ctx, ensureParams(clk, "C2", "172.1"))
	noErr(t, err, "binding another conversation")

	appendN(t, st, clk, conv, 3)
	appendSummary(t, st, clk, conv, 2)
	appendN(t, st, clk, conv, 1)
	appendSummary(t, st, clk, parent.ID, 0)
	_, err = st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: conv, Text: "be brief", SetBy: "user:u", Now: clk.Now()})
	noErr(t, err, "setting the rulebook")
	_, err = st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: parent.ID, Text: "be long", SetBy: "user:u", Now: clk.Now()})
	noErr(t, err, "setting the parent's rulebook")
	_, err = st.SideThreadCreate(ctx, &store.SideThreadCreateParams{ParentID: parent.ID, ChildID: conv, Opener: "atlas", Peer: "nova", Now: clk.Now()})
	noErr(t, err, "opening a side thread")
	_, err = st.DelegationCreate(ctx, &store.DelegationCreateParams{FromConversation: parent.ID, FromAgent: "atlas", ToAgent: "nova", ChildID: conv, Task: "look", Now: clk.Now()})
	noErr(t, err, "recording a delegation")

	check := func(t *testing.T, q store.Queries) {
		t.Helper()
		tc, err := q.TurnContextGet(ctx, conv)
		noErr(t, err, "reading the turn context")
		want, err := singleReads(ctx, q, conv)
		noErr(t, err, "reading the turn context one read at a time")
		deepEq(t, tc, want, "the turn context against the single reads")
		isTrue(t, tc.LatestSummary != nil && tc.Rulebook != nil && tc.SideThread != nil && tc.Delegation != nil && tc.Personality != nil,
			"every optional row is present")
		eq(t, tc.Personality.Version, 2, "the personality is the current version")
		eq(t, len(tc.Bindings), 1, "the conversation's bindings")
		eq(t, tc.Rulebook.Text, "be brief", "the conversation's own rulebook")

		other, err := q.TurnContextGet(ctx, parent.ID)
		noErr(t, err, "reading the parent's turn context")
		isTrue(t, other.SideThread == nil && other.Delegation == nil, "the parent is no child")
		eq(t, other.Rulebook.Text, "be long", "the parent's own rulebook")
		isTrue(t, other.Personality == nil, "the parent has no agent")
	}
	t.Run("alone", func(t *testing.T) { check(t, st) })
	t.Run("in a transaction", func(t *testing.T) {
		noErr(t, st.InTx(ctx, func(q store.Queries) error { check(t, q); return nil }), "reading in a transaction")
	})
}

// singleReads is the TurnContext the single reads give.
func singleReads(ctx context.Context, q store.Queries, conv uuid.UUID) (*store.TurnContext, error) {
	c, err := q.ConversationGet(ctx, conv)
	if err != nil {
		return nil, err
	}
	tc := &store.TurnContext{Conversation: c}
	if tc.LatestSummary, err = orNil(q.EntryLatestSummary(ctx, conv)); err != nil {
		return nil, err
	}
	if tc.Bindings, err = q.BindingListByConversation(ctx, conv); err != nil {
		return nil, err
	}
	if tc.Rulebook, err = orNil(q.RulebookGet(ctx, conv)); err != nil {
		return nil, err
	}
	if tc.SideThread, err = orNil(q.SideThreadByChild(ctx, conv)); err != nil {
		return nil, err
	}
	if tc.Delegation, err = orNil(q.DelegationByChild(ctx, conv)); err != nil {
		return nil, err
	}
	if c.AgentID != nil {
		if tc.Personality, err = orNil(q.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: *c.AgentID})); err != nil {
			return nil, err
		}
	}
	return tc, nil
}

func orNil[T any](v *T, err error) (*T, error) {
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return v, err
}
