package postgres

import (
	"context"
	"errors"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) ToolExecutionStart(ctx context.Context, p *store.ToolExecutionStartParams) (*store.ToolExecutionStartResult, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ToolExecutionStart, &dbsqlc.ToolExecutionStartParams{
		ConversationID: p.ConversationID, CallID: p.CallID, Now: ts(p.Now), LeaseOwner: p.LeaseOwner,
	})
	if err == nil {
		return &store.ToolExecutionStartResult{Execution: toolExecution(&row), Started: true}, nil
	}
	if errors.Is(err, errNoRow) {
		// Started before, or refused by the fence: the marker tells which.
		row, err = call(ctx, q, (*dbsqlc.Queries).ToolExecutionGet, &dbsqlc.ToolExecutionGetParams{
			ConversationID: p.ConversationID, CallID: p.CallID,
		})
		if err == nil {
			return &store.ToolExecutionStartResult{Execution: toolExecution(&row)}, nil
		}
		if errors.Is(err, errNoRow) {
			return nil, q.fenceErr(ctx, p.ConversationID, p.LeaseOwner, "starting tool call %s in %s", p.CallID, p.ConversationID)
		}
	}
	return nil, wrap(err, "starting tool call %s in %s", p.CallID, p.ConversationID)
}

func (q *queries) ToolExecutionFinish(ctx context.Context, p *store.ToolExecutionFinishParams) (*store.ToolExecution, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ToolExecutionFinish, &dbsqlc.ToolExecutionFinishParams{
		ConversationID: p.ConversationID, CallID: p.CallID, State: string(p.State), Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "finishing tool call %s in %s", p.CallID, p.ConversationID)
	}
	return toolExecution(&row), nil
}

func (q *queries) ToolExecutionGet(ctx context.Context, p *store.ToolExecutionGetParams) (*store.ToolExecution, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ToolExecutionGet, &dbsqlc.ToolExecutionGetParams{
		ConversationID: p.ConversationID, CallID: p.CallID,
	})
	if err != nil {
		return nil, wrap(err, "reading the marker of tool call %s in %s", p.CallID, p.ConversationID)
	}
	return toolExecution(&row), nil
}

func toolExecution(r *dbsqlc.ToolExecution) *store.ToolExecution {
	return &store.ToolExecution{
		ConversationID: r.ConversationID,
		CallID:         r.CallID,
		State:          store.ToolExecutionState(r.State),
		StartedAt:      r.StartedAt,
		FinishedAt:     r.FinishedAt,
	}
}
