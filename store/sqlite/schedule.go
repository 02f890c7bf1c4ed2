package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// The scheduler's queries. A schedule's Place has no thread: it is stored
// in the platform, workspace and channel columns.

func (q *queries) ScheduleGet(ctx context.Context, id uuid.UUID) (*store.Schedule, error) {
	r, err := q.read().ScheduleGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "getting schedule %s", id)
	}
	return schedule(r), nil
}

func (q *queries) ScheduleCreate(ctx context.Context, p *store.ScheduleCreateParams) (*store.Schedule, error) {
	channel, _ := p.Place.Columns()
	arg := dbsqlc.ScheduleInsertParams{
		ID:          p.ID,
		Kind:        string(p.Kind),
		Agent:       p.Agent,
		Name:        p.Name,
		Owner:       p.Owner,
		Platform:    p.Place.Platform,
		Workspace:   p.Place.Workspace,
		Channel:     channel,
		Spec:        p.Spec,
		TimeZone:    p.TimeZone,
		Instruction: p.Instruction,
		Config:      string(p.Config),
		Data:        string(p.Data),
		Missed:      string(p.Missed),
		Source:      p.Source,
		State:       string(p.State),
		NextRunAt:   microsArg(p.NextRunAt),
		Now:         micros(p.Now),
	}
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Schedule, error) {
		if p.Upsert {
			return t.tx.ScheduleUpsert(ctx, dbsqlc.ScheduleUpsertParams(arg))
		}
		r, err := t.tx.ScheduleInsert(ctx, arg)
		if errors.Is(err, sql.ErrNoRows) {
			err = fmt.Errorf("%w: a %s named %q exists for agent %s", store.ErrConflict, p.Kind, p.Name, p.Agent)
		}
		return r, err
	})
	if err != nil {
		return nil, wrap(err, "creating %s %s/%s", p.Kind, p.Agent, p.Name)
	}
	return schedule(r), nil
}

func (q *queries) ScheduleFind(ctx context.Context, p *store.ScheduleFindParams) (*store.Schedule, error) {
	r, err := q.read().ScheduleFind(ctx, dbsqlc.ScheduleFindParams{Agent: p.Agent, Kind: string(p.Kind), Name: p.Name})
	if err != nil {
		return nil, wrap(err, "finding %s %s/%s", p.Kind, p.Agent, p.Name)
	}
	return schedule(r), nil
}

// ScheduleCount needs no lock: inside a transaction it runs on the single
// writer, which nothing else can write through until the transaction ends.
func (q *queries) ScheduleCount(ctx context.Context, p *store.ScheduleCountParams) (int, error) {
	n, err := q.read().ScheduleCount(ctx, dbsqlc.ScheduleCountParams{Agent: p.Agent, Kind: string(p.Kind)})
	if err != nil {
		return 0, wrap(err, "counting %ss of agent %s", p.Kind, p.Agent)
	}
	return int(n), nil
}

func (q *queries) ScheduleList(ctx context.Context, p *store.ScheduleListParams) ([]*store.Schedule, error) {
	rows, err := q.read().ScheduleList(ctx, dbsqlc.ScheduleListParams{
		Agent: p.Agent, Kind: string(p.Kind), Owner: p.Owner, States: listArg(p.States), Limit: limitArg(p.Limit),
	})
	out, err := all(rows, err, schedule)
	if err != nil {
		return nil, wrap(err, "listing schedules")
	}
	return out, nil
}

func (q *queries) ScheduleUpdate(ctx context.Context, p *store.ScheduleUpdateParams) (*store.Schedule, error) {
	arg := dbsqlc.ScheduleUpdateParams{
		ID: p.ID, Spec: textArg(p.Spec), TimeZone: textArg(p.TimeZone), Instruction: textArg(p.Instruction),
		Config: jsonArg(p.Config), Data: jsonArg(p.Data), Missed: textArg(p.Missed), State: textArg(p.State),
		StateReason: textArg(p.StateReason), ClearNext: p.ClearNextRun, NextRunAt: microsArg(p.NextRunAt),
		ExpectState: textArg(p.ExpectState), Now: micros(p.Now),
	}
	if p.Place != nil {
		channel, _ := p.Place.Columns()
		arg.Platform, arg.Workspace, arg.Channel = textArg(&p.Place.Platform), textArg(&p.Place.Workspace), textArg(&channel)
	}
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Schedule, error) {
		r, err := t.tx.ScheduleUpdate(ctx, arg)
		return r, orMissing(err, func() (dbsqlc.Schedule, error) { return t.tx.ScheduleGet(ctx, p.ID) },
			fmt.Errorf("%w: schedule is not in state %v", store.ErrConflict, arg.ExpectState.String))
	})
	if err != nil {
		return nil, wrap(err, "updating schedule %s", p.ID)
	}
	return schedule(r), nil
}

