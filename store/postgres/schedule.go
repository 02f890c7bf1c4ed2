package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// The scheduler's methods (store.ScheduleStore). They are methods of queries,
// like the spine's, so a Store offers them on the pool and InTx's Queries
// offers them inside a transaction.

var (
	_ store.ScheduleStore = (*queries)(nil)
	_ store.ScheduleStore = (*Store)(nil)
)

type scheduleRow struct {
	ID          uuid.UUID  `db:"id"`
	Kind        string     `db:"kind"`
	Agent       string     `db:"agent"`
	Name        string     `db:"name"`
	Owner       string     `db:"owner"`
	Platform    string     `db:"platform"`
	Workspace   string     `db:"workspace"`
	Channel     string     `db:"channel"`
	Spec        string     `db:"spec"`
	TimeZone    string     `db:"time_zone"`
	Instruction string     `db:"instruction"`
	Config      []byte     `db:"config"`
	Data        []byte     `db:"data"`
	Missed      string     `db:"missed"`
	Source      string     `db:"source"`
	State       string     `db:"state"`
	StateReason string     `db:"state_reason"`
	NextRunAt   *time.Time `db:"next_run_at"`
	LastRunAt   *time.Time `db:"last_run_at"`
	Runs        int64      `db:"runs"`
	CreatedAt   time.Time  `db:"created_at"`
	UpdatedAt   time.Time  `db:"updated_at"`
}

func (r *scheduleRow) domain() *store.Schedule {
	return &store.Schedule{
		ID:          r.ID,
		Kind:        store.ScheduleKind(r.Kind),
		Agent:       r.Agent,
		Name:        r.Name,
		Owner:       r.Owner,
		Platform:    r.Platform,
		Workspace:   r.Workspace,
		Channel:     r.Channel,
		Spec:        r.Spec,
		TimeZone:    r.TimeZone,
		Instruction: r.Instruction,
		Config:      jsonOut(r.Config),
		Data:        jsonOut(r.Data),
		Missed:      store.MissedPolicy(r.Missed),
		Source:      r.Source,
		State:       store.ScheduleState(r.State),
		StateReason: r.StateReason,
		NextRunAt:   tsPtr(r.NextRunAt),
		LastRunAt:   tsPtr(r.LastRunAt),
		Runs:        r.Runs,
		CreatedAt:   r.CreatedAt.UTC(),
		UpdatedAt:   r.UpdatedAt.UTC(),
	}
}

