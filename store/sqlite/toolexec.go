package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) ToolExecutionStart(ctx context.Context, p *store.ToolExecutionStartParams) (*store.ToolExecutionStartResult, error) {
	res, err := write(ctx, q, func(t *queries) (*store.ToolExecutionStartResult, error) {
		if err := t.fence(ctx, p.ConversationID, p.LeaseOwner, p.Now); err != nil {
			return nil, err
		}
		r, err := t.tx.ToolExecutionInsert(ctx, dbsqlc.ToolExecutionInsertParams{ConversationID: p.ConversationID, CallID: p.CallID, Now: micros(p.Now)})
		if err == nil {
			return &store.ToolExecutionStartResult{Execution: toolExecution(r), Started: true}, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err // a missing conversation is a foreign key error: ErrNotFound
		}
		// No row back: the call has a marker already.
		r, err = t.tx.ToolExecutionGet(ctx, dbsqlc.ToolExecutionGetParams{ConversationID: p.ConversationID, CallID: p.CallID})
		if err != nil {
			return nil, err
		}
		return &store.ToolExecutionStartResult{Execution: toolExecution(r)}, nil
	})
	if err != nil {
		return nil, wrap(err, "starting tool call %s in %s", p.CallID, p.ConversationID)
	}
	return res, nil
}

func (q *queries) ToolExecutionFinish(ctx context.Context, p *store.ToolExecutionFinishParams) (*store.ToolExecution, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.ToolExecution, error) {
		return t.tx.ToolExecutionFinish(ctx, dbsqlc.ToolExecutionFinishParams{ConversationID: p.ConversationID, CallID: p.CallID, State: string(p.State), Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "finishing tool call %s in %s", p.CallID, p.ConversationID)
	}
	return toolExecution(r), nil
}

func (q *queries) ToolExecutionGet(ctx context.Context, p *store.ToolExecutionGetParams) (*store.ToolExecution, error) {
	r, err := q.read().ToolExecutionGet(ctx, dbsqlc.ToolExecutionGetParams{ConversationID: p.ConversationID, CallID: p.CallID})
	if err != nil {
		return nil, wrap(err, "reading the marker of tool call %s in %s", p.CallID, p.ConversationID)
	}
	return toolExecution(r), nil
}
