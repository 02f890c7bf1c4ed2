package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// The scheduler's queries. A schedule's place is stored in the platform,
// workspace and channel columns as store.Place.Columns encodes it; a
// schedule has no thread.

func (q *queries) ScheduleCreate(ctx context.Context, p *store.ScheduleCreateParams) (*store.Schedule, error) {
	channel, _ := p.Place.Columns()
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleCreate, &dbsqlc.ScheduleCreateParams{
		ID: p.ID, Kind: string(p.Kind), Agent: p.Agent, Name: p.Name, Owner: p.Owner,
		Platform: p.Place.Platform, Workspace: p.Place.Workspace, Channel: channel, Spec: p.Spec,
		TimeZone: p.TimeZone, Instruction: p.Instruction, Config: p.Config, Data: p.Data,
		Missed: string(p.Missed), Source: p.Source, State: string(p.State), NextRunAt: tsPtr(p.NextRunAt),
		Upsert: p.Upsert, Now: ts(p.Now),
	})
	if errors.Is(err, errNoRow) {
		err = fmt.Errorf("%w: the name is taken", store.ErrConflict)
	}
	if err != nil {
		return nil, wrap(err, "creating %s %s/%s", p.Kind, p.Agent, p.Name)
	}
	return schedule(&row), nil
}

func (q *queries) ScheduleGet(ctx context.Context, id uuid.UUID) (*store.Schedule, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleGet, id)
	if err != nil {
		return nil, wrap(err, "getting schedule %s", id)
	}
	return schedule(&row), nil
}

func (q *queries) ScheduleFind(ctx context.Context, p *store.ScheduleFindParams) (*store.Schedule, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleFind, &dbsqlc.ScheduleFindParams{
		Agent: p.Agent, Kind: string(p.Kind), Name: p.Name,
	})
	if err != nil {
		return nil, wrap(err, "finding %s %s/%s", p.Kind, p.Agent, p.Name)
	}
	return schedule(&row), nil
}

func (q *queries) ScheduleCount(ctx context.Context, p *store.ScheduleCountParams) (int, error) {
	arg := &dbsqlc.ScheduleCountParams{Agent: p.Agent, Kind: string(p.Kind)}
	if q.tx {
		// Held until the transaction ends: a create after this count cannot
		// race another's.
		if err := exec(ctx, q, (*dbsqlc.Queries).ScheduleLock, (*dbsqlc.ScheduleLockParams)(arg)); err != nil {
			return 0, wrap(err, "locking the %ss of %s", p.Kind, p.Agent)
		}
	}
	n, err := call(ctx, q, (*dbsqlc.Queries).ScheduleCount, arg)
	return int(n), wrap(err, "counting the %ss of %s", p.Kind, p.Agent)
}

func (q *queries) ScheduleList(ctx context.Context, p *store.ScheduleListParams) ([]*store.Schedule, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ScheduleList, &dbsqlc.ScheduleListParams{
		Agent: p.Agent, Kind: string(p.Kind), Owner: p.Owner, States: strs(p.States), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing schedules")
	}
	return each(rows, schedule), nil
}

func (q *queries) ScheduleUpdate(ctx context.Context, p *store.ScheduleUpdateParams) (*store.Schedule, error) {
	arg := &dbsqlc.ScheduleUpdateParams{
		ID: p.ID, Spec: p.Spec, TimeZone: p.TimeZone, Instruction: p.Instruction, Config: p.Config, Data: p.Data,
		Missed: optStr(p.Missed), State: optStr(p.State), StateReason: p.StateReason, NextRunAt: tsPtr(p.NextRunAt),
		ClearNextRun: p.ClearNextRun, ExpectState: optStr(p.ExpectState), Now: ts(p.Now),
	}
	if p.Place != nil {
		channel, _ := p.Place.Columns()
		arg.Platform, arg.Workspace, arg.Channel = &p.Place.Platform, &p.Place.Workspace, &channel
	}
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleUpdate, arg)
	if errors.Is(err, errNoRow) && p.ExpectState != nil {
		if _, err = q.ScheduleGet(ctx, p.ID); err == nil {
			err = fmt.Errorf("%w: schedule is not %s", store.ErrConflict, *p.ExpectState)
		}
	}
	if err != nil {
		return nil, wrap(err, "updating schedule %s", p.ID)
	}
	return schedule(&row), nil
}

func (q *queries) ScheduleAdvance(ctx context.Context, p *store.ScheduleAdvanceParams) (*store.Schedule, error) {
	var last *time.Time
	if !p.LastRunAt.IsZero() {
		last = new(ts(p.LastRunAt))
	}
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleAdvance, &dbsqlc.ScheduleAdvanceParams{
		ID: p.ID, ExpectNextRunAt: ts(p.ExpectNextRunAt), NextRunAt: tsPtr(p.NextRunAt),
		LastRunAt: last, Done: p.Done, Now: ts(p.Now),
	})
	if errors.Is(err, errNoRow) {
		if _, err = q.ScheduleGet(ctx, p.ID); err == nil {
			err = fmt.Errorf("%w: no longer active and due at %s",
				store.ErrConflict, p.ExpectNextRunAt.UTC().Format(time.RFC3339Nano))
		}
	}
	if err != nil {
		return nil, wrap(err, "advancing schedule %s", p.ID)
	}
	return schedule(&row), nil
}

