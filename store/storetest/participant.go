package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) participantTests() []namedTest {
	return []namedTest{
		{"JoinListRemoveRejoin", s.testParticipantsJoin},
		{"Done", s.testParticipantsDone},
		{"Floor", s.testFloor},
		{"Invalid", s.testParticipantsInvalid},
	}
}

func (s suite) testParticipantsJoin(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	other := newConversation(t, st, clk)

	t0 := clk.Now()
	ana, err := st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv.ID, Author: store.UserAuthor("U1"), Joined: store.JoinWrote, Now: t0})
	noErr(t, err, "adding a person")
	eq(t, ana.Joined, store.JoinWrote, "how the person joined")
	eq(t, ana.JoinedAt, t0, "when the person joined")
	_, isAgent := ana.IsAgent()
	eq(t, isAgent, false, "a person is an agent")
	t1 := clk.Advance(time.Second)
	scout, err := st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), Joined: store.JoinAddressed, Now: t1})
	noErr(t, err, "adding an agent")
	name, isAgent := scout.IsAgent()
	eq(t, name, "scout", "the agent's name")
	eq(t, isAgent, true, "an agent is an agent")

	// Joining again changes nothing.
	again, err := st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), Joined: store.JoinChannel, Rejoin: true, Now: clk.Advance(time.Second)})
	noErr(t, err, "adding the agent again")
	eq(t, again.Joined, store.JoinAddressed, "how the agent joined, after joining again")
	eq(t, again.JoinedAt, t1, "when the agent joined, after joining again")

	_, err = st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: other.ID, Author: store.AgentAuthor("atlas"), Joined: store.JoinChannel, Now: clk.Now()})
	noErr(t, err, "adding an agent to another conversation")

	list, err := st.ParticipantList(ctx, conv.ID)
	noErr(t, err, "listing participants")
	eq(t, len(list), 2, "participants of the conversation")
	eq(t, list[0].Author, store.UserAuthor("U1"), "the first to join")
	eq(t, list[1].Author, store.AgentAuthor("scout"), "the second to join")

	t3 := clk.Advance(time.Minute)
	removed, err := st.ParticipantRemove(ctx, &store.ParticipantRemoveParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), Now: t3})
	noErr(t, err, "removing the agent")
	eq(t, removed.Active(), false, "the removed agent is active")
	// Without Rejoin (the channel's configuration) a removed one stays out.
	stay, err := st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), Joined: store.JoinChannel, Now: clk.Advance(time.Second)})
	noErr(t, err, "adding the removed agent without rejoin")
	eq(t, stay.Active(), false, "a removed agent added without rejoin is active")
	// An invitation brings it back.
	t4 := clk.Advance(time.Second)
	back, err := st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), Joined: store.JoinInvited, Rejoin: true, Now: t4})
	noErr(t, err, "inviting the removed agent back")
	eq(t, back.Active(), true, "an invited agent is active")
	eq(t, back.Joined, store.JoinInvited, "how the agent came back")

	_, err = st.ParticipantRemove(ctx, &store.ParticipantRemoveParams{ConversationID: conv.ID, Author: store.AgentAuthor("nobody"), Now: t4})
	errIs(t, err, store.ErrNotFound, "removing an agent that never joined")
	_, err = st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: uuid.New(), Author: store.AgentAuthor("scout"), Joined: store.JoinInvited, Now: t4})
	errIs(t, err, store.ErrNotFound, "adding to a conversation that does not exist")
}

func (s suite) testParticipantsDone(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	_, err := st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), Joined: store.JoinInvited, Now: clk.Now()})
	noErr(t, err, "adding an agent")
	seq := int64(7)
	p, err := st.ParticipantSetDone(ctx, &store.ParticipantSetDoneParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), DoneSeq: &seq, Now: clk.Advance(time.Second)})
	noErr(t, err, "marking the agent done")
	if p.DoneSeq == nil || *p.DoneSeq != 7 {
		t.Fatalf("DoneSeq = %v, want 7", p.DoneSeq)
	}
	list, err := st.ParticipantList(ctx, conv.ID)
	noErr(t, err, "listing participants")
	if list[0].DoneSeq == nil || *list[0].DoneSeq != 7 {
		t.Fatalf("listed DoneSeq = %v, want 7", list[0].DoneSeq)
	}
	p, err = st.ParticipantSetDone(ctx, &store.ParticipantSetDoneParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), Now: clk.Advance(time.Second)})
	noErr(t, err, "waking the agent")
	if p.DoneSeq != nil {
		t.Fatalf("DoneSeq after waking = %d, want none", *p.DoneSeq)
	}
	_, err = st.ParticipantSetDone(ctx, &store.ParticipantSetDoneParams{ConversationID: conv.ID, Author: store.AgentAuthor("atlas"), DoneSeq: &seq, Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "marking done an agent that never joined")
}

func (s suite) testFloor(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	other := newConversation(t, st, clk)

	f, err := st.FloorGet(ctx, conv.ID)
	noErr(t, err, "reading the floor of a quiet conversation")
	eq(t, f.AgentStreak, 0, "the streak of a quiet conversation")
	for i := 1; i <= 3; i++ {
		f, err = st.FloorAgentSpoke(ctx, &store.FloorParams{ConversationID: conv.ID, Now: clk.Advance(time.Second)})
		noErr(t, err, "counting agent message %d", i)
		eq(t, f.AgentStreak, i, "the streak after agent message %d", i)
	}
	_, err = st.FloorAgentSpoke(ctx, &store.FloorParams{ConversationID: other.ID, Now: clk.Now()})
	noErr(t, err, "counting an agent message elsewhere")
	f, err = st.FloorGet(ctx, conv.ID)
	noErr(t, err, "reading the floor")
	eq(t, f.AgentStreak, 3, "the streak, unchanged by another conversation")
	t1 := clk.Advance(time.Second)
	f, err = st.FloorPersonSpoke(ctx, &store.FloorParams{ConversationID: conv.ID, Now: t1})
	noErr(t, err, "counting a person's message")
	eq(t, f.AgentStreak, 0, "the streak after a person wrote")
	eq(t, f.UpdatedAt, t1, "when the floor changed")
	f, err = st.FloorAgentSpoke(ctx, &store.FloorParams{ConversationID: conv.ID, Now: clk.Advance(time.Second)})
	noErr(t, err, "counting an agent message after the person")
	eq(t, f.AgentStreak, 1, "the streak after a person and an agent")
	_, err = st.FloorAgentSpoke(ctx, &store.FloorParams{ConversationID: uuid.New(), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "counting in a conversation that does not exist")
}

func (s suite) testParticipantsInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	_, err := st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv.ID, Author: store.SystemAuthor, Joined: store.JoinWrote})
	errIs(t, err, store.ErrInvalid, "adding the system as a participant")
	_, err = st.ParticipantJoin(ctx, &store.ParticipantJoinParams{ConversationID: conv.ID, Author: store.AgentAuthor("scout"), Joined: "bribed"})
	errIs(t, err, store.ErrInvalid, "adding with an unknown way in")
	seq := int64(1)
	_, err = st.ParticipantSetDone(ctx, &store.ParticipantSetDoneParams{ConversationID: conv.ID, Author: store.UserAuthor("U1"), DoneSeq: &seq})
	errIs(t, err, store.ErrInvalid, "marking a person done")
	_, err = st.FloorAgentSpoke(ctx, &store.FloorParams{})
	errIs(t, err, store.ErrInvalid, "counting without a conversation")
}
