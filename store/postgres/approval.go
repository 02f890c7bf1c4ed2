package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) ApprovalCreate(ctx context.Context, p *store.ApprovalCreateParams) (*store.Approval, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ApprovalCreate, &dbsqlc.ApprovalCreateParams{
		ID: newID(), ConversationID: p.ConversationID, CallID: p.CallID, Tool: p.Tool, Kind: string(p.Kind),
		Risk: p.Risk, Request: p.Request, Deciders: p.Deciders, ExpiresAt: ts(p.ExpiresAt), Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "creating approval for call %s in %s", p.CallID, p.ConversationID)
	}
	return approval(&row), nil
}

func (q *queries) ApprovalGet(ctx context.Context, id uuid.UUID) (*store.Approval, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ApprovalGet, id)
	if err != nil {
		return nil, wrap(err, "getting approval %s", id)
	}
	return approval(&row), nil
}

func (q *queries) ApprovalFindByCall(ctx context.Context, p *store.ApprovalFindByCallParams) (*store.Approval, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ApprovalFindByCall, (*dbsqlc.ApprovalFindByCallParams)(p))
	if err != nil {
		return nil, wrap(err, "finding approval for call %s in %s", p.CallID, p.ConversationID)
	}
	return approval(&row), nil
}

func (q *queries) ApprovalListPending(ctx context.Context, conversationID uuid.UUID) ([]*store.Approval, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ApprovalListPending, conversationID)
	if err != nil {
		return nil, wrap(err, "listing pending approvals of %s", conversationID)
	}
	return each(rows, approval), nil
}

func (q *queries) ApprovalDecide(ctx context.Context, p *store.ApprovalDecideParams) (*store.Approval, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ApprovalDecide, &dbsqlc.ApprovalDecideParams{
		ID: p.ID, Status: string(p.Status), Decision: p.Decision, DecidedBy: p.DecidedBy, Now: ts(p.Now),
	})
	if errors.Is(err, errNoRow) {
		cur, gerr := q.ApprovalGet(ctx, p.ID)
		if gerr != nil {
			return nil, fmt.Errorf("deciding approval %s: %w", p.ID, gerr)
		}
		why := "already " + string(cur.Status)
		if cur.Status == store.ApprovalPending {
			why = "expired"
		}
		return nil, fmt.Errorf("deciding approval %s: %w: %s", p.ID, store.ErrConflict, why)
	}
	if err != nil {
		return nil, wrap(err, "deciding approval %s", p.ID)
	}
	return approval(&row), nil
}

func (q *queries) ApprovalExpire(ctx context.Context, p *store.ApprovalExpireParams) ([]*store.Approval, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ApprovalExpire, &dbsqlc.ApprovalExpireParams{
		Now: ts(p.Now), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "expiring approvals")
	}
	return each(rows, approval), nil
}

func approval(r *dbsqlc.Approval) *store.Approval {
	a := &store.Approval{
		ID:             r.ID,
		ConversationID: r.ConversationID,
		CallID:         r.CallID,
		Tool:           r.Tool,
		Kind:           store.ApprovalKind(r.Kind),
		Risk:           r.Risk,
		Request:        r.Request,
		Deciders:       r.Deciders,
		Status:         store.ApprovalStatus(r.Status),
		Decision:       r.Decision,
		DecidedBy:      r.DecidedBy,
		ExpiresAt:      r.ExpiresAt,
		DecidedAt:      r.DecidedAt,
		CreatedAt:      r.CreatedAt,
	}
	if len(a.Deciders) == 0 {
		a.Deciders = nil // empty means anyone
	}
	return a
}

func (q *queries) ApprovalListVisible(ctx context.Context, p *store.ApprovalListVisibleParams) ([]*store.Approval, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ApprovalListVisible, &dbsqlc.ApprovalListVisibleParams{
		AllWorkspaces: p.All, WorkspaceIds: uuidStrings(p.Workspaces), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing pending approvals")
	}
	return each(rows, approval), nil
}