func schedules(rows []*scheduleRow) []*store.Schedule {
	out := make([]*store.Schedule, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out
}

type scheduleRunRow struct {
	ID             uuid.UUID  `db:"id"`
	ScheduleID     uuid.UUID  `db:"schedule_id"`
	Seq            int64      `db:"seq"`
	DueAt          time.Time  `db:"due_at"`
	ConversationID *uuid.UUID `db:"conversation_id"`
	Status         string     `db:"status"`
	InputHash      string     `db:"input_hash"`
	Report         []byte     `db:"report"`
	Note           string     `db:"note"`
	CreatedAt      time.Time  `db:"created_at"`
	UpdatedAt      time.Time  `db:"updated_at"`
}

func (r *scheduleRunRow) domain() *store.ScheduleRun {
	run := &store.ScheduleRun{
		ID:             r.ID,
		ScheduleID:     r.ScheduleID,
		Seq:            r.Seq,
		DueAt:          r.DueAt.UTC(),
		ConversationID: r.ConversationID,
		Status:         store.ScheduleRunStatus(r.Status),
		InputHash:      r.InputHash,
		Note:           r.Note,
		CreatedAt:      r.CreatedAt.UTC(),
		UpdatedAt:      r.UpdatedAt.UTC(),
	}
	if r.Report != nil {
		run.Report = json.RawMessage(r.Report)
	}
	return run
}

type scheduleUsageRow struct {
	Calls           int64 `db:"calls"`
	InputTokens     int64 `db:"input_tokens"`
	OutputTokens    int64 `db:"output_tokens"`
	CachedTokens    int64 `db:"cached_tokens"`
	ReasoningTokens int64 `db:"reasoning_tokens"`
	CostMicroUSD    int64 `db:"cost_micro_usd"`
}

// tsArg is an optional time for writing: NULL for nil.
func tsArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

// optJSON validates optional caller JSON: NULL (leave the column) for none.
func optJSON(field string, raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	s, err := jsonArg(field, raw, "")
	if err != nil {
		return nil, err
	}
	return s, nil
}

// optString passes a typed optional string: NULL for nil.
func optString[T ~string](p *T) any {
	if p == nil {
		return nil
	}
	return string(*p)
}

func (q *queries) ScheduleCreate(ctx context.Context, p *store.ScheduleCreateParams) (*store.Schedule, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("creating schedule: %w", err)
	}
	what := fmt.Sprintf("%s %s/%s", p.Kind, p.Agent, p.Name)
	cfg, err := jsonArg("Config", p.Config, "{}")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", what, err)
	}
	data, err := jsonArg("Data", p.Data, "{}")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", what, err)
	}
	id := p.ID
	if id == uuid.Nil {
		id = newID()
	}
	missed, state := p.Defaults()
	now := q.now(p.Now)
	var out *store.Schedule
	err = q.atomic(ctx, func(q *queries) error {
		if p.MaxPerAgent > 0 {
			if _, err := q.exec(ctx, sqlq.Get("ScheduleLockAgent"), p.Agent); err != nil {
				return wrap(err, "locking schedules of %s", p.Agent)
			}
			var n int
			if err := q.scan(ctx, sqlq.Get("ScheduleCountLive"), []any{p.Agent, string(p.Kind), p.Name}, &n); err != nil {
				return wrap(err, "counting %ss of %s", p.Kind, p.Agent)
			}
			if n >= p.MaxPerAgent {
				// An upsert of an existing schedule adds nothing: let it through.
				if !p.Upsert {
					return fmt.Errorf("agent %s already has %d %ss (at most %d): %w", p.Agent, n, p.Kind, p.MaxPerAgent, store.ErrLimit)
				}
				if _, err := q.ScheduleFind(ctx, p.Agent, p.Kind, p.Name); err != nil {
					if errors.Is(err, store.ErrNotFound) {
						return fmt.Errorf("agent %s already has %d %ss (at most %d): %w", p.Agent, n, p.Kind, p.MaxPerAgent, store.ErrLimit)
					}
					return err
				}
			}
		}
		name := "ScheduleInsert"
		if p.Upsert {
			name = "ScheduleUpsert"
		}
		row, err := one[scheduleRow](ctx, q, sqlq.Get(name), id, string(p.Kind), p.Agent, p.Name, p.Owner,
			p.Platform, p.Workspace, p.Channel, p.Spec, p.TimeZone, p.Instruction, cfg, data,
			string(missed), p.Source, string(state), tsArg(p.NextRunAt), now)
		if errors.Is(err, pgxNoRows) {
			return fmt.Errorf("%w: a %s named %q exists for agent %s", store.ErrConflict, p.Kind, p.Name, p.Agent)
		}
		if err != nil {
			return mapErr(err)
		}
		out = row.domain()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", what, err)
	}
	return out, nil
}

func (q *queries) ScheduleGet(ctx context.Context, id uuid.UUID) (*store.Schedule, error) {
	row, err := one[scheduleRow](ctx, q, sqlq.Get("ScheduleGet"), id)
	if err != nil {
		return nil, wrap(err, "getting schedule %s", id)
	}
	return row.domain(), nil
}

func (q *queries) ScheduleFind(ctx context.Context, agent string, kind store.ScheduleKind, name string) (*store.Schedule, error) {
	row, err := one[scheduleRow](ctx, q, sqlq.Get("ScheduleFind"), agent, string(kind), name)
	if err != nil {
		return nil, wrap(err, "finding %s %s/%s", kind, agent, name)
	}
	return row.domain(), nil
}

