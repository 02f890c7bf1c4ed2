package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Participants: who takes part in a conversation, people and agents alike,
// each named by the Author that marks what they write. An agent joins when
// it is addressed, invited or configured for the channel; a person when
// they write. A removed participant keeps its row (RemovedAt set), so a
// channel's configuration does not bring back an agent someone removed.
//
//	(none) ──join──► active ──remove──► removed ──join(Rejoin)──► active
//	                   │  ▲
//	          done ────┘  └──── wake (DoneSeq cleared)
//
// The floor is a conversation's count of consecutive agent messages with
// no person in between: the loop guard reads it, an agent's message adds
// one, a person's message sets it back to zero.

// ParticipantJoin says how a participant came in.
type ParticipantJoin string

const (
	JoinWrote     ParticipantJoin = "wrote"     // a person who wrote in the conversation
	JoinAddressed ParticipantJoin = "addressed" // an agent named in a message
	JoinInvited   ParticipantJoin = "invited"   // an agent added by a command
	JoinChannel   ParticipantJoin = "channel"   // an agent configured for the channel
	JoinRouted    ParticipantJoin = "routed"    // an agent chosen to answer (domains, fallback)
	JoinStarted   ParticipantJoin = "started"   // an agent the conversation was opened for
)

// Valid reports whether j is one of the known ways in.
func (j ParticipantJoin) Valid() bool {
	switch j {
	case JoinWrote, JoinAddressed, JoinInvited, JoinChannel, JoinRouted, JoinStarted:
		return true
	}
	return false
}

// Participant is one person or agent taking part in a conversation.
type Participant struct {
	ConversationID uuid.UUID
	// Author names the participant: UserAuthor for a person, AgentAuthor
	// for an agent.
	Author Author
	Joined ParticipantJoin
	// DoneSeq, when set, is the seq at which the agent said it is done:
	// it is not woken again by its own output or replies to it.
	DoneSeq   *int64
	RemovedAt *time.Time
	JoinedAt  time.Time
	UpdatedAt time.Time
}

// IsAgent reports whether the participant is an agent, and its name.
func (p *Participant) IsAgent() (string, bool) { return p.Author.Agent() }

// Active reports whether the participant has not been removed.
func (p *Participant) Active() bool { return p.RemovedAt == nil }

// ParticipantJoinParams adds a participant, or returns the one there.
type ParticipantJoinParams struct {
	ConversationID uuid.UUID
	Author         Author
	Joined         ParticipantJoin
	// Rejoin brings back a removed participant (an invitation, a direct
	// address); without it a removed one stays removed.
	Rejoin bool
	Now    time.Time
}

// ParticipantRemoveParams marks a participant removed.
type ParticipantRemoveParams struct {
	ConversationID uuid.UUID
	Author         Author
	Now            time.Time
}

// ParticipantSetDoneParams records that an agent is done (DoneSeq set) or
// wakes it (DoneSeq nil).
type ParticipantSetDoneParams struct {
	ConversationID uuid.UUID
	Author         Author
	DoneSeq        *int64
	Now            time.Time
}

// Floor is a conversation's count of consecutive agent messages.
type Floor struct {
	ConversationID uuid.UUID
	// AgentStreak counts agent messages since a person last wrote.
	AgentStreak int
	UpdatedAt   time.Time
}

// FloorParams names the conversation whose floor changes.
type FloorParams struct {
	ConversationID uuid.UUID
	Now            time.Time
}

// ParticipantQueries are the participants' and the floor's reads and writes.
type ParticipantQueries interface {
	// ParticipantJoin adds a participant; one already there is returned as
	// it is (a removed one comes back only with Rejoin). ErrNotFound when
	// the conversation does not exist.
	ParticipantJoin(ctx context.Context, p *ParticipantJoinParams) (*Participant, error)
	// ParticipantList lists a conversation's participants, removed ones
	// included, in the order they joined.
	ParticipantList(ctx context.Context, conversationID uuid.UUID) ([]*Participant, error)
	// ParticipantRemove marks a participant removed; ErrNotFound when it
	// never joined.
	ParticipantRemove(ctx context.Context, p *ParticipantRemoveParams) (*Participant, error)
	// ParticipantSetDone sets or clears DoneSeq; ErrNotFound when the
	// participant never joined.
	ParticipantSetDone(ctx context.Context, p *ParticipantSetDoneParams) (*Participant, error)

	// FloorGet reads the floor; a conversation nobody spoke in yet has a
	// zero streak (not ErrNotFound).
	FloorGet(ctx context.Context, conversationID uuid.UUID) (*Floor, error)
	// FloorAgentSpoke adds one to the streak, in one statement, and
	// returns the floor after.
	FloorAgentSpoke(ctx context.Context, p *FloorParams) (*Floor, error)
	// FloorPersonSpoke sets the streak back to zero.
	FloorPersonSpoke(ctx context.Context, p *FloorParams) (*Floor, error)
}
