package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

type toolExecRow struct {
	ConversationID uuid.UUID  `db:"conversation_id"`
	CallID         string     `db:"call_id"`
	State          string     `db:"state"`
	StartedAt      time.Time  `db:"started_at"`
	FinishedAt     *time.Time `db:"finished_at"`
}

func (r *toolExecRow) domain() *store.ToolExecution {
	return &store.ToolExecution{
		ConversationID: r.ConversationID,
		CallID:         r.CallID,
		State:          store.ToolExecutionState(r.State),
		StartedAt:      r.StartedAt.UTC(),
		FinishedAt:     tsPtr(r.FinishedAt),
	}
}

func (q *queries) ToolExecutionStart(ctx context.Context, p *store.ToolExecutionStartParams) (*store.ToolExecutionStartResult, error) {
	if p.CallID == "" {
		return nil, fmt.Errorf("starting a tool call in %s: %w: empty CallID", p.ConversationID, store.ErrInvalid)
	}
	row, err := one[toolExecRow](ctx, q, sqlq.Get("ToolExecutionStart"), p.ConversationID, p.CallID, q.now(p.Now), p.LeaseOwner)
	if err == nil {
		return &store.ToolExecutionStartResult{Execution: row.domain(), Started: true}, nil
	}
	if !errors.Is(err, pgxNoRows) {
		return nil, wrap(err, "starting tool call %s in %s", p.CallID, p.ConversationID)
	}
	row, err = one[toolExecRow](ctx, q, sqlq.Get("ToolExecutionGet"), p.ConversationID, p.CallID)
	if err == nil {
		return &store.ToolExecutionStartResult{Execution: row.domain(), Started: false}, nil
	}
	if !errors.Is(err, pgxNoRows) {
		return nil, wrap(err, "starting tool call %s in %s", p.CallID, p.ConversationID)
	}
	return nil, q.fenceErr(ctx, p.ConversationID, p.LeaseOwner, "starting tool call %s in %s", p.CallID, p.ConversationID)
}

func (q *queries) ToolExecutionFinish(ctx context.Context, p *store.ToolExecutionFinishParams) (*store.ToolExecution, error) {
	row, err := one[toolExecRow](ctx, q, sqlq.Get("ToolExecutionFinish"), p.ConversationID, p.CallID, q.now(p.Now))
	if err != nil {
		return nil, wrap(err, "finishing tool call %s in %s", p.CallID, p.ConversationID)
	}
	return row.domain(), nil
}

func (q *queries) ToolExecutionGet(ctx context.Context, conversationID uuid.UUID, callID string) (*store.ToolExecution, error) {
	row, err := one[toolExecRow](ctx, q, sqlq.Get("ToolExecutionGet"), conversationID, callID)
	if err != nil {
		return nil, wrap(err, "getting tool call %s in %s", callID, conversationID)
	}
	return row.domain(), nil
}