func (q *queries) ScheduleList(ctx context.Context, p *store.ScheduleListParams) ([]*store.Schedule, error) {
	if p == nil {
		p = &store.ScheduleListParams{}
	}
	states := make([]string, len(p.States))
	for i, s := range p.States {
		states[i] = string(s)
	}
	rows, err := all[scheduleRow](ctx, q, sqlq.Get("ScheduleList"), p.Agent, string(p.Kind), p.Owner, states, limitArg(p.Limit))
	if err != nil {
		return nil, wrap(err, "listing schedules")
	}
	return schedules(rows), nil
}

func (q *queries) ScheduleUpdate(ctx context.Context, p *store.ScheduleUpdateParams) (*store.Schedule, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("updating schedule: %w", err)
	}
	cfg, err := optJSON("Config", p.Config)
	if err != nil {
		return nil, fmt.Errorf("updating schedule %s: %w", p.ID, err)
	}
	data, err := optJSON("Data", p.Data)
	if err != nil {
		return nil, fmt.Errorf("updating schedule %s: %w", p.ID, err)
	}
	var out *store.Schedule
	err = q.atomic(ctx, func(q *queries) error {
		row, err := one[scheduleRow](ctx, q, sqlq.Get("ScheduleUpdate"), p.ID,
			optString(p.Spec), optString(p.TimeZone), optString(p.Instruction),
			optString(p.Platform), optString(p.Workspace), optString(p.Channel),
			cfg, data, optString(p.Missed), optString(p.State), optString(p.StateReason),
			tsArg(p.NextRunAt), p.ClearNextRun, optString(p.ExpectState), q.now(p.Now))
		if errors.Is(err, pgxNoRows) {
			cur, gerr := q.ScheduleGet(ctx, p.ID)
			if gerr != nil {
				return gerr
			}
			return fmt.Errorf("%w: schedule is %s, want %s", store.ErrConflict, cur.State, optString(p.ExpectState))
		}
		if err != nil {
			return mapErr(err)
		}
		out = row.domain()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("updating schedule %s: %w", p.ID, err)
	}
	return out, nil
}

func (q *queries) ScheduleAdvance(ctx context.Context, p *store.ScheduleAdvanceParams) (*store.Schedule, error) {
	if p == nil || p.ExpectNextRunAt.IsZero() {
		return nil, fmt.Errorf("advancing schedule: %w: ExpectNextRunAt is zero", store.ErrInvalid)
	}
	var last any
	if !p.LastRunAt.IsZero() {
		last = ts(p.LastRunAt)
	}
	row, err := one[scheduleRow](ctx, q, sqlq.Get("ScheduleAdvance"), p.ID, ts(p.ExpectNextRunAt),
		tsArg(p.NextRunAt), last, p.Done, q.now(p.Now))
	if errors.Is(err, pgxNoRows) {
		if _, gerr := q.ScheduleGet(ctx, p.ID); gerr != nil {
			return nil, fmt.Errorf("advancing schedule %s: %w", p.ID, gerr)
		}
		return nil, fmt.Errorf("advancing schedule %s: %w: no longer active and due at %s",
			p.ID, store.ErrConflict, p.ExpectNextRunAt.UTC().Format(time.RFC3339Nano))
	}
	if err != nil {
		return nil, wrap(err, "advancing schedule %s", p.ID)
	}
	return row.domain(), nil
}

func (q *queries) ScheduleDelete(ctx context.Context, id uuid.UUID) error {
	tag, err := q.exec(ctx, sqlq.Get("ScheduleDelete"), id)
	if err != nil {
		return wrap(err, "deleting schedule %s", id)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("deleting schedule %s: %w", id, store.ErrNotFound)
	}
	return nil
}

func (q *queries) ScheduleDue(ctx context.Context, now time.Time, limit int) ([]*store.Schedule, error) {
	rows, err := all[scheduleRow](ctx, q, sqlq.Get("ScheduleDue"), q.now(now), limitArg(limit))
	if err != nil {
		return nil, wrap(err, "listing due schedules")
	}
	return schedules(rows), nil
}

