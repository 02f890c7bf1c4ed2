package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// approvals converts rows, decoding their deciders.
func approvals(rows []dbsqlc.Approval, err error) ([]*store.Approval, error) {
	if err != nil {
		return nil, err
	}
	out := make([]*store.Approval, len(rows))
	for i, r := range rows {
		if out[i], err = approval(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// one converts a single approval row.
func one(r dbsqlc.Approval, err error) (*store.Approval, error) {
	if err != nil {
		return nil, err
	}
	return approval(r)
}

func (q *queries) ApprovalCreate(ctx context.Context, p *store.ApprovalCreateParams) (*store.Approval, error) {
	a, err := write(ctx, q, func(t *queries) (*store.Approval, error) {
		return one(t.tx.ApprovalInsert(ctx, dbsqlc.ApprovalInsertParams{
			ID: newID(), ConversationID: p.ConversationID, CallID: p.CallID, Tool: p.Tool,
			Kind: string(p.Kind), Risk: p.Risk, Request: string(p.Request), Deciders: idsArg(p.Deciders),
			ExpiresAt: micros(p.ExpiresAt), Now: micros(p.Now),
		}))
	})
	if err != nil {
		return nil, wrap(err, "creating approval for call %s in %s", p.CallID, p.ConversationID)
	}
	return a, nil
}

func (q *queries) ApprovalGet(ctx context.Context, id uuid.UUID) (*store.Approval, error) {
	a, err := one(q.read().ApprovalGet(ctx, id))
	if err != nil {
		return nil, wrap(err, "getting approval %s", id)
	}
	return a, nil
}

func (q *queries) ApprovalFindByCall(ctx context.Context, p *store.ApprovalFindByCallParams) (*store.Approval, error) {
	a, err := one(q.read().ApprovalFindByCall(ctx, dbsqlc.ApprovalFindByCallParams{ConversationID: p.ConversationID, CallID: p.CallID}))
	if err != nil {
		return nil, wrap(err, "finding approval for call %s in %s", p.CallID, p.ConversationID)
	}
	return a, nil
}

func (q *queries) ApprovalListPending(ctx context.Context, conversationID uuid.UUID) ([]*store.Approval, error) {
	out, err := approvals(q.read().ApprovalListPending(ctx, conversationID))
	if err != nil {
		return nil, wrap(err, "listing pending approvals of %s", conversationID)
	}
	return out, nil
}

func (q *queries) ApprovalDecide(ctx context.Context, p *store.ApprovalDecideParams) (*store.Approval, error) {
	a, err := write(ctx, q, func(t *queries) (*store.Approval, error) {
		a, err := one(t.tx.ApprovalDecide(ctx, dbsqlc.ApprovalDecideParams{
			ID: p.ID, Status: string(p.Status), Decision: jsonArg(p.Decision), DecidedBy: p.DecidedBy, Now: micros(p.Now),
		}))
		if !errors.Is(err, sql.ErrNoRows) {
			return a, err
		}
		cur, gerr := one(t.tx.ApprovalGet(ctx, p.ID))
		switch {
		case gerr != nil:
			return nil, gerr
		case cur.Status != store.ApprovalPending:
			return nil, fmt.Errorf("%w: approval is already %s", store.ErrConflict, cur.Status)
		}
		return nil, fmt.Errorf("%w: approval expired at %s", store.ErrConflict, cur.ExpiresAt.Format(time.RFC3339Nano))
	})
	if err != nil {
		return nil, wrap(err, "deciding approval %s", p.ID)
	}
	return a, nil
}

func (q *queries) ApprovalExpire(ctx context.Context, p *store.ApprovalExpireParams) ([]*store.Approval, error) {
	out, err := write(ctx, q, func(t *queries) ([]*store.Approval, error) {
		return approvals(t.tx.ApprovalExpire(ctx, dbsqlc.ApprovalExpireParams{Now: micros(p.Now), Limit: limitArg(p.Limit)}))
	})
	if err != nil {
		return nil, wrap(err, "expiring approvals")
	}
	// RETURNING has no order; report the oldest expiry first.
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].ExpiresAt.Equal(out[j].ExpiresAt) {
			return out[i].ExpiresAt.Before(out[j].ExpiresAt)
		}
		return out[i].CreatedAt.Before(out[j].CreatedAt)
	})
	return out, nil
}

func (q *queries) ApprovalListVisible(ctx context.Context, p *store.ApprovalListVisibleParams) ([]*store.Approval, error) {
	ws, _ := json.Marshal(p.Workspaces) // UUIDs always encode
	arg := dbsqlc.ApprovalListVisibleParams{WorkspaceIds: string(ws), Limit: limitArg(p.Limit)}
	if p.All {
		arg.AllWorkspaces = 1
	}
	out, err := approvals(q.read().ApprovalListVisible(ctx, arg))
	if err != nil {
		return nil, wrap(err, "listing pending approvals")
	}
	return out, nil
}
