package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Side threads and delegations. A missing conversation is a foreign-key
// violation (ErrNotFound), a second row for one child a unique violation
// (ErrConflict); a finish that matched no running row is ErrNotFound here
// and the rules tell a finished row from a missing one.

func (q *queries) SideThreadCreate(ctx context.Context, p *store.SideThreadCreateParams) (*store.SideThread, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).SideThreadInsert, &dbsqlc.SideThreadInsertParams{
		ID: newID(), ParentID: p.ParentID, ParentSeq: p.ParentSeq, ChildID: p.ChildID, Opener: p.Opener, Peer: p.Peer,
		MarkerEntryID: p.MarkerEntryID, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "opening a side thread in %s", p.ParentID)
	}
	return sideThread(&r), nil
}

func (q *queries) SideThreadGet(ctx context.Context, id uuid.UUID) (*store.SideThread, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).SideThreadGet, id)
	if err != nil {
		return nil, wrap(err, "reading side thread %s", id)
	}
	return sideThread(&r), nil
}

func (q *queries) SideThreadFindOpen(ctx context.Context, p *store.SideThreadFindOpenParams) (*store.SideThread, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).SideThreadFindOpen, &dbsqlc.SideThreadFindOpenParams{ParentID: p.ParentID, A: p.A, B: p.B})
	if err != nil {
		return nil, wrap(err, "finding the side thread of %s and %s in %s", p.A, p.B, p.ParentID)
	}
	return sideThread(&r), nil
}

func (q *queries) SideThreadByChild(ctx context.Context, child uuid.UUID) (*store.SideThread, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).SideThreadByChild, child)
	if err != nil {
		return nil, wrap(err, "finding the side thread of conversation %s", child)
	}
	return sideThread(&r), nil
}

func (q *queries) SideThreadList(ctx context.Context, parent uuid.UUID) ([]*store.SideThread, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SideThreadList, parent)
	if err != nil {
		return nil, wrap(err, "listing the side threads of %s", parent)
	}
	return each(rows, sideThread), nil
}

func (q *queries) SideThreadMark(ctx context.Context, p *store.SideThreadMarkParams) (*store.SideThread, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).SideThreadMark, &dbsqlc.SideThreadMarkParams{ID: p.ID, EntryID: &p.EntryID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "recording the marker of side thread %s", p.ID)
	}
	return sideThread(&r), nil
}

func (q *queries) SideThreadProgress(ctx context.Context, p *store.SideThreadProgressParams) (*store.SideThread, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).SideThreadProgress, &dbsqlc.SideThreadProgressParams{ID: p.ID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "noting progress in side thread %s", p.ID)
	}
	return sideThread(&r), nil
}

func (q *queries) SideThreadFinish(ctx context.Context, p *store.SideThreadFinishParams) (*store.SideThread, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).SideThreadFinish, &dbsqlc.SideThreadFinishParams{
		ID: p.ID, Status: string(p.Status), Summary: p.Summary, FinishedBy: p.FinishedBy, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "finishing side thread %s", p.ID)
	}
	return sideThread(&r), nil
}

func (q *queries) SideThreadListStale(ctx context.Context, p *store.SideThreadListStaleParams) ([]*store.SideThread, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SideThreadListStale, &dbsqlc.SideThreadListStaleParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing stale side threads")
	}
	return each(rows, sideThread), nil
}

func (q *queries) DelegationCreate(ctx context.Context, p *store.DelegationCreateParams) (*store.Delegation, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).DelegationInsert, &dbsqlc.DelegationInsertParams{
		ID: newID(), FromConversation: p.FromConversation, FromAgent: p.FromAgent, ToAgent: p.ToAgent, ChildID: p.ChildID,
		Task: p.Task, Factors: p.Factors, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "recording a task for %s from %s", p.ToAgent, p.FromConversation)
	}
	return delegation(&r), nil
}

