package sqlite

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Side threads and delegations. Both conversations are checked to exist
// first (ErrNotFound), and a second row for one child is a unique
// violation (ErrConflict); a finish that matched no running row is
// ErrNotFound here and the rules tell a finished row from a missing one.

func (q *queries) SideThreadCreate(ctx context.Context, p *store.SideThreadCreateParams) (*store.SideThread, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SideThread, error) {
		if err := t.bothExist(ctx, p.ParentID, p.ChildID); err != nil {
			return dbsqlc.SideThread{}, err
		}
		return t.tx.SideThreadInsert(ctx, dbsqlc.SideThreadInsertParams{
			ID: newID(), ParentID: p.ParentID, ParentSeq: p.ParentSeq, ChildID: p.ChildID, Opener: p.Opener, Peer: p.Peer,
			MarkerEntryID: uuidArg(p.MarkerEntryID), Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "opening a side thread in %s", p.ParentID)
	}
	return sideThreadOf(r), nil
}

// bothExist checks a parent and a child conversation.
func (q *queries) bothExist(ctx context.Context, a, b uuid.UUID) error {
	if err := q.mustExist(ctx, a); err != nil {
		return err
	}
	return q.mustExist(ctx, b)
}

func (q *queries) SideThreadGet(ctx context.Context, id uuid.UUID) (*store.SideThread, error) {
	r, err := q.read().SideThreadGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading side thread %s", id)
	}
	return sideThreadOf(r), nil
}

func (q *queries) SideThreadFindOpen(ctx context.Context, p *store.SideThreadFindOpenParams) (*store.SideThread, error) {
	r, err := q.read().SideThreadFindOpen(ctx, dbsqlc.SideThreadFindOpenParams{ParentID: p.ParentID, A: p.A, B: p.B})
	if err != nil {
		return nil, wrap(err, "finding the side thread of %s and %s in %s", p.A, p.B, p.ParentID)
	}
	return sideThreadOf(r), nil
}

func (q *queries) SideThreadByChild(ctx context.Context, child uuid.UUID) (*store.SideThread, error) {
	r, err := q.read().SideThreadByChild(ctx, child)
	if err != nil {
		return nil, wrap(err, "finding the side thread of conversation %s", child)
	}
	return sideThreadOf(r), nil
}

func (q *queries) SideThreadList(ctx context.Context, parent uuid.UUID) ([]*store.SideThread, error) {
	rows, err := q.read().SideThreadList(ctx, parent)
	out, err := all(rows, err, sideThreadOf)
	if err != nil {
		return nil, wrap(err, "listing the side threads of %s", parent)
	}
	return out, nil
}

func (q *queries) SideThreadMark(ctx context.Context, p *store.SideThreadMarkParams) (*store.SideThread, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SideThread, error) {
		return t.tx.SideThreadMark(ctx, dbsqlc.SideThreadMarkParams{ID: p.ID, EntryID: uuidArg(&p.EntryID), Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "recording the marker of side thread %s", p.ID)
	}
	return sideThreadOf(r), nil
}

func (q *queries) SideThreadProgress(ctx context.Context, p *store.SideThreadProgressParams) (*store.SideThread, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SideThread, error) {
		return t.tx.SideThreadProgress(ctx, dbsqlc.SideThreadProgressParams{ID: p.ID, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "noting progress in side thread %s", p.ID)
	}
	return sideThreadOf(r), nil
}

func (q *queries) SideThreadFinish(ctx context.Context, p *store.SideThreadFinishParams) (*store.SideThread, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SideThread, error) {
		return t.tx.SideThreadFinish(ctx, dbsqlc.SideThreadFinishParams{
			ID: p.ID, Status: string(p.Status), Summary: p.Summary, FinishedBy: p.FinishedBy, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "finishing side thread %s", p.ID)
	}
	return sideThreadOf(r), nil
}

func (q *queries) SideThreadListStale(ctx context.Context, p *store.SideThreadListStaleParams) ([]*store.SideThread, error) {
	rows, err := q.read().SideThreadListStale(ctx, dbsqlc.SideThreadListStaleParams{Before: micros(p.Before), MaxRows: limitArg(p.Limit)})
	out, err := all(rows, err, sideThreadOf)
	if err != nil {
		return nil, wrap(err, "listing stale side threads")
	}
	return out, nil
}

