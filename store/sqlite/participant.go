package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) ParticipantJoin(ctx context.Context, p *store.ParticipantJoinParams) (*store.Participant, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Participant, error) {
		key := dbsqlc.ParticipantGetParams{ConversationID: p.ConversationID, Author: string(p.Author)}
		if err := t.tx.ParticipantInsert(ctx, dbsqlc.ParticipantInsertParams{
			ConversationID: p.ConversationID, Author: string(p.Author), Joined: string(p.Joined), Now: micros(p.Now),
		}); err != nil {
			return dbsqlc.Participant{}, err
		}
		if p.Rejoin {
			if err := t.tx.ParticipantRejoin(ctx, dbsqlc.ParticipantRejoinParams{
				ConversationID: p.ConversationID, Author: string(p.Author), Joined: string(p.Joined), Now: micros(p.Now),
			}); err != nil {
				return dbsqlc.Participant{}, err
			}
		}
		return t.tx.ParticipantGet(ctx, key)
	})
	if err != nil {
		return nil, wrap(err, "adding %s to conversation %s", p.Author, p.ConversationID)
	}
	return participantOf(r), nil
}

func (q *queries) ParticipantList(ctx context.Context, conv uuid.UUID) ([]*store.Participant, error) {
	rows, err := q.read().ParticipantList(ctx, conv)
	if err != nil {
		return nil, wrap(err, "listing participants of %s", conv)
	}
	out := make([]*store.Participant, len(rows))
	for i, r := range rows {
		out[i] = participantOf(r)
	}
	return out, nil
}

func (q *queries) ParticipantRemove(ctx context.Context, p *store.ParticipantRemoveParams) (*store.Participant, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Participant, error) {
		return t.tx.ParticipantRemove(ctx, dbsqlc.ParticipantRemoveParams{
			ConversationID: p.ConversationID, Author: string(p.Author), Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "removing %s from conversation %s", p.Author, p.ConversationID)
	}
	return participantOf(r), nil
}

func (q *queries) ParticipantSetDone(ctx context.Context, p *store.ParticipantSetDoneParams) (*store.Participant, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Participant, error) {
		done := sql.NullInt64{}
		if p.DoneSeq != nil {
			done = sql.NullInt64{Int64: *p.DoneSeq, Valid: true}
		}
		return t.tx.ParticipantSetDone(ctx, dbsqlc.ParticipantSetDoneParams{
			ConversationID: p.ConversationID, Author: string(p.Author), DoneSeq: done, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "marking %s done in conversation %s", p.Author, p.ConversationID)
	}
	return participantOf(r), nil
}

func (q *queries) FloorGet(ctx context.Context, conv uuid.UUID) (*store.Floor, error) {
	r, err := q.read().FloorGet(ctx, conv)
	if errors.Is(err, sql.ErrNoRows) {
		return &store.Floor{ConversationID: conv}, nil
	}
	if err != nil {
		return nil, wrap(err, "reading the floor of %s", conv)
	}
	return floorOf(r), nil
}

func (q *queries) FloorAgentSpoke(ctx context.Context, p *store.FloorParams) (*store.Floor, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.ConversationFloor, error) {
		return t.tx.FloorAgentSpoke(ctx, dbsqlc.FloorAgentSpokeParams{ConversationID: p.ConversationID, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "counting an agent message in %s", p.ConversationID)
	}
	return floorOf(r), nil
}

func (q *queries) FloorPersonSpoke(ctx context.Context, p *store.FloorParams) (*store.Floor, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.ConversationFloor, error) {
		return t.tx.FloorPersonSpoke(ctx, dbsqlc.FloorPersonSpokeParams{ConversationID: p.ConversationID, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "counting a person's message in %s", p.ConversationID)
	}
	return floorOf(r), nil
}

func participantOf(r dbsqlc.Participant) *store.Participant {
	p := &store.Participant{
		ConversationID: r.ConversationID, Author: store.Author(r.Author), Joined: store.ParticipantJoin(r.Joined),
		RemovedAt: nullMicros(r.RemovedAt), JoinedAt: fromMicros(r.JoinedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
	if r.DoneSeq.Valid {
		p.DoneSeq = &r.DoneSeq.Int64
	}
	return p
}

func floorOf(r dbsqlc.ConversationFloor) *store.Floor {
	return &store.Floor{ConversationID: r.ConversationID, AgentStreak: int(r.AgentStreak), UpdatedAt: fromMicros(r.UpdatedAt)}
}
