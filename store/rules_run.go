package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// The runs' rules: a run has steps with unique keys, each naming an agent
// and a class, depending only on other steps of the run; a transition from
// the wrong state is ErrConflict saying the state it found.

func (q checked) RunCreate(ctx context.Context, p *RunCreateParams) (*Run, error) {
	switch {
	case p == nil || p.ConversationID == uuid.Nil:
		return nil, invalidf("creating a run: ConversationID is required")
	case p.LeadAgent == "":
		return nil, invalidf("creating a run in %s: LeadAgent is required", p.ConversationID)
	case len(p.Steps) == 0:
		return nil, invalidf("creating a run in %s: Steps is empty", p.ConversationID)
	case len(p.Check) > 0 && !json.Valid(p.Check):
		return nil, invalidf("creating a run in %s: Check is not JSON", p.ConversationID)
	}
	keys := map[string]bool{}
	for i, s := range p.Steps {
		switch {
		case s.Key == "" || s.Title == "" || s.Agent == "" || s.Class == "":
			return nil, invalidf("creating a run in %s: Steps[%d] needs Key, Title, Agent and Class", p.ConversationID, i)
		case keys[s.Key]:
			return nil, invalidf("creating a run in %s: Steps[%d].Key %q is taken", p.ConversationID, i, s.Key)
		}
		keys[s.Key] = true
	}
	for i, s := range p.Steps {
		for _, d := range s.DependsOn {
			if !keys[d] || d == s.Key {
				return nil, invalidf("creating a run in %s: Steps[%d].DependsOn names %q, not another step", p.ConversationID, i, d)
			}
		}
	}
	c := *p
	c.Now = q.at(c.Now)
	if len(c.Check) == 0 {
		c.Check = json.RawMessage(`{}`)
	}
	return q.Queries.RunCreate(ctx, &c)
}

func (q checked) RunList(ctx context.Context, p *RunListParams) ([]*Run, error) {
	c := RunListParams{}
	if p != nil {
		c = *p
	}
	if c.Status != "" && !c.Status.Valid() {
		return nil, invalidf("listing runs: Status %q is not a run status", c.Status)
	}
	if c.Limit <= 0 {
		c.Limit = DefaultListLimit
	}
	return q.Queries.RunList(ctx, &c)
}

func (q checked) RunFinish(ctx context.Context, p *RunFinishParams) (*Run, error) {
	switch {
	case p == nil || p.ID == uuid.Nil:
		return nil, invalidf("finishing a run: ID is required")
	case p.Status != RunStatusDone && p.Status != RunStatusFailed && p.Status != RunStatusCancelled:
		return nil, invalidf("finishing run %s: Status %q must be done, failed or cancelled", p.ID, p.Status)
	}
	c := *p
	c.Now = q.at(c.Now)
	r, err := q.Queries.RunFinish(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		cur, gerr := q.Queries.RunGet(ctx, p.ID)
		if gerr != nil {
			return nil, gerr
		}
		return nil, fmt.Errorf("finishing run %s: %w: already %s", p.ID, ErrConflict, cur.Status)
	}
	return r, err
}

func (q checked) RunReopen(ctx context.Context, p *RunReopenParams) (*Run, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("reopening a run: ID is required")
	}
	c := *p
	c.Now = q.at(c.Now)
	r, err := q.Queries.RunReopen(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		cur, gerr := q.Queries.RunGet(ctx, p.ID)
		if gerr != nil {
			return nil, gerr
		}
		return nil, fmt.Errorf("reopening run %s: %w: it is %s", p.ID, ErrConflict, cur.Status)
	}
	return r, err
}

func (q checked) RunStepStart(ctx context.Context, p *RunStepStartParams) (*RunStepStartResult, error) {
	switch {
	case p == nil || p.ID == uuid.Nil:
		return nil, invalidf("starting a run step: ID is required")
	case p.ConversationID == uuid.Nil:
		return nil, invalidf("starting run step %s: ConversationID is required", p.ID)
	case p.SlotLimit < 0:
		return nil, invalidf("starting run step %s: SlotLimit %d is negative", p.ID, p.SlotLimit)
	}
	c := *p
	c.Now = q.at(c.Now)
	res, err := q.Queries.RunStepStart(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		return nil, q.stepState(ctx, p.ID, "starting", StepPending)
	}
	return res, err
}

func (q checked) RunStepFinish(ctx context.Context, p *RunStepFinishParams) (*RunStep, error) {
	switch {
	case p == nil || p.ID == uuid.Nil:
		return nil, invalidf("finishing a run step: ID is required")
	case !p.Status.Final():
		return nil, invalidf("finishing run step %s: Status %q must be done, failed or cancelled", p.ID, p.Status)
	case p.InputTokens < 0 || p.OutputTokens < 0 || p.CostMicroUSD < 0:
		return nil, invalidf("finishing run step %s: tokens and cost must not be negative", p.ID)
	}
	c := *p
	c.Now = q.at(c.Now)
	s, err := q.Queries.RunStepFinish(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		from := []StepStatus{StepWorking}
		if p.Status == StepCancelled {
			from = append(from, StepPending)
		}
		return nil, q.stepState(ctx, p.ID, "finishing", from...)
	}
	return s, err
}

func (q checked) RunStepReset(ctx context.Context, p *RunStepResetParams) (*RunStep, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("resetting a run step: ID is required")
	}
	c := *p
	c.Now = q.at(c.Now)
	s, err := q.Queries.RunStepReset(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		return nil, q.stepState(ctx, p.ID, "resetting", StepFailed, StepCancelled)
	}
	return s, err
}

func (q checked) RunStepChangesSet(ctx context.Context, p *RunStepChangesSetParams) (*RunStep, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("recording a run step's changes: ID is required")
	}
	if len(p.Changes) > 0 && !json.Valid(p.Changes) {
		return nil, invalidf("recording a run step's changes: Changes is not JSON")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.RunStepChangesSet(ctx, &c)
}

// stepState tells a missing step (ErrNotFound) from one in the wrong
// state (ErrConflict naming it).
func (q checked) stepState(ctx context.Context, id uuid.UUID, doing string, want ...StepStatus) error {
	cur, err := q.Queries.RunStepGet(ctx, id)
	if err != nil {
		return err
	}
	if slices.Contains(want, cur.Status) {
		return fmt.Errorf("%s run step %s: %w", doing, id, ErrNotFound)
	}
	return fmt.Errorf("%s run step %s: %w: it is %s", doing, id, ErrConflict, cur.Status)
}

func (q checked) RunEventAppend(ctx context.Context, p *RunEventAppendParams) (*RunEvent, error) {
	switch {
	case p == nil || p.RunID == uuid.Nil:
		return nil, invalidf("appending a run event: RunID is required")
	case p.Kind == "":
		return nil, invalidf("appending an event to run %s: Kind is required", p.RunID)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.RunEventAppend(ctx, &c)
}

func (q checked) RunEventList(ctx context.Context, p *RunEventListParams) ([]*RunEvent, error) {
	if p == nil || p.RunID == uuid.Nil {
		return nil, invalidf("listing run events: RunID is required")
	}
	c := *p
	if c.Limit <= 0 {
		c.Limit = DefaultListLimit
	}
	return q.Queries.RunEventList(ctx, &c)
}