func (q *queries) DelegationCreate(ctx context.Context, p *store.DelegationCreateParams) (*store.Delegation, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Delegation, error) {
		if err := t.bothExist(ctx, p.FromConversation, p.ChildID); err != nil {
			return dbsqlc.Delegation{}, err
		}
		return t.tx.DelegationInsert(ctx, dbsqlc.DelegationInsertParams{
			ID: newID(), FromConversation: p.FromConversation, FromAgent: p.FromAgent, ToAgent: p.ToAgent, ChildID: p.ChildID,
			Task: p.Task, Factors: string(p.Factors), Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "recording a task for %s from %s", p.ToAgent, p.FromConversation)
	}
	return delegationOf(r), nil
}

func (q *queries) DelegationGet(ctx context.Context, id uuid.UUID) (*store.Delegation, error) {
	r, err := q.read().DelegationGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading delegation %s", id)
	}
	return delegationOf(r), nil
}

func (q *queries) DelegationByChild(ctx context.Context, child uuid.UUID) (*store.Delegation, error) {
	r, err := q.read().DelegationByChild(ctx, child)
	if err != nil {
		return nil, wrap(err, "finding the delegation of conversation %s", child)
	}
	return delegationOf(r), nil
}

func (q *queries) DelegationList(ctx context.Context, from uuid.UUID) ([]*store.Delegation, error) {
	rows, err := q.read().DelegationList(ctx, from)
	out, err := all(rows, err, delegationOf)
	if err != nil {
		return nil, wrap(err, "listing the delegations of %s", from)
	}
	return out, nil
}

func (q *queries) DelegationFinish(ctx context.Context, p *store.DelegationFinishParams) (*store.Delegation, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Delegation, error) {
		return t.tx.DelegationFinish(ctx, dbsqlc.DelegationFinishParams{ID: p.ID, Status: string(p.Status), Result: p.Result, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "finishing delegation %s", p.ID)
	}
	return delegationOf(r), nil
}

func (q *queries) DelegationTrackRecords(ctx context.Context) ([]*store.TrackRecord, error) {
	rows, err := q.read().DelegationTrackRecords(ctx)
	out, err := all(rows, err, func(r dbsqlc.DelegationTrackRecordsRow) *store.TrackRecord {
		return &store.TrackRecord{Agent: r.ToAgent, Delegated: int(r.Delegated), Completed: int(r.Completed), Failed: int(r.Failed)}
	})
	if err != nil {
		return nil, wrap(err, "reading the delegates' track records")
	}
	return out, nil
}

func (q *queries) AgentLoads(ctx context.Context) ([]*store.AgentLoad, error) {
	rows, err := q.read().AgentLoads(ctx)
	out, err := all(rows, err, func(r dbsqlc.AgentLoadsRow) *store.AgentLoad {
		return &store.AgentLoad{AgentID: r.AgentID.UUID, OpenWork: int(r.OpenWork), Running: int(r.Running)}
	})
	if err != nil {
		return nil, wrap(err, "counting the agents' open work")
	}
	return out, nil
}

func (q *queries) AgentLatencies(ctx context.Context, since time.Time) ([]*store.AgentLatency, error) {
	rows, err := q.read().AgentLatencies(ctx, micros(since))
	out, err := all(rows, err, func(r dbsqlc.AgentLatenciesRow) *store.AgentLatency {
		return &store.AgentLatency{AgentID: r.AgentID.UUID, Turns: int(r.Turns), Mean: time.Duration(r.AvgMicros) * time.Microsecond}
	})
	if err != nil {
		return nil, wrap(err, "measuring the agents' latencies")
	}
	return out, nil
}

func sideThreadOf(r dbsqlc.SideThread) *store.SideThread {
	return &store.SideThread{
		ID: r.ID, ParentID: r.ParentID, ParentSeq: r.ParentSeq, ChildID: r.ChildID, Opener: r.Opener, Peer: r.Peer,
		Status: store.SideThreadStatus(r.Status), Summary: r.Summary, FinishedBy: r.FinishedBy, MarkerEntryID: nullUUID(r.MarkerEntryID),
		ProgressAt: fromMicros(r.ProgressAt), CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func delegationOf(r dbsqlc.Delegation) *store.Delegation {
	return &store.Delegation{
		ID: r.ID, FromConversation: r.FromConversation, FromAgent: r.FromAgent, ToAgent: r.ToAgent, ChildID: r.ChildID,
		Task: r.Task, Factors: []byte(r.Factors), Status: store.DelegationStatus(r.Status), Result: r.Result,
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt), FinishedAt: nullMicros(r.FinishedAt),
	}
}
