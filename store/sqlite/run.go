package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Runs. The conversation is checked to exist first (ErrNotFound); a
// transition that matched no row in the state it needs is ErrNotFound here
// and the rules tell a wrong state from a missing row. One writer makes a
// step's count-then-start one decision.

func (q *queries) RunCreate(ctx context.Context, p *store.RunCreateParams) (*store.Run, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Run, error) {
		if err := t.mustExist(ctx, p.ConversationID); err != nil {
			return dbsqlc.Run{}, err
		}
		out, err := t.tx.RunInsert(ctx, dbsqlc.RunInsertParams{
			ID: newID(), ConversationID: p.ConversationID, WorkspaceID: uuidArg(p.WorkspaceID), LeadAgent: p.LeadAgent,
			Goal: p.Goal, CheckSpec: string(p.Check), Now: micros(p.Now),
		})
		if err != nil {
			return out, err
		}
		for i, s := range p.Steps {
			if err := t.tx.RunStepInsert(ctx, dbsqlc.RunStepInsertParams{
				ID: newID(), RunID: out.ID, Position: int64(i), StepKey: s.Key, Title: s.Title, Agent: s.Agent,
				Class: s.Class, Inputs: stepInputs(s.Inputs), DependsOn: stepDeps(s.DependsOn), Now: micros(p.Now),
			}); err != nil {
				return out, err
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, wrap(err, "creating a run in %s", p.ConversationID)
	}
	return runOf(r), nil
}

func (q *queries) RunGet(ctx context.Context, id uuid.UUID) (*store.Run, error) {
	r, err := q.read().RunGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading run %s", id)
	}
	return runOf(r), nil
}

func (q *queries) RunList(ctx context.Context, p *store.RunListParams) ([]*store.Run, error) {
	arg := dbsqlc.RunListParams{AnyWorkspace: 1, AnyConversation: 1, Status: string(p.Status), MaxRows: int64(p.Limit)}
	if p.WorkspaceID != nil {
		arg.AnyWorkspace, arg.WorkspaceID = 0, uuidArg(p.WorkspaceID)
	}
	if p.ConversationID != nil {
		arg.AnyConversation, arg.ConversationID = 0, *p.ConversationID
	}
	rows, err := q.read().RunList(ctx, arg)
	out, err := all(rows, err, runOf)
	if err != nil {
		return nil, wrap(err, "listing runs")
	}
	return out, nil
}

func (q *queries) RunFinish(ctx context.Context, p *store.RunFinishParams) (*store.Run, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Run, error) {
		return t.tx.RunFinish(ctx, dbsqlc.RunFinishParams{ID: p.ID, Status: string(p.Status), Result: p.Result, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "finishing run %s", p.ID)
	}
	return runOf(r), nil
}

func (q *queries) RunReopen(ctx context.Context, p *store.RunReopenParams) (*store.Run, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Run, error) {
		return t.tx.RunReopen(ctx, dbsqlc.RunReopenParams{ID: p.ID, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "reopening run %s", p.ID)
	}
	return runOf(r), nil
}

func (q *queries) RunStepList(ctx context.Context, runID uuid.UUID) ([]*store.RunStep, error) {
	rows, err := q.read().RunStepList(ctx, runID)
	out, err := all(rows, err, runStepOf)
	if err != nil {
		return nil, wrap(err, "listing the steps of run %s", runID)
	}
	return out, nil
}

func (q *queries) RunStepGet(ctx context.Context, id uuid.UUID) (*store.RunStep, error) {
	r, err := q.read().RunStepGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading run step %s", id)
	}
	return runStepOf(r), nil
}

func (q *queries) RunStepByConversation(ctx context.Context, conv uuid.UUID) (*store.RunStep, error) {
	r, err := q.read().RunStepByConversation(ctx, uuidArg(&conv))
	if err != nil {
		return nil, wrap(err, "finding the run step of conversation %s", conv)
	}
	return runStepOf(r), nil
}

func (q *queries) RunStepStart(ctx context.Context, p *store.RunStepStartParams) (*store.RunStepStartResult, error) {
	res, err := write(ctx, q, func(t *queries) (store.RunStepStartResult, error) {
		cur, err := t.tx.RunStepGet(ctx, p.ID)
		if err != nil {
			return store.RunStepStartResult{}, err
		}
		if p.SlotLimit > 0 {
			n, err := t.tx.RunSlotsWorking(ctx, cur.Class)
			if err != nil {
				return store.RunStepStartResult{}, err
			}
			if n >= int64(p.SlotLimit) {
				return store.RunStepStartResult{Step: runStepOf(cur)}, nil
			}
		}
		r, err := t.tx.RunStepStart(ctx, dbsqlc.RunStepStartParams{
			ID: p.ID, ConversationID: uuidArg(&p.ConversationID), Model: p.Model, Now: micros(p.Now),
		})
		if err != nil {
			return store.RunStepStartResult{}, err
		}
		return store.RunStepStartResult{Step: runStepOf(r), Started: true}, nil
	})
	if err != nil {
		return nil, wrap(err, "starting run step %s", p.ID)
	}
	return &res, nil
}