func (q *queries) DelegationGet(ctx context.Context, id uuid.UUID) (*store.Delegation, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).DelegationGet, id)
	if err != nil {
		return nil, wrap(err, "reading delegation %s", id)
	}
	return delegation(&r), nil
}

func (q *queries) DelegationByChild(ctx context.Context, child uuid.UUID) (*store.Delegation, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).DelegationByChild, child)
	if err != nil {
		return nil, wrap(err, "finding the delegation of conversation %s", child)
	}
	return delegation(&r), nil
}

func (q *queries) DelegationList(ctx context.Context, from uuid.UUID) ([]*store.Delegation, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).DelegationList, from)
	if err != nil {
		return nil, wrap(err, "listing the delegations of %s", from)
	}
	return each(rows, delegation), nil
}

func (q *queries) DelegationFinish(ctx context.Context, p *store.DelegationFinishParams) (*store.Delegation, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).DelegationFinish, &dbsqlc.DelegationFinishParams{
		ID: p.ID, Status: string(p.Status), Result: p.Result, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "finishing delegation %s", p.ID)
	}
	return delegation(&r), nil
}

func (q *queries) DelegationTrackRecords(ctx context.Context) ([]*store.TrackRecord, error) {
	rows, err := call(ctx, q, func(db *dbsqlc.Queries, ctx context.Context, _ struct{}) ([]dbsqlc.DelegationTrackRecordsRow, error) {
		return db.DelegationTrackRecords(ctx)
	}, struct{}{})
	if err != nil {
		return nil, wrap(err, "reading the delegates' track records")
	}
	return each(rows, func(r *dbsqlc.DelegationTrackRecordsRow) *store.TrackRecord {
		return &store.TrackRecord{Agent: r.ToAgent, Delegated: int(r.Delegated), Completed: int(r.Completed), Failed: int(r.Failed)}
	}), nil
}

func (q *queries) AgentLoads(ctx context.Context) ([]*store.AgentLoad, error) {
	rows, err := call(ctx, q, func(db *dbsqlc.Queries, ctx context.Context, _ struct{}) ([]dbsqlc.AgentLoadsRow, error) {
		return db.AgentLoads(ctx)
	}, struct{}{})
	if err != nil {
		return nil, wrap(err, "counting the agents' open work")
	}
	return each(rows, func(r *dbsqlc.AgentLoadsRow) *store.AgentLoad {
		return &store.AgentLoad{AgentID: r.AgentID, OpenWork: int(r.OpenWork), Running: int(r.Running)}
	}), nil
}

func (q *queries) AgentLatencies(ctx context.Context, since time.Time) ([]*store.AgentLatency, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).AgentLatencies, since)
	if err != nil {
		return nil, wrap(err, "measuring the agents' latencies")
	}
	return each(rows, func(r *dbsqlc.AgentLatenciesRow) *store.AgentLatency {
		return &store.AgentLatency{AgentID: r.AgentID, Turns: int(r.Turns), Mean: time.Duration(r.AvgMicros) * time.Microsecond}
	}), nil
}

func sideThread(r *dbsqlc.SideThread) *store.SideThread {
	return &store.SideThread{
		ID: r.ID, ParentID: r.ParentID, ParentSeq: r.ParentSeq, ChildID: r.ChildID, Opener: r.Opener, Peer: r.Peer,
		Status: store.SideThreadStatus(r.Status), Summary: r.Summary, FinishedBy: r.FinishedBy, MarkerEntryID: r.MarkerEntryID,
		ProgressAt: r.ProgressAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

func delegation(r *dbsqlc.Delegation) *store.Delegation {
	return &store.Delegation{
		ID: r.ID, FromConversation: r.FromConversation, FromAgent: r.FromAgent, ToAgent: r.ToAgent, ChildID: r.ChildID,
		Task: r.Task, Factors: r.Factors, Status: store.DelegationStatus(r.Status), Result: r.Result,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt,
	}
}
