package postgres

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Runs. A missing conversation is a foreign-key violation (ErrNotFound); a
// transition that matched no row in the state it needs is ErrNotFound here
// and the rules tell a wrong state from a missing row. A step's start takes
// an advisory lock on its class first, so the count of working steps and
// the start are one decision across instances.

func (q *queries) RunCreate(ctx context.Context, p *store.RunCreateParams) (*store.Run, error) {
	var out dbsqlc.Run
	err := q.atomic(ctx, func(t *queries) error {
		var err error
		out, err = call(ctx, t, (*dbsqlc.Queries).RunInsert, &dbsqlc.RunInsertParams{
			ID: newID(), ConversationID: p.ConversationID, WorkspaceID: p.WorkspaceID, LeadAgent: p.LeadAgent,
			Goal: p.Goal, CheckSpec: p.Check, Now: ts(p.Now),
		})
		if err != nil {
			return err
		}
		for i, s := range p.Steps {
			if err := exec(ctx, t, (*dbsqlc.Queries).RunStepInsert, &dbsqlc.RunStepInsertParams{
				ID: newID(), RunID: out.ID, Position: int32(i), StepKey: s.Key, Title: s.Title, Agent: s.Agent,
				Class: s.Class, Inputs: stepInputs(s.Inputs), DependsOn: stepDeps(s.DependsOn), Now: ts(p.Now),
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "creating a run in %s", p.ConversationID)
	}
	return run(&out), nil
}

func (q *queries) RunGet(ctx context.Context, id uuid.UUID) (*store.Run, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunGet, id)
	if err != nil {
		return nil, wrap(err, "reading run %s", id)
	}
	return run(&r), nil
}

func (q *queries) RunList(ctx context.Context, p *store.RunListParams) ([]*store.Run, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).RunList, &dbsqlc.RunListParams{
		WorkspaceID: p.WorkspaceID, ConversationID: p.ConversationID, Status: string(p.Status), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing runs")
	}
	return each(rows, run), nil
}

func (q *queries) RunFinish(ctx context.Context, p *store.RunFinishParams) (*store.Run, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunFinish, &dbsqlc.RunFinishParams{ID: p.ID, Status: string(p.Status), Result: p.Result, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "finishing run %s", p.ID)
	}
	return run(&r), nil
}

func (q *queries) RunReopen(ctx context.Context, p *store.RunReopenParams) (*store.Run, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunReopen, &dbsqlc.RunReopenParams{ID: p.ID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "reopening run %s", p.ID)
	}
	return run(&r), nil
}

func (q *queries) RunStepList(ctx context.Context, runID uuid.UUID) ([]*store.RunStep, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).RunStepList, runID)
	if err != nil {
		return nil, wrap(err, "listing the steps of run %s", runID)
	}
	return each(rows, runStep), nil
}

func (q *queries) RunStepGet(ctx context.Context, id uuid.UUID) (*store.RunStep, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunStepGet, id)
	if err != nil {
		return nil, wrap(err, "reading run step %s", id)
	}
	return runStep(&r), nil
}

func (q *queries) RunStepByConversation(ctx context.Context, conv uuid.UUID) (*store.RunStep, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunStepByConversation, &conv)
	if err != nil {
		return nil, wrap(err, "finding the run step of conversation %s", conv)
	}
	return runStep(&r), nil
}

func (q *queries) RunStepStart(ctx context.Context, p *store.RunStepStartParams) (*store.RunStepStartResult, error) {
	var res store.RunStepStartResult
	err := q.atomic(ctx, func(t *queries) error {
		cur, err := call(ctx, t, (*dbsqlc.Queries).RunStepGet, p.ID)
		if err != nil {
			return err
		}
		if p.SlotLimit > 0 {
			if err := exec(ctx, t, (*dbsqlc.Queries).RunSlotLock, cur.Class); err != nil {
				return err
			}
			n, err := call(ctx, t, (*dbsqlc.Queries).RunSlotsWorking, cur.Class)
			if err != nil {
				return err
			}
			if n >= int64(p.SlotLimit) {
				res.Step = runStep(&cur)
				return nil
			}
		}
		r, err := call(ctx, t, (*dbsqlc.Queries).RunStepStart, &dbsqlc.RunStepStartParams{
			ID: p.ID, ConversationID: &p.ConversationID, Model: p.Model, Now: ts(p.Now),
		})
		if err != nil {
			return err
		}
		res.Step, res.Started = runStep(&r), true
		return nil
	})
	if err != nil {
		return nil, wrap(err, "starting run step %s", p.ID)
	}
	return &res, nil
}

