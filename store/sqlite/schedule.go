package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// The scheduler's methods (store.ScheduleStore): on queries, so that InTx's
// Queries offers them inside a transaction, and on Store, where writes take
// a transaction of their own and reads go to the read pool.

var (
	_ store.ScheduleStore = (*queries)(nil)
	_ store.ScheduleStore = (*Store)(nil)
)

func scanSchedule(r scanner) (*store.Schedule, error) {
	var (
		s                   store.Schedule
		kind, missed, state string
		config, data        string
		next, last          sql.NullInt64
		created, updated    int64
	)
	if err := r.Scan(&s.ID, &kind, &s.Agent, &s.Name, &s.Owner, &s.Platform, &s.Workspace, &s.Channel,
		&s.Spec, &s.TimeZone, &s.Instruction, &config, &data, &missed, &s.Source, &state, &s.StateReason,
		&next, &last, &s.Runs, &created, &updated); err != nil {
		return nil, err
	}
	s.Kind = store.ScheduleKind(kind)
	s.Config = json.RawMessage(config)
	s.Data = json.RawMessage(data)
	s.Missed = store.MissedPolicy(missed)
	s.State = store.ScheduleState(state)
	s.NextRunAt = nullMicros(next)
	s.LastRunAt = nullMicros(last)
	s.CreatedAt = fromMicros(created)
	s.UpdatedAt = fromMicros(updated)
	return &s, nil
}

func scanScheduleRun(r scanner) (*store.ScheduleRun, error) {
	var (
		run              store.ScheduleRun
		due              int64
		conv             uuid.NullUUID
		status           string
		report           sql.NullString
		created, updated int64
	)
	if err := r.Scan(&run.ID, &run.ScheduleID, &run.Seq, &due, &conv, &status, &run.InputHash, &report,
		&run.Note, &created, &updated); err != nil {
		return nil, err
	}
	run.DueAt = fromMicros(due)
	run.ConversationID = nullUUID(conv)
	run.Status = store.ScheduleRunStatus(status)
	if report.Valid {
		run.Report = json.RawMessage(report.String)
	}
	run.CreatedAt = fromMicros(created)
	run.UpdatedAt = fromMicros(updated)
	return &run, nil
}

// microsArg is an optional time as a column value: NULL for nil.
func microsArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

// optText is an optional string-like value: NULL for nil.
func optText[T ~string](p *T) any {
	if p == nil {
		return nil
	}
	return string(*p)
}

// optJSONArg validates optional JSON: NULL (leave the column) for none.
func optJSONArg(field string, raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	s, err := jsonArg(field, raw, "")
	if err != nil {
		return nil, err
	}
	return s, nil
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
	var out *store.Schedule
	err = q.atomic(ctx, func() error {
		if p.MaxPerAgent > 0 {
			n, err := count(ctx, q.db, "ScheduleCountLive",
				sql.Named("agent", p.Agent), sql.Named("kind", string(p.Kind)), sql.Named("name", p.Name))
			if err != nil {
				return err
			}
			if n >= int64(p.MaxPerAgent) {
				exists := false
				if p.Upsert {
					_, ferr := q.ScheduleFind(ctx, p.Agent, p.Kind, p.Name)
					if ferr != nil && !errors.Is(ferr, store.ErrNotFound) {
						return ferr
					}
					exists = ferr == nil
				}
				if !exists {
					return fmt.Errorf("agent %s already has %d %ss (at most %d): %w", p.Agent, n, p.Kind, p.MaxPerAgent, store.ErrLimit)
				}
			}
		}
		name := "ScheduleInsert"
		if p.Upsert {
			name = "ScheduleUpsert"
		}
		s, err := scanSchedule(q.db.QueryRowContext(ctx, sqlText.Get(name),
			sql.Named("id", id.String()),
			sql.Named("kind", string(p.Kind)),
			sql.Named("agent", p.Agent),
			sql.Named("name", p.Name),
			sql.Named("owner", p.Owner),
			sql.Named("platform", p.Platform),
			sql.Named("workspace", p.Workspace),
			sql.Named("channel", p.Channel),
			sql.Named("spec", p.Spec),
			sql.Named("time_zone", p.TimeZone),
			sql.Named("instruction", p.Instruction),
			sql.Named("config", cfg),
			sql.Named("data", data),
			sql.Named("missed", string(missed)),
			sql.Named("source", p.Source),
			sql.Named("state", string(state)),
			sql.Named("next_run_at", microsArg(p.NextRunAt)),
			sql.Named("now", micros(q.now(p.Now)))))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: a %s named %q exists for agent %s", store.ErrConflict, p.Kind, p.Name, p.Agent)
		}
		if err != nil {
			return mapErr(err)
		}
		out = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", what, err)
	}
	return out, nil
}