func (q *queries) ScheduleRunCreate(ctx context.Context, p *store.ScheduleRunCreateParams) (*store.ScheduleRun, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("recording run: %w", err)
	}
	now := q.now(p.Now)
	var out *store.ScheduleRun
	err := q.atomic(ctx, func(q *queries) error {
		var seq int64
		if err := q.scan(ctx, sqlq.Get("ScheduleRunNextSeq"), []any{p.ScheduleID}, &seq); err != nil {
			return mapErr(err)
		}
		row, err := one[scheduleRunRow](ctx, q, sqlq.Get("ScheduleRunInsert"), newID(), p.ScheduleID, seq,
			ts(p.DueAt), p.ConversationID, string(p.Status), p.InputHash, p.Note, now)
		if err != nil {
			return mapErr(err)
		}
		out = row.domain()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recording run of schedule %s: %w", p.ScheduleID, err)
	}
	return out, nil
}

func (q *queries) ScheduleRunUpdate(ctx context.Context, p *store.ScheduleRunUpdateParams) (*store.ScheduleRun, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("updating run: %w", err)
	}
	report, err := optJSON("Report", p.Report)
	if err != nil {
		return nil, fmt.Errorf("updating run %s: %w", p.ID, err)
	}
	row, err := one[scheduleRunRow](ctx, q, sqlq.Get("ScheduleRunUpdate"), p.ID, optString(p.Status),
		p.ConversationID, report, optString(p.Note), q.now(p.Now))
	if err != nil {
		return nil, wrap(err, "updating run %s", p.ID)
	}
	return row.domain(), nil
}

func (q *queries) ScheduleRunGet(ctx context.Context, id uuid.UUID) (*store.ScheduleRun, error) {
	row, err := one[scheduleRunRow](ctx, q, sqlq.Get("ScheduleRunGet"), id)
	if err != nil {
		return nil, wrap(err, "getting run %s", id)
	}
	return row.domain(), nil
}

func (q *queries) ScheduleRunByConversation(ctx context.Context, conversationID uuid.UUID) (*store.ScheduleRun, error) {
	row, err := one[scheduleRunRow](ctx, q, sqlq.Get("ScheduleRunByConversation"), conversationID)
	if err != nil {
		return nil, wrap(err, "finding the run of conversation %s", conversationID)
	}
	return row.domain(), nil
}

func (q *queries) ScheduleRunList(ctx context.Context, scheduleID uuid.UUID, limit int) ([]*store.ScheduleRun, error) {
	rows, err := all[scheduleRunRow](ctx, q, sqlq.Get("ScheduleRunList"), scheduleID, limitArg(limit))
	if err != nil {
		return nil, wrap(err, "listing runs of schedule %s", scheduleID)
	}
	out := make([]*store.ScheduleRun, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

func (q *queries) ScheduleUsageTotal(ctx context.Context, scheduleID uuid.UUID) (*store.ScheduleUsage, error) {
	row, err := one[scheduleUsageRow](ctx, q, sqlq.Get("ScheduleUsageTotal"), scheduleID)
	if err != nil {
		return nil, wrap(err, "summing usage of schedule %s", scheduleID)
	}
	u := store.ScheduleUsage(*row)
	return &u, nil
}

func (q *queries) ScheduleSweep(ctx context.Context, p *store.ScheduleSweepParams) (*store.ScheduleSweepResult, error) {
	if p == nil {
		return nil, fmt.Errorf("sweeping: %w: params are nil", store.ErrInvalid)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	res := &store.ScheduleSweepResult{}
	steps := []struct {
		query  string
		before time.Time
		n      *int
	}{
		{"ScheduleSweepInbound", p.InboundBefore, &res.Inbound},
		{"ScheduleSweepWork", p.WorkBefore, &res.Work},
		{"ScheduleSweepLeases", p.LeasesBefore, &res.Leases},
		{"ScheduleSweepReminders", p.RemindersBefore, &res.Reminders},
	}
	for _, st := range steps {
		if st.before.IsZero() {
			continue
		}
		tag, err := q.exec(ctx, sqlq.Get(st.query), ts(st.before), limit)
		if err != nil {
			return nil, wrap(err, "sweeping (%s)", st.query)
		}
		*st.n = int(tag.RowsAffected())
	}
	return res, nil
}
