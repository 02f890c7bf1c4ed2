package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) ParticipantJoin(ctx context.Context, p *store.ParticipantJoinParams) (*store.Participant, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).ParticipantJoin, &dbsqlc.ParticipantJoinParams{
		ConversationID: p.ConversationID, Author: string(p.Author), Joined: string(p.Joined), Rejoin: p.Rejoin, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "adding %s to conversation %s", p.Author, p.ConversationID)
	}
	return participant(&r), nil
}

func (q *queries) ParticipantList(ctx context.Context, conv uuid.UUID) ([]*store.Participant, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ParticipantList, conv)
	if err != nil {
		return nil, wrap(err, "listing participants of %s", conv)
	}
	return each(rows, participant), nil
}

func (q *queries) ParticipantRemove(ctx context.Context, p *store.ParticipantRemoveParams) (*store.Participant, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).ParticipantRemove, &dbsqlc.ParticipantRemoveParams{
		ConversationID: p.ConversationID, Author: string(p.Author), Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "removing %s from conversation %s", p.Author, p.ConversationID)
	}
	return participant(&r), nil
}

func (q *queries) ParticipantSetDone(ctx context.Context, p *store.ParticipantSetDoneParams) (*store.Participant, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).ParticipantSetDone, &dbsqlc.ParticipantSetDoneParams{
		ConversationID: p.ConversationID, Author: string(p.Author), DoneSeq: p.DoneSeq, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "marking %s done in conversation %s", p.Author, p.ConversationID)
	}
	return participant(&r), nil
}

func (q *queries) FloorGet(ctx context.Context, conv uuid.UUID) (*store.Floor, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).FloorGet, conv)
	if errors.Is(err, errNoRow) {
		return &store.Floor{ConversationID: conv}, nil
	}
	if err != nil {
		return nil, wrap(err, "reading the floor of %s", conv)
	}
	return floor(&r), nil
}

func (q *queries) FloorAgentSpoke(ctx context.Context, p *store.FloorParams) (*store.Floor, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).FloorAgentSpoke, &dbsqlc.FloorAgentSpokeParams{ConversationID: p.ConversationID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "counting an agent message in %s", p.ConversationID)
	}
	return floor(&r), nil
}

func (q *queries) FloorPersonSpoke(ctx context.Context, p *store.FloorParams) (*store.Floor, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).FloorPersonSpoke, &dbsqlc.FloorPersonSpokeParams{ConversationID: p.ConversationID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "counting a person's message in %s", p.ConversationID)
	}
	return floor(&r), nil
}

func participant(r *dbsqlc.Participant) *store.Participant {
	return &store.Participant{
		ConversationID: r.ConversationID, Author: store.Author(r.Author), Joined: store.ParticipantJoin(r.Joined),
		DoneSeq: r.DoneSeq, RemovedAt: r.RemovedAt, JoinedAt: r.JoinedAt, UpdatedAt: r.UpdatedAt,
	}
}

func floor(r *dbsqlc.ConversationFloor) *store.Floor {
	return &store.Floor{ConversationID: r.ConversationID, AgentStreak: int(r.AgentStreak), UpdatedAt: r.UpdatedAt}
}