func (q *queries) ScheduleDelete(ctx context.Context, id uuid.UUID) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).ScheduleDelete, id)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	return wrap(err, "deleting schedule %s", id)
}

func (q *queries) ScheduleDue(ctx context.Context, p *store.ScheduleDueParams) ([]*store.Schedule, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ScheduleDue, &dbsqlc.ScheduleDueParams{Now: ts(p.Now), MaxRows: int32(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing due schedules")
	}
	return each(rows, schedule), nil
}

func (q *queries) SchedulePrune(ctx context.Context, p *store.SchedulePruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).SchedulePrune, &dbsqlc.SchedulePruneParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	return int(n), wrap(err, "pruning reminders done before %s", p.Before)
}

func (q *queries) ScheduleRunCreate(ctx context.Context, p *store.ScheduleRunCreateParams) (*store.ScheduleRun, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleRunCreate, &dbsqlc.ScheduleRunCreateParams{
		ID: newID(), ScheduleID: p.ScheduleID, DueAt: ts(p.DueAt), ConversationID: p.ConversationID,
		Status: string(p.Status), InputHash: p.InputHash, Note: p.Note, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "recording a run of schedule %s", p.ScheduleID)
	}
	return scheduleRun(&row), nil
}

func (q *queries) ScheduleRunUpdate(ctx context.Context, p *store.ScheduleRunUpdateParams) (*store.ScheduleRun, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleRunUpdate, &dbsqlc.ScheduleRunUpdateParams{
		ID: p.ID, Status: optStr(p.Status), ConversationID: p.ConversationID, Report: p.Report, Note: p.Note,
		ExpectNote: p.ExpectNote, Now: ts(p.Now),
	})
	if errors.Is(err, errNoRow) && p.ExpectNote != nil {
		if _, err = q.ScheduleRunGet(ctx, p.ID); err == nil {
			err = fmt.Errorf("%w: run's note is not %q", store.ErrConflict, *p.ExpectNote)
		}
	}
	if err != nil {
		return nil, wrap(err, "updating run %s", p.ID)
	}
	return scheduleRun(&row), nil
}

func (q *queries) ScheduleRunGet(ctx context.Context, id uuid.UUID) (*store.ScheduleRun, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleRunGet, id)
	if err != nil {
		return nil, wrap(err, "getting run %s", id)
	}
	return scheduleRun(&row), nil
}

func (q *queries) ScheduleRunByConversation(ctx context.Context, conversationID uuid.UUID) (*store.ScheduleRun, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleRunByConversation, &conversationID)
	if err != nil {
		return nil, wrap(err, "finding the run of conversation %s", conversationID)
	}
	return scheduleRun(&row), nil
}

func (q *queries) ScheduleRunList(ctx context.Context, p *store.ScheduleRunListParams) ([]*store.ScheduleRun, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ScheduleRunList, &dbsqlc.ScheduleRunListParams{
		ScheduleID: p.ScheduleID, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing runs of schedule %s", p.ScheduleID)
	}
	return each(rows, scheduleRun), nil
}

func (q *queries) ScheduleUsageTotal(ctx context.Context, scheduleID uuid.UUID) (*store.ScheduleUsage, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ScheduleUsageTotal, scheduleID)
	if err != nil {
		return nil, wrap(err, "summing usage of schedule %s", scheduleID)
	}
	return (*store.ScheduleUsage)(&row), nil
}

func schedule(r *dbsqlc.Schedule) *store.Schedule {
	return &store.Schedule{
		ID:          r.ID,
		Kind:        store.ScheduleKind(r.Kind),
		Agent:       r.Agent,
		Name:        r.Name,
		Owner:       r.Owner,
		Place:       store.PlaceFromColumns(r.Platform, r.Workspace, r.Channel, ""),
		Spec:        r.Spec,
		TimeZone:    r.TimeZone,
		Instruction: r.Instruction,
		Config:      r.Config,
		Data:        r.Data,
		Missed:      store.MissedPolicy(r.Missed),
		Source:      r.Source,
		State:       store.ScheduleState(r.State),
		StateReason: r.StateReason,
		NextRunAt:   r.NextRunAt,
		LastRunAt:   r.LastRunAt,
		Runs:        r.Runs,
		CreatedAt:   r.CreatedAt,
		UpdatedAt:   r.UpdatedAt,
	}
}

func scheduleRun(r *dbsqlc.ScheduleRun) *store.ScheduleRun {
	return &store.ScheduleRun{
		ID:             r.ID,
		ScheduleID:     r.ScheduleID,
		Seq:            r.Seq,
		DueAt:          r.DueAt,
		ConversationID: r.ConversationID,
		Status:         store.ScheduleRunStatus(r.Status),
		InputHash:      r.InputHash,
		Report:         r.Report,
		Note:           r.Note,
		CreatedAt:      r.CreatedAt,
		UpdatedAt:      r.UpdatedAt,
	}
}