func (q *queries) RunStepFinish(ctx context.Context, p *store.RunStepFinishParams) (*store.RunStep, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunStepFinish, &dbsqlc.RunStepFinishParams{
		ID: p.ID, Status: string(p.Status), Output: p.Output, Error: p.Error, InputTokens: p.InputTokens,
		OutputTokens: p.OutputTokens, CostMicroUSD: p.CostMicroUSD, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "finishing run step %s", p.ID)
	}
	return runStep(&r), nil
}

func (q *queries) RunStepReset(ctx context.Context, p *store.RunStepResetParams) (*store.RunStep, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunStepReset, &dbsqlc.RunStepResetParams{ID: p.ID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "resetting run step %s", p.ID)
	}
	return runStep(&r), nil
}

func (q *queries) RunStepChangesSet(ctx context.Context, p *store.RunStepChangesSetParams) (*store.RunStep, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunStepChangesSet, &dbsqlc.RunStepChangesSetParams{ID: p.ID, Changes: p.Changes, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "recording the changes of run step %s", p.ID)
	}
	return runStep(&r), nil
}

func (q *queries) RunEventAppend(ctx context.Context, p *store.RunEventAppendParams) (*store.RunEvent, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).RunEventInsert, &dbsqlc.RunEventInsertParams{
		RunID: p.RunID, StepKey: p.StepKey, Kind: p.Kind, Status: p.Status, Detail: p.Detail, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "appending a %s event to run %s", p.Kind, p.RunID)
	}
	return runEvent(&r), nil
}

func (q *queries) RunEventList(ctx context.Context, p *store.RunEventListParams) ([]*store.RunEvent, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).RunEventList, &dbsqlc.RunEventListParams{RunID: p.RunID, AfterID: p.AfterID, MaxRows: int32(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing the events of run %s", p.RunID)
	}
	return each(rows, runEvent), nil
}

func stepInputs(m map[string]string) json.RawMessage {
	if m == nil {
		m = map[string]string{}
	}
	b, _ := json.Marshal(m)
	return b
}

func stepDeps(d []string) json.RawMessage {
	if d == nil {
		d = []string{}
	}
	b, _ := json.Marshal(d)
	return b
}

func run(r *dbsqlc.Run) *store.Run {
	return &store.Run{
		ID: r.ID, ConversationID: r.ConversationID, WorkspaceID: r.WorkspaceID, LeadAgent: r.LeadAgent, Goal: r.Goal,
		Status: store.RunStatus(r.Status), Check: r.CheckSpec, Result: r.Result,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt,
	}
}

func runStep(r *dbsqlc.RunStep) *store.RunStep {
	s := &store.RunStep{
		ID: r.ID, RunID: r.RunID, Position: int(r.Position), Key: r.StepKey, Title: r.Title, Agent: r.Agent, Class: r.Class,
		Status: store.StepStatus(r.Status), Model: r.Model, ConversationID: r.ConversationID, Attempts: int(r.Attempts),
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CostMicroUSD: r.CostMicroUSD, Output: r.Output, Error: r.Error,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if len(r.Changes) > 0 {
		s.Changes = r.Changes
	}
	_ = json.Unmarshal(r.Inputs, &s.Inputs)
	_ = json.Unmarshal(r.DependsOn, &s.DependsOn)
	return s
}

func runEvent(r *dbsqlc.RunEvent) *store.RunEvent {
	return &store.RunEvent{ID: r.ID, RunID: r.RunID, StepKey: r.StepKey, Kind: r.Kind, Status: r.Status, Detail: r.Detail, CreatedAt: r.CreatedAt}
}
