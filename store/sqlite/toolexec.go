package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func scanToolExecution(r scanner) (*store.ToolExecution, error) {
	var (
		x        store.ToolExecution
		state    string
		started  int64
		finished sql.NullInt64
	)
	if err := r.Scan(&x.ConversationID, &x.CallID, &state, &started, &finished); err != nil {
		return nil, err
	}
	x.State = store.ToolExecutionState(state)
	x.StartedAt = fromMicros(started)
	x.FinishedAt = nullMicros(finished)
	return &x, nil
}

func (q *queries) ToolExecutionStart(ctx context.Context, p *store.ToolExecutionStartParams) (*store.ToolExecutionStartResult, error) {
	if p == nil || p.CallID == "" {
		return nil, fmt.Errorf("starting a tool call: %w", invalid("CallID is empty"))
	}
	now := q.now(p.Now)
	var res *store.ToolExecutionStartResult
	err := q.atomic(ctx, func() error {
		if p.LeaseOwner != "" {
			if err := q.fence(ctx, p.ConversationID, p.LeaseOwner, now); err != nil {
				return err
			}
		}
		conv, call := sql.Named("conversation_id", p.ConversationID.String()), sql.Named("call_id", p.CallID)
		x, err := queryOne(ctx, q.db, "ToolExecutionInsert", scanToolExecution, conv, call, sql.Named("now", micros(now)))
		if err == nil {
			res = &store.ToolExecutionStartResult{Execution: x, Started: true}
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		// No row back: the call has a marker already, or (a foreign key
		// error, also ErrNotFound) the conversation is missing.
		x, err = queryOne(ctx, q.db, "ToolExecutionGet", scanToolExecution, conv, call)
		if err != nil {
			return err
		}
		res = &store.ToolExecutionStartResult{Execution: x, Started: false}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("starting tool call %s in %s: %w", p.CallID, p.ConversationID, err)
	}
	return res, nil
}

func (q *queries) ToolExecutionFinish(ctx context.Context, p *store.ToolExecutionFinishParams) (*store.ToolExecution, error) {
	x, err := queryOne(ctx, q.db, "ToolExecutionFinish", scanToolExecution,
		sql.Named("conversation_id", p.ConversationID.String()),
		sql.Named("call_id", p.CallID),
		sql.Named("now", micros(q.now(p.Now))))
	if err != nil {
		return nil, fmt.Errorf("finishing tool call %s in %s: %w", p.CallID, p.ConversationID, err)
	}
	return x, nil
}

func (q *queries) ToolExecutionGet(ctx context.Context, conversationID uuid.UUID, callID string) (*store.ToolExecution, error) {
	x, err := queryOne(ctx, q.db, "ToolExecutionGet", scanToolExecution,
		sql.Named("conversation_id", conversationID.String()),
		sql.Named("call_id", callID))
	if err != nil {
		return nil, fmt.Errorf("getting tool call %s in %s: %w", callID, conversationID, err)
	}
	return x, nil
}
