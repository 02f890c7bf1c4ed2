package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// testFeedbackSummary rates replies of two agents in two conversations and
// counts the thumbs by agent and by conversation, since a time.
func (s suite) testFeedbackSummary(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	c1, c2 := newConversation(t, st, clk), newConversation(t, st, clk)
	reply := func(conv uuid.UUID, agent string) uuid.UUID {
		t.Helper()
		r, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: store.EntryAssistant,
			Author: store.AgentAuthor(agent), Content: json.RawMessage(`{"text":"hi"}`), Now: clk.Now()})
		noErr(t, err, "appending a reply of %s", agent)
		return r.Entry.ID
	}
	rate := func(conv, entry uuid.UUID, up bool) {
		t.Helper()
		_, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: store.EntryFeedback,
			Author: store.UserAuthor("U1"), Content: json.RawMessage(fmt.Sprintf(`{"entry_id":%q,"positive":%t,"user_id":"U1","platform":"slack"}`, entry, up)),
			Now: clk.Now()})
		noErr(t, err, "rating %s", entry)
	}
	a1, s1 := reply(c1.ID, "atlas"), reply(c1.ID, "scout")
	rate(c1.ID, a1, true)
	rate(c1.ID, a1, true)
	rate(c1.ID, s1, false)
	since := clk.Advance(time.Second)
	a2 := reply(c2.ID, "atlas")
	rate(c2.ID, a2, false)

	byAgent, err := st.FeedbackSummary(ctx, &store.FeedbackSummaryParams{By: store.UsageByAgent})
	noErr(t, err, "counting feedback by agent")
	deepEq(t, feedbackTotals(byAgent), []store.FeedbackTotal{{Key: "atlas", Up: 2, Down: 1}, {Key: "scout", Down: 1}}, "feedback by agent, in name order")

	byConv, err := st.FeedbackSummary(ctx, &store.FeedbackSummaryParams{By: store.UsageByConversation})
	noErr(t, err, "counting feedback by conversation")
	deepEq(t, feedbackTotals(byConv), []store.FeedbackTotal{{Key: c1.ID.String(), Up: 2, Down: 1}, {Key: c2.ID.String(), Down: 1}}, "feedback by conversation, most rated first")

	recent, err := st.FeedbackSummary(ctx, &store.FeedbackSummaryParams{By: store.UsageByAgent, Since: since})
	noErr(t, err, "counting recent feedback")
	deepEq(t, feedbackTotals(recent), []store.FeedbackTotal{{Key: "atlas", Down: 1}}, "feedback since the second conversation")

	_, err = st.FeedbackSummary(ctx, &store.FeedbackSummaryParams{By: store.UsageByDay})
	errIs(t, err, store.ErrInvalid, "counting feedback by day")
}

func feedbackTotals(rows []*store.FeedbackTotal) []store.FeedbackTotal {
	out := []store.FeedbackTotal{}
	for _, r := range rows {
		out = append(out, *r)
	}
	return out
}

// testBindingMove points a thread's binding at a fork: finding the place
// gives the fork, with the cursor where the move put it, and an unknown
// binding is ErrNotFound.
func (s suite) testBindingMove(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	ens, err := st.BindingEnsure(ctx, ensureParams(clk, "C1", "1.0"))
	noErr(t, err, "ensuring a binding")
	_, err = st.BindingAdvance(ctx, &store.BindingAdvanceParams{ID: ens.Binding.ID, DeliveredSeq: 9, Now: clk.Now()})
	noErr(t, err, "advancing the binding")
	fork := newConversation(t, st, clk)
	moved, err := st.BindingMove(ctx, &store.BindingMoveParams{ID: ens.Binding.ID, ConversationID: fork.ID, DeliveredSeq: 3, Now: clk.Advance(time.Second)})
	noErr(t, err, "moving the binding")
	eq(t, moved.ConversationID, fork.ID, "the moved binding's conversation")
	eq(t, moved.DeliveredSeq, int64(3), "the moved binding's cursor (set back to the fork point)")
	found, err := st.BindingFind(ctx, &store.BindingFindParams{Place: ens.Binding.Place})
	noErr(t, err, "finding the place")
	eq(t, found.ConversationID, fork.ID, "the place's conversation after the move")
	list, err := st.BindingListByConversation(ctx, ens.Binding.ConversationID)
	noErr(t, err, "listing the old conversation's bindings")
	eq(t, len(list), 0, "bindings left on the old conversation")
	_, err = st.BindingMove(ctx, &store.BindingMoveParams{ID: uuid.New(), ConversationID: fork.ID, Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "moving an unknown binding")
}

// testBindingRelocate moves a run's binding to the thread under its post:
// the thread finds the run's conversation, the run's own place no longer
// does, and a place bound already is ErrConflict.
func (s suite) testBindingRelocate(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	p := ensureParams(clk, "C1", "")
	p.Place.Run = "run-1"
	run, err := st.BindingEnsure(ctx, p)
	noErr(t, err, "ensuring a run's binding")
	thread := store.Place{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "1700.1"}
	moved, err := st.BindingRelocate(ctx, &store.BindingRelocateParams{ID: run.Binding.ID, Place: thread, Now: clk.Advance(time.Second)})
	noErr(t, err, "relocating the run's binding")
	deepEq(t, moved.Place, thread, "the relocated binding's place")
	found, err := st.BindingFind(ctx, &store.BindingFindParams{Place: thread})
	noErr(t, err, "finding the thread")
	eq(t, found.ConversationID, run.Binding.ConversationID, "the thread's conversation (the run's)")
	_, err = st.BindingFind(ctx, &store.BindingFindParams{Place: p.Place})
	errIs(t, err, store.ErrNotFound, "finding the run's old place")

	other, err := st.BindingEnsure(ctx, ensureParams(clk, "C1", "1800.1"))
	noErr(t, err, "ensuring another binding")
	_, err = st.BindingRelocate(ctx, &store.BindingRelocateParams{ID: other.Binding.ID, Place: thread, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "relocating onto a bound place")
}