func (q *queries) ScheduleAdvance(ctx context.Context, p *store.ScheduleAdvanceParams) (*store.Schedule, error) {
	arg := dbsqlc.ScheduleAdvanceParams{
		ID: p.ID, ExpectNext: micros(p.ExpectNextRunAt), NextRunAt: microsArg(p.NextRunAt), Done: p.Done, Now: micros(p.Now),
	}
	if !p.LastRunAt.IsZero() {
		arg.LastRunAt = microsArg(&p.LastRunAt)
	}
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Schedule, error) {
		r, err := t.tx.ScheduleAdvance(ctx, arg)
		return r, orMissing(err, func() (dbsqlc.Schedule, error) { return t.tx.ScheduleGet(ctx, p.ID) },
			fmt.Errorf("%w: no longer active and due at %s", store.ErrConflict, p.ExpectNextRunAt.UTC().Format(time.RFC3339Nano)))
	})
	if err != nil {
		return nil, wrap(err, "advancing schedule %s", p.ID)
	}
	return schedule(r), nil
}

func (q *queries) ScheduleDelete(ctx context.Context, id uuid.UUID) error {
	n, err := write(ctx, q, func(t *queries) (int64, error) { return t.tx.ScheduleDelete(ctx, id) })
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return wrap(err, "deleting schedule %s", id)
	}
	return nil
}

func (q *queries) ScheduleDue(ctx context.Context, p *store.ScheduleDueParams) ([]*store.Schedule, error) {
	rows, err := q.read().ScheduleDue(ctx, dbsqlc.ScheduleDueParams{Now: micros(p.Now), Limit: limitArg(p.Limit)})
	out, err := all(rows, err, schedule)
	if err != nil {
		return nil, wrap(err, "listing due schedules")
	}
	return out, nil
}

func (q *queries) SchedulePrune(ctx context.Context, p *store.SchedulePruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.SchedulePrune(ctx, dbsqlc.SchedulePruneParams{Before: micros(p.Before), Limit: int64(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning done reminders before %s", p.Before)
	}
	return int(n), nil
}

func (q *queries) ScheduleRunCreate(ctx context.Context, p *store.ScheduleRunCreateParams) (*store.ScheduleRun, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.ScheduleRun, error) {
		seq, err := t.tx.ScheduleRunNextSeq(ctx, p.ScheduleID)
		if err != nil {
			return dbsqlc.ScheduleRun{}, err
		}
		return t.tx.ScheduleRunInsert(ctx, dbsqlc.ScheduleRunInsertParams{
			ID: newID(), ScheduleID: p.ScheduleID, Seq: seq, DueAt: micros(p.DueAt), ConversationID: uuidArg(p.ConversationID),
			Status: string(p.Status), InputHash: p.InputHash, Note: p.Note, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "recording run of schedule %s", p.ScheduleID)
	}
	return scheduleRun(r), nil
}

func (q *queries) ScheduleRunUpdate(ctx context.Context, p *store.ScheduleRunUpdateParams) (*store.ScheduleRun, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.ScheduleRun, error) {
		r, err := t.tx.ScheduleRunUpdate(ctx, dbsqlc.ScheduleRunUpdateParams{
			ID: p.ID, Status: textArg(p.Status), ConversationID: uuidArg(p.ConversationID),
			Report: jsonArg(p.Report), Note: textArg(p.Note), ExpectNote: textArg(p.ExpectNote), Now: micros(p.Now),
		})
		if p.ExpectNote == nil {
			return r, err
		}
		return r, orMissing(err, func() (dbsqlc.ScheduleRun, error) { return t.tx.ScheduleRunGet(ctx, p.ID) },
			fmt.Errorf("%w: run's note is not %q", store.ErrConflict, *p.ExpectNote))
	})
	if err != nil {
		return nil, wrap(err, "updating run %s", p.ID)
	}
	return scheduleRun(r), nil
}

func (q *queries) ScheduleRunGet(ctx context.Context, id uuid.UUID) (*store.ScheduleRun, error) {
	r, err := q.read().ScheduleRunGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "getting run %s", id)
	}
	return scheduleRun(r), nil
}

func (q *queries) ScheduleRunByConversation(ctx context.Context, conversationID uuid.UUID) (*store.ScheduleRun, error) {
	r, err := q.read().ScheduleRunByConversation(ctx, uuid.NullUUID{UUID: conversationID, Valid: true})
	if err != nil {
		return nil, wrap(err, "finding the run of conversation %s", conversationID)
	}
	return scheduleRun(r), nil
}

func (q *queries) ScheduleRunList(ctx context.Context, p *store.ScheduleRunListParams) ([]*store.ScheduleRun, error) {
	rows, err := q.read().ScheduleRunList(ctx, dbsqlc.ScheduleRunListParams{ScheduleID: p.ScheduleID, Limit: limitArg(p.Limit)})
	out, err := all(rows, err, scheduleRun)
	if err != nil {
		return nil, wrap(err, "listing runs of schedule %s", p.ScheduleID)
	}
	return out, nil
}

func (q *queries) ScheduleUsageTotal(ctx context.Context, scheduleID uuid.UUID) (*store.ScheduleUsage, error) {
	r, err := q.read().ScheduleUsageTotal(ctx, scheduleID)
	if err != nil {
		return nil, wrap(err, "summing usage of schedule %s", scheduleID)
	}
	u := store.ScheduleUsage(r)
	return &u, nil
}
