package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// The side threads' and delegations' rules: both ends named, two distinct
// agents, a known final status, and a finish of a row already finished is
// ErrConflict (saying how it ended), not ErrNotFound.

func (q checked) SideThreadCreate(ctx context.Context, p *SideThreadCreateParams) (*SideThread, error) {
	switch {
	case p == nil || p.ParentID == uuid.Nil:
		return nil, invalidf("opening a side thread: ParentID is required")
	case p.ChildID == uuid.Nil || p.ChildID == p.ParentID:
		return nil, invalidf("opening a side thread in %s: ChildID must name another conversation", p.ParentID)
	case p.Opener == "" || p.Peer == "":
		return nil, invalidf("opening a side thread in %s: Opener and Peer are required", p.ParentID)
	case p.Opener == p.Peer:
		return nil, invalidf("opening a side thread in %s: Opener and Peer are both %s", p.ParentID, p.Opener)
	case p.ParentSeq < 0:
		return nil, invalidf("opening a side thread in %s: ParentSeq %d is negative", p.ParentID, p.ParentSeq)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.SideThreadCreate(ctx, &c)
}

func (q checked) SideThreadFindOpen(ctx context.Context, p *SideThreadFindOpenParams) (*SideThread, error) {
	if p == nil || p.ParentID == uuid.Nil || p.A == "" || p.B == "" {
		return nil, invalidf("finding a side thread: ParentID, A and B are required")
	}
	return q.Queries.SideThreadFindOpen(ctx, p)
}

func (q checked) SideThreadMark(ctx context.Context, p *SideThreadMarkParams) (*SideThread, error) {
	if p == nil || p.ID == uuid.Nil || p.EntryID == uuid.Nil {
		return nil, invalidf("marking a side thread: ID and EntryID are required")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.SideThreadMark(ctx, &c)
}

func (q checked) SideThreadProgress(ctx context.Context, p *SideThreadProgressParams) (*SideThread, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("noting side thread progress: ID is required")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.SideThreadProgress(ctx, &c)
}

func (q checked) SideThreadFinish(ctx context.Context, p *SideThreadFinishParams) (*SideThread, error) {
	switch {
	case p == nil || p.ID == uuid.Nil:
		return nil, invalidf("finishing a side thread: ID is required")
	case p.Status != SideThreadResolved && p.Status != SideThreadAbandoned:
		return nil, invalidf("finishing side thread %s: Status %q must be resolved or abandoned", p.ID, p.Status)
	case p.FinishedBy == "":
		return nil, invalidf("finishing side thread %s: FinishedBy is required", p.ID)
	}
	c := *p
	c.Now = q.at(c.Now)
	t, err := q.Queries.SideThreadFinish(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		cur, gerr := q.Queries.SideThreadGet(ctx, p.ID)
		if gerr != nil {
			return nil, gerr
		}
		return nil, fmt.Errorf("finishing side thread %s: %w: already %s", p.ID, ErrConflict, cur.Status)
	}
	return t, err
}

func (q checked) SideThreadListStale(ctx context.Context, p *SideThreadListStaleParams) ([]*SideThread, error) {
	if p == nil || p.Before.IsZero() {
		return nil, invalidf("listing stale side threads: Before is required")
	}
	c := *p
	if c.Limit <= 0 {
		c.Limit = DefaultListLimit
	}
	return q.Queries.SideThreadListStale(ctx, &c)
}

func (q checked) DelegationCreate(ctx context.Context, p *DelegationCreateParams) (*Delegation, error) {
	switch {
	case p == nil || p.FromConversation == uuid.Nil:
		return nil, invalidf("recording a delegation: FromConversation is required")
	case p.ChildID == uuid.Nil || p.ChildID == p.FromConversation:
		return nil, invalidf("recording a delegation from %s: ChildID must name another conversation", p.FromConversation)
	case p.FromAgent == "" || p.ToAgent == "":
		return nil, invalidf("recording a delegation from %s: FromAgent and ToAgent are required", p.FromConversation)
	case p.Task == "":
		return nil, invalidf("recording a delegation from %s: Task is empty", p.FromConversation)
	case len(p.Factors) > 0 && !json.Valid(p.Factors):
		return nil, invalidf("recording a delegation from %s: Factors is not JSON", p.FromConversation)
	}
	c := *p
	c.Now = q.at(c.Now)
	if len(c.Factors) == 0 {
		c.Factors = json.RawMessage(`{}`)
	}
	return q.Queries.DelegationCreate(ctx, &c)
}

func (q checked) DelegationFinish(ctx context.Context, p *DelegationFinishParams) (*Delegation, error) {
	switch {
	case p == nil || p.ID == uuid.Nil:
		return nil, invalidf("finishing a delegation: ID is required")
	case p.Status != DelegationCompleted && p.Status != DelegationFailed:
		return nil, invalidf("finishing delegation %s: Status %q must be completed or failed", p.ID, p.Status)
	}
	c := *p
	c.Now = q.at(c.Now)
	d, err := q.Queries.DelegationFinish(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		cur, gerr := q.Queries.DelegationGet(ctx, p.ID)
		if gerr != nil {
			return nil, gerr
		}
		return nil, fmt.Errorf("finishing delegation %s: %w: already %s", p.ID, ErrConflict, cur.Status)
	}
	return d, err
}