func (q *queries) ScheduleGet(ctx context.Context, id uuid.UUID) (*store.Schedule, error) {
	s, err := queryOne(ctx, q.db, "ScheduleGet", scanSchedule, sql.Named("id", id.String()))
	if err != nil {
		return nil, fmt.Errorf("getting schedule %s: %w", id, err)
	}
	return s, nil
}

func (q *queries) ScheduleFind(ctx context.Context, agent string, kind store.ScheduleKind, name string) (*store.Schedule, error) {
	s, err := queryOne(ctx, q.db, "ScheduleFind", scanSchedule,
		sql.Named("agent", agent), sql.Named("kind", string(kind)), sql.Named("name", name))
	if err != nil {
		return nil, fmt.Errorf("finding %s %s/%s: %w", kind, agent, name, err)
	}
	return s, nil
}

func (q *queries) ScheduleList(ctx context.Context, p *store.ScheduleListParams) ([]*store.Schedule, error) {
	if p == nil {
		p = &store.ScheduleListParams{}
	}
	states := make([]string, len(p.States))
	for i, s := range p.States {
		states[i] = string(s)
	}
	statesJSON, err := json.Marshal(states)
	if err != nil {
		return nil, fmt.Errorf("listing schedules: encoding states: %w", err)
	}
	out, err := queryList(ctx, q.db, "ScheduleList", scanSchedule,
		sql.Named("agent", p.Agent),
		sql.Named("kind", string(p.Kind)),
		sql.Named("owner", p.Owner),
		sql.Named("states", string(statesJSON)),
		sql.Named("limit", limitArg(p.Limit)))
	if err != nil {
		return nil, fmt.Errorf("listing schedules: %w", err)
	}
	return out, nil
}

func (q *queries) ScheduleUpdate(ctx context.Context, p *store.ScheduleUpdateParams) (*store.Schedule, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("updating schedule: %w", err)
	}
	cfg, err := optJSONArg("Config", p.Config)
	if err != nil {
		return nil, fmt.Errorf("updating schedule %s: %w", p.ID, err)
	}
	data, err := optJSONArg("Data", p.Data)
	if err != nil {
		return nil, fmt.Errorf("updating schedule %s: %w", p.ID, err)
	}
	var out *store.Schedule
	err = q.atomic(ctx, func() error {
		s, err := scanSchedule(q.db.QueryRowContext(ctx, sqlText.Get("ScheduleUpdate"),
			sql.Named("id", p.ID.String()),
			sql.Named("spec", optText(p.Spec)),
			sql.Named("time_zone", optText(p.TimeZone)),
			sql.Named("instruction", optText(p.Instruction)),
			sql.Named("platform", optText(p.Platform)),
			sql.Named("workspace", optText(p.Workspace)),
			sql.Named("channel", optText(p.Channel)),
			sql.Named("config", cfg),
			sql.Named("data", data),
			sql.Named("missed", optText(p.Missed)),
			sql.Named("state", optText(p.State)),
			sql.Named("state_reason", optText(p.StateReason)),
			sql.Named("next_run_at", microsArg(p.NextRunAt)),
			sql.Named("clear_next", p.ClearNextRun),
			sql.Named("expect_state", optText(p.ExpectState)),
			sql.Named("now", micros(q.now(p.Now)))))
		if errors.Is(err, sql.ErrNoRows) {
			cur, gerr := q.ScheduleGet(ctx, p.ID)
			if gerr != nil {
				return gerr
			}
			return fmt.Errorf("%w: schedule is %s, want %v", store.ErrConflict, cur.State, optText(p.ExpectState))
		}
		if err != nil {
			return mapErr(err)
		}
		out = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("updating schedule %s: %w", p.ID, err)
	}
	return out, nil
}

