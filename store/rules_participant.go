package store

import (
	"context"

	"github.com/google/uuid"
)

// The participants' rules: every write names a conversation and an author
// that is a person or an agent.

func checkParticipant(conv uuid.UUID, a Author, what string) error {
	_, person := a.User()
	_, agent := a.Agent()
	switch {
	case conv == uuid.Nil:
		return invalidf("%s: ConversationID is required", what)
	case !person && !agent:
		return invalidf("%s: Author %q is neither a person nor an agent", what, a)
	}
	return nil
}

func (q checked) ParticipantJoin(ctx context.Context, p *ParticipantJoinParams) (*Participant, error) {
	if p == nil {
		return nil, invalidf("adding participant: no params")
	}
	if err := checkParticipant(p.ConversationID, p.Author, "adding participant"); err != nil {
		return nil, err
	}
	if !p.Joined.Valid() {
		return nil, invalidf("adding participant %s: Joined %q is not a known way in", p.Author, p.Joined)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ParticipantJoin(ctx, &c)
}

func (q checked) ParticipantList(ctx context.Context, conv uuid.UUID) ([]*Participant, error) {
	if conv == uuid.Nil {
		return nil, invalidf("listing participants: ConversationID is required")
	}
	return q.Queries.ParticipantList(ctx, conv)
}

func (q checked) ParticipantRemove(ctx context.Context, p *ParticipantRemoveParams) (*Participant, error) {
	if p == nil {
		return nil, invalidf("removing participant: no params")
	}
	if err := checkParticipant(p.ConversationID, p.Author, "removing participant"); err != nil {
		return nil, err
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ParticipantRemove(ctx, &c)
}

func (q checked) ParticipantSetDone(ctx context.Context, p *ParticipantSetDoneParams) (*Participant, error) {
	if p == nil {
		return nil, invalidf("marking participant done: no params")
	}
	if err := checkParticipant(p.ConversationID, p.Author, "marking participant done"); err != nil {
		return nil, err
	}
	if _, agent := p.Author.Agent(); !agent {
		return nil, invalidf("marking participant done: %s is not an agent", p.Author)
	}
	if p.DoneSeq != nil && *p.DoneSeq < 0 {
		return nil, invalidf("marking participant %s done: DoneSeq %d is negative", p.Author, *p.DoneSeq)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ParticipantSetDone(ctx, &c)
}

func (q checked) FloorGet(ctx context.Context, conv uuid.UUID) (*Floor, error) {
	if conv == uuid.Nil {
		return nil, invalidf("reading floor: ConversationID is required")
	}
	return q.Queries.FloorGet(ctx, conv)
}

func (q checked) FloorAgentSpoke(ctx context.Context, p *FloorParams) (*Floor, error) {
	if p == nil || p.ConversationID == uuid.Nil {
		return nil, invalidf("counting an agent message: ConversationID is required")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.FloorAgentSpoke(ctx, &c)
}

func (q checked) FloorPersonSpoke(ctx context.Context, p *FloorParams) (*Floor, error) {
	if p == nil || p.ConversationID == uuid.Nil {
		return nil, invalidf("counting a person's message: ConversationID is required")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.FloorPersonSpoke(ctx, &c)
}
