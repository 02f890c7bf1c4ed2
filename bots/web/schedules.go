package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/scheduler"
)

// Schedules pauses and resumes schedules; *scheduler.Scheduler implements
// it.
type Schedules interface {
	Pause(ctx context.Context, sc *core.Schedule, reason string) (*core.Schedule, error)
	Resume(ctx context.Context, sc *core.Schedule) (*core.Schedule, error)
	RunNow(ctx context.Context, sc *core.Schedule) (*scheduler.RunNowResult, error)
}

// The operator's view of schedules: routines, pulses, reminders and loops,
// with pause, resume and run now.

// ScheduleList is GET /api/schedules.
type ScheduleList struct {
	Schedules []scheduleJSON `json:"schedules"`
}

type scheduleJSON struct {
	ID          uuid.UUID  `json:"id"`
	Kind        string     `json:"kind"`
	Agent       string     `json:"agent"`
	Name        string     `json:"name"`
	Owner       string     `json:"owner"`
	Spec        string     `json:"spec"`
	TimeZone    string     `json:"time_zone,omitempty"`
	Instruction string     `json:"instruction"`
	State       string     `json:"state"`
	StateReason string     `json:"state_reason,omitempty"`
	NextRunAt   *time.Time `json:"next_run_at,omitempty"`
	LastRunAt   *time.Time `json:"last_run_at,omitempty"`
	Runs        int64      `json:"runs"`
}

func toScheduleJSON(sc *core.Schedule) scheduleJSON {
	return scheduleJSON{
		ID: sc.ID, Kind: string(sc.Kind), Agent: sc.Agent, Name: sc.Name, Owner: sc.Owner, Spec: sc.Spec, TimeZone: sc.TimeZone,
		Instruction: sc.Instruction, State: string(sc.State), StateReason: sc.StateReason, NextRunAt: sc.NextRunAt,
		LastRunAt: sc.LastRunAt, Runs: sc.Runs,
	}
}

// maxScheduleList bounds GET /api/schedules.
const maxScheduleList = 500

func (a *API) scheduleList(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(principal(r), "list every schedule"); err != nil {
		return err
	}
	list, err := a.svc.Schedules(r.Context(), principal(r).actor(), maxScheduleList)
	if err != nil {
		return err
	}
	out := make([]scheduleJSON, 0, len(list))
	for _, sc := range list {
		out = append(out, toScheduleJSON(sc))
	}
	writeJSON(w, http.StatusOK, ScheduleList{Schedules: out})
	return nil
}

// scheduleAction reads the schedule of an operator's action on one
// (what names the action in the refusal), with its empty JSON body.
func (a *API) scheduleAction(w http.ResponseWriter, r *http.Request, what string) (*core.Schedule, error) {
	if err := operatorOnly(principal(r), what); err != nil {
		return nil, err
	}
	if err := decode(w, r, &struct{}{}, true); err != nil {
		return nil, err
	}
	id, err := parseID("schedule", r.PathValue("schedule"))
	if err != nil {
		return nil, err
	}
	return a.svc.Schedule(r.Context(), principal(r).actor(), id)
}

// scheduleState pauses or resumes a schedule, as its owner's command would.
func (a *API) scheduleState(w http.ResponseWriter, r *http.Request) error {
	sc, err := a.scheduleAction(w, r, "pause or resume schedules")
	if err != nil {
		return err
	}
	if strings.HasSuffix(r.URL.Path, "/pause") {
		sc, err = a.opts.Schedules.Pause(r.Context(), sc, "paused by the operator in the console")
	} else {
		sc, err = a.opts.Schedules.Resume(r.Context(), sc)
	}
	if errors.Is(err, scheduler.ErrInvalid) {
		return &httpError{status: http.StatusConflict, msg: err.Error()} // already paused, or done
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toScheduleJSON(sc))
	return nil
}

// runNowJSON is the answer of POST /api/schedules/{id}/run.
type runNowJSON struct {
	// Schedule is the schedule after the run now (a reminder run now is
	// done).
	Schedule scheduleJSON `json:"schedule"`
	// Due is the occurrence fired: now to the minute for a routine or
	// pulse, the reminder's own time, now for a loop's iteration.
	Due *time.Time `json:"due,omitempty"`
	// Fired is false when that occurrence had already been fired and nothing
	// new was queued.
	Fired bool `json:"fired"`
	// NextRunAt is when it fires next on its own; absent when nothing is
	// scheduled (a reminder done, a loop's iteration under way).
	NextRunAt *time.Time `json:"next_run_at,omitempty"`
	// Note says what happened, for the person who clicked.
	Note string `json:"note"`
}

// scheduleRunNow fires a schedule of any kind once now, through the
// scheduler's fire path (scheduler.RunNow says what that means for each
// kind); what was already fired is not fired again ("fired": false).
func (a *API) scheduleRunNow(w http.ResponseWriter, r *http.Request) error {
	sc, err := a.scheduleAction(w, r, "run schedules now")
	if err != nil {
		return err
	}
	res, err := a.opts.Schedules.RunNow(r.Context(), sc)
	if errors.Is(err, scheduler.ErrInvalid) {
		return &httpError{status: http.StatusConflict, msg: err.Error()} // paused, blocked, or a loop that ended
	}
	if err != nil {
		return err
	}
	out := runNowJSON{Schedule: toScheduleJSON(sc), Fired: res.Fired, NextRunAt: res.Next, Note: res.Note}
	if res.Schedule != nil {
		out.Schedule = toScheduleJSON(res.Schedule)
	}
	if !res.Due.IsZero() {
		out.Due = &res.Due
	}
	writeJSON(w, http.StatusAccepted, out)
	return nil
}