func (q *queries) ScheduleAdvance(ctx context.Context, p *store.ScheduleAdvanceParams) (*store.Schedule, error) {
	if p == nil || p.ExpectNextRunAt.IsZero() {
		return nil, fmt.Errorf("advancing schedule: %w", invalid("ExpectNextRunAt is zero"))
	}
	var last any
	if !p.LastRunAt.IsZero() {
		last = micros(p.LastRunAt)
	}
	var out *store.Schedule
	err := q.atomic(ctx, func() error {
		s, err := scanSchedule(q.db.QueryRowContext(ctx, sqlText.Get("ScheduleAdvance"),
			sql.Named("id", p.ID.String()),
			sql.Named("expect_next", micros(p.ExpectNextRunAt)),
			sql.Named("next_run_at", microsArg(p.NextRunAt)),
			sql.Named("last_run_at", last),
			sql.Named("done", p.Done),
			sql.Named("now", micros(q.now(p.Now)))))
		if errors.Is(err, sql.ErrNoRows) {
			if _, gerr := q.ScheduleGet(ctx, p.ID); gerr != nil {
				return gerr
			}
			return fmt.Errorf("%w: no longer active and due at %s", store.ErrConflict,
				p.ExpectNextRunAt.UTC().Format(time.RFC3339Nano))
		}
		if err != nil {
			return mapErr(err)
		}
		out = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("advancing schedule %s: %w", p.ID, err)
	}
	return out, nil
}

func (q *queries) ScheduleDelete(ctx context.Context, id uuid.UUID) error {
	var n int64
	err := q.atomic(ctx, func() error {
		var err error
		n, err = exec(ctx, q.db, "ScheduleDelete", sql.Named("id", id.String()))
		return err
	})
	if err != nil {
		return fmt.Errorf("deleting schedule %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("deleting schedule %s: %w", id, store.ErrNotFound)
	}
	return nil
}

func (q *queries) ScheduleDue(ctx context.Context, now time.Time, limit int) ([]*store.Schedule, error) {
	out, err := queryList(ctx, q.db, "ScheduleDue", scanSchedule,
		sql.Named("now", micros(q.now(now))), sql.Named("limit", limitArg(limit)))
	if err != nil {
		return nil, fmt.Errorf("listing due schedules: %w", err)
	}
	return out, nil
}

func (q *queries) ScheduleRunCreate(ctx context.Context, p *store.ScheduleRunCreateParams) (*store.ScheduleRun, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("recording run: %w", err)
	}
	var out *store.ScheduleRun
	err := q.atomic(ctx, func() error {
		seq, err := count(ctx, q.db, "ScheduleRunNextSeq", sql.Named("id", p.ScheduleID.String()))
		if err != nil {
			return err
		}
		out, err = queryOne(ctx, q.db, "ScheduleRunInsert", scanScheduleRun,
			sql.Named("id", newID().String()),
			sql.Named("schedule_id", p.ScheduleID.String()),
			sql.Named("seq", seq),
			sql.Named("due_at", micros(p.DueAt)),
			sql.Named("conversation_id", uuidArg(p.ConversationID)),
			sql.Named("status", string(p.Status)),
			sql.Named("input_hash", p.InputHash),
			sql.Named("note", p.Note),
			sql.Named("now", micros(q.now(p.Now))))
		return err
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
	report, err := optJSONArg("Report", p.Report)
	if err != nil {
		return nil, fmt.Errorf("updating run %s: %w", p.ID, err)
	}
	var out *store.ScheduleRun
	err = q.atomic(ctx, func() error {
		var err error
		out, err = queryOne(ctx, q.db, "ScheduleRunUpdate", scanScheduleRun,
			sql.Named("id", p.ID.String()),
			sql.Named("status", optText(p.Status)),
			sql.Named("conversation_id", uuidArg(p.ConversationID)),
			sql.Named("report", report),
			sql.Named("note", optText(p.Note)),
			sql.Named("now", micros(q.now(p.Now))))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("updating run %s: %w", p.ID, err)
	}
	return out, nil
}

func (q *queries) ScheduleRunGet(ctx context.Context, id uuid.UUID) (*store.ScheduleRun, error) {
	r, err := queryOne(ctx, q.db, "ScheduleRunGet", scanScheduleRun, sql.Named("id", id.String()))
	if err != nil {
		return nil, fmt.Errorf("getting run %s: %w", id, err)
	}
	return r, nil
}

func (q *queries) ScheduleRunByConversation(ctx context.Context, conversationID uuid.UUID) (*store.ScheduleRun, error) {
	r, err := queryOne(ctx, q.db, "ScheduleRunByConversation", scanScheduleRun,
		sql.Named("conversation_id", conversationID.String()))
	if err != nil {
		return nil, fmt.Errorf("finding the run of conversation %s: %w", conversationID, err)
	}
	return r, nil
}

func (q *queries) ScheduleRunList(ctx context.Context, scheduleID uuid.UUID, limit int) ([]*store.ScheduleRun, error) {
	out, err := queryList(ctx, q.db, "ScheduleRunList", scanScheduleRun,
		sql.Named("schedule_id", scheduleID.String()), sql.Named("limit", limitArg(limit)))
	if err != nil {
		return nil, fmt.Errorf("listing runs of schedule %s: %w", scheduleID, err)
	}
	return out, nil
}

func (q *queries) ScheduleUsageTotal(ctx context.Context, scheduleID uuid.UUID) (*store.ScheduleUsage, error) {
	var u store.ScheduleUsage
	err := q.db.QueryRowContext(ctx, sqlText.Get("ScheduleUsageTotal"), sql.Named("schedule_id", scheduleID.String())).
		Scan(&u.Calls, &u.InputTokens, &u.OutputTokens, &u.CachedTokens, &u.ReasoningTokens, &u.CostMicroUSD)
	if err != nil {
		return nil, fmt.Errorf("summing usage of schedule %s: %w", scheduleID, mapErr(err))
	}
	return &u, nil
}

func (q *queries) ScheduleSweep(ctx context.Context, p *store.ScheduleSweepParams) (*store.ScheduleSweepResult, error) {
	if p == nil {
		return nil, fmt.Errorf("sweeping: %w", invalid("params are nil"))
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
	err := q.atomic(ctx, func() error {
		for _, st := range steps {
			if st.before.IsZero() {
				continue
			}
			n, err := exec(ctx, q.db, st.query, sql.Named("before", micros(st.before)), sql.Named("limit", limit))
			if err != nil {
				return fmt.Errorf("%s: %w", st.query, err)
			}
			*st.n = int(n)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sweeping: %w", err)
	}
	return res, nil
}

// ---- on the Store ----

func (s *Store) ScheduleCreate(ctx context.Context, p *store.ScheduleCreateParams) (*store.Schedule, error) {
	return write(ctx, s, false, func(q *queries) (*store.Schedule, error) { return q.ScheduleCreate(ctx, p) })
}

func (s *Store) ScheduleGet(ctx context.Context, id uuid.UUID) (*store.Schedule, error) {
	return s.reader().ScheduleGet(ctx, id)
}

func (s *Store) ScheduleFind(ctx context.Context, agent string, kind store.ScheduleKind, name string) (*store.Schedule, error) {
	return s.reader().ScheduleFind(ctx, agent, kind, name)
}

func (s *Store) ScheduleList(ctx context.Context, p *store.ScheduleListParams) ([]*store.Schedule, error) {
	return s.reader().ScheduleList(ctx, p)
}

func (s *Store) ScheduleUpdate(ctx context.Context, p *store.ScheduleUpdateParams) (*store.Schedule, error) {
	return write(ctx, s, false, func(q *queries) (*store.Schedule, error) { return q.ScheduleUpdate(ctx, p) })
}

func (s *Store) ScheduleAdvance(ctx context.Context, p *store.ScheduleAdvanceParams) (*store.Schedule, error) {
	return write(ctx, s, false, func(q *queries) (*store.Schedule, error) { return q.ScheduleAdvance(ctx, p) })
}

func (s *Store) ScheduleDelete(ctx context.Context, id uuid.UUID) error {
	_, err := write(ctx, s, false, func(q *queries) (struct{}, error) { return struct{}{}, q.ScheduleDelete(ctx, id) })
	return err
}

func (s *Store) ScheduleDue(ctx context.Context, now time.Time, limit int) ([]*store.Schedule, error) {
	return s.reader().ScheduleDue(ctx, now, limit)
}

func (s *Store) ScheduleRunCreate(ctx context.Context, p *store.ScheduleRunCreateParams) (*store.ScheduleRun, error) {
	return write(ctx, s, false, func(q *queries) (*store.ScheduleRun, error) { return q.ScheduleRunCreate(ctx, p) })
}

func (s *Store) ScheduleRunUpdate(ctx context.Context, p *store.ScheduleRunUpdateParams) (*store.ScheduleRun, error) {
	return write(ctx, s, false, func(q *queries) (*store.ScheduleRun, error) { return q.ScheduleRunUpdate(ctx, p) })
}

func (s *Store) ScheduleRunGet(ctx context.Context, id uuid.UUID) (*store.ScheduleRun, error) {
	return s.reader().ScheduleRunGet(ctx, id)
}

func (s *Store) ScheduleRunByConversation(ctx context.Context, conversationID uuid.UUID) (*store.ScheduleRun, error) {
	return s.reader().ScheduleRunByConversation(ctx, conversationID)
}

func (s *Store) ScheduleRunList(ctx context.Context, scheduleID uuid.UUID, limit int) ([]*store.ScheduleRun, error) {
	return s.reader().ScheduleRunList(ctx, scheduleID, limit)
}

func (s *Store) ScheduleUsageTotal(ctx context.Context, scheduleID uuid.UUID) (*store.ScheduleUsage, error) {
	return s.reader().ScheduleUsageTotal(ctx, scheduleID)
}

func (s *Store) ScheduleSweep(ctx context.Context, p *store.ScheduleSweepParams) (*store.ScheduleSweepResult, error) {
	return write(ctx, s, false, func(q *queries) (*store.ScheduleSweepResult, error) { return q.ScheduleSweep(ctx, p) })
}