func (q *queries) RunStepFinish(ctx context.Context, p *store.RunStepFinishParams) (*store.RunStep, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.RunStep, error) {
		return t.tx.RunStepFinish(ctx, dbsqlc.RunStepFinishParams{
			ID: p.ID, Status: string(p.Status), Output: p.Output, Error: p.Error, InputTokens: p.InputTokens,
			OutputTokens: p.OutputTokens, CostMicroUSD: p.CostMicroUSD, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "finishing run step %s", p.ID)
	}
	return runStepOf(r), nil
}

func (q *queries) RunStepReset(ctx context.Context, p *store.RunStepResetParams) (*store.RunStep, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.RunStep, error) {
		return t.tx.RunStepReset(ctx, dbsqlc.RunStepResetParams{ID: p.ID, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "resetting run step %s", p.ID)
	}
	return runStepOf(r), nil
}

func (q *queries) RunStepChangesSet(ctx context.Context, p *store.RunStepChangesSetParams) (*store.RunStep, error) {
	changes := sql.NullString{String: string(p.Changes), Valid: len(p.Changes) > 0}
	r, err := write(ctx, q, func(t *queries) (dbsqlc.RunStep, error) {
		return t.tx.RunStepChangesSet(ctx, dbsqlc.RunStepChangesSetParams{ID: p.ID, Changes: changes, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "recording the changes of run step %s", p.ID)
	}
	return runStepOf(r), nil
}

func (q *queries) RunEventAppend(ctx context.Context, p *store.RunEventAppendParams) (*store.RunEvent, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.RunEvent, error) {
		return t.tx.RunEventInsert(ctx, dbsqlc.RunEventInsertParams{
			RunID: p.RunID, StepKey: p.StepKey, Kind: p.Kind, Status: p.Status, Detail: p.Detail, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "appending a %s event to run %s", p.Kind, p.RunID)
	}
	return runEventOf(r), nil
}

func (q *queries) RunEventList(ctx context.Context, p *store.RunEventListParams) ([]*store.RunEvent, error) {
	rows, err := q.read().RunEventList(ctx, dbsqlc.RunEventListParams{RunID: p.RunID, AfterID: p.AfterID, MaxRows: int64(p.Limit)})
	out, err := all(rows, err, runEventOf)
	if err != nil {
		return nil, wrap(err, "listing the events of run %s", p.RunID)
	}
	return out, nil
}

func stepInputs(m map[string]string) string {
	if m == nil {
		m = map[string]string{}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func stepDeps(d []string) string {
	if d == nil {
		d = []string{}
	}
	b, _ := json.Marshal(d)
	return string(b)
}

func runOf(r dbsqlc.Run) *store.Run {
	return &store.Run{
		ID: r.ID, ConversationID: r.ConversationID, WorkspaceID: nullUUID(r.WorkspaceID), LeadAgent: r.LeadAgent, Goal: r.Goal,
		Status: store.RunStatus(r.Status), Check: json.RawMessage(r.CheckSpec), Result: r.Result,
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt), FinishedAt: nullMicros(r.FinishedAt),
	}
}

func runStepOf(r dbsqlc.RunStep) *store.RunStep {
	s := &store.RunStep{
		ID: r.ID, RunID: r.RunID, Position: int(r.Position), Key: r.StepKey, Title: r.Title, Agent: r.Agent, Class: r.Class,
		Status: store.StepStatus(r.Status), Model: r.Model, ConversationID: nullUUID(r.ConversationID), Attempts: int(r.Attempts),
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CostMicroUSD: r.CostMicroUSD, Output: r.Output, Error: r.Error,
		StartedAt: nullMicros(r.StartedAt), FinishedAt: nullMicros(r.FinishedAt),
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
	if r.Changes.Valid && r.Changes.String != "" {
		s.Changes = json.RawMessage(r.Changes.String)
	}
	_ = json.Unmarshal([]byte(r.Inputs), &s.Inputs)
	_ = json.Unmarshal([]byte(r.DependsOn), &s.DependsOn)
	return s
}

func runEventOf(r dbsqlc.RunEvent) *store.RunEvent {
	return &store.RunEvent{ID: r.ID, RunID: r.RunID, StepKey: r.StepKey, Kind: r.Kind, Status: r.Status, Detail: r.Detail, CreatedAt: fromMicros(r.CreatedAt)}
}
