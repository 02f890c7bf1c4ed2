package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// Runs over the API: the list, one run with its steps, its events (which
// rebuild it after the fact), cancel and retry. Whoever may use the
// conversation a run came from may read and act on it.

// Runs acts on runs (core.Service).
type Runs interface {
	CancelRun(ctx context.Context, id uuid.UUID, by string) (*core.Run, error)
	RetryRun(ctx context.Context, id uuid.UUID, by string) (*core.Run, error)
}

var _ Runs = (*core.Service)(nil)

// RunJSON is a run; Steps is set when one run is read.
type RunJSON struct {
	ID           uuid.UUID      `json:"id"`
	Conversation uuid.UUID      `json:"conversation"`
	Workspace    *uuid.UUID     `json:"workspace,omitempty"`
	Lead         string         `json:"lead"`
	Goal         string         `json:"goal,omitempty"`
	Status       string         `json:"status"`
	Result       string         `json:"result,omitempty"`
	CreatedAt    time.Time      `json:"created_at"`
	FinishedAt   *time.Time     `json:"finished_at,omitempty"`
	Steps        []*RunStepJSON `json:"steps,omitempty"`
}

// RunStepJSON is a step of a run.
type RunStepJSON struct {
	ID           uuid.UUID         `json:"id"`
	Key          string            `json:"key"`
	Title        string            `json:"title"`
	Agent        string            `json:"agent"`
	Class        string            `json:"class"`
	Model        string            `json:"model,omitempty"`
	Inputs       map[string]string `json:"inputs,omitempty"`
	DependsOn    []string          `json:"depends_on,omitempty"`
	Status       string            `json:"status"`
	Conversation *uuid.UUID        `json:"conversation,omitempty"`
	Attempts     int               `json:"attempts"`
	InputTokens  int64             `json:"input_tokens"`
	OutputTokens int64             `json:"output_tokens"`
	CostMicroUSD int64             `json:"cost_micro_usd"`
	Output       string            `json:"output,omitempty"`
	Error        string            `json:"error,omitempty"`
	StartedAt    *time.Time        `json:"started_at,omitempty"`
	FinishedAt   *time.Time        `json:"finished_at,omitempty"`
	// Changes, for a coding step (inputs.repo), are its branch, its diff
	// against the base, its gates and where it was delivered.
	Changes *core.StepChanges `json:"changes,omitempty"`
}

// RunEventJSON is one transition of a run.
type RunEventJSON struct {
	ID     int64     `json:"id"`
	Step   string    `json:"step,omitempty"`
	Kind   string    `json:"kind"`
	Status string    `json:"status,omitempty"`
	Detail string    `json:"detail,omitempty"`
	At     time.Time `json:"at"`
}

// RunList is GET /api/runs.
type RunList struct {
	Runs []RunJSON `json:"runs"`
}

// RunEventList is GET /api/runs/{id}/events.
type RunEventList struct {
	Events []RunEventJSON `json:"events"`
}

// allowedRun reads the run named in the path, if the caller may use the
// conversation it came from (else, as for a missing run, 404).
func (a *API) allowedRun(r *http.Request) (*core.Run, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return nil, fmt.Errorf("%w: run id %q is not a UUID", core.ErrInvalid, r.PathValue("id"))
	}
	run, err := a.svc.Run(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if _, err := a.allowedConversationID(r, run.ConversationID); err != nil {
		return nil, err
	}
	return run, nil
}

// listRuns lists runs, newest first: ?status= (running, done, failed,
// cancelled), ?conversation=, ?limit= (default 50).
func (a *API) listRuns(w http.ResponseWriter, r *http.Request) error {
	p := core.RunFilter{Status: core.RunStatus(r.URL.Query().Get("status")), Limit: 50}
	if v := r.URL.Query().Get("conversation"); v != "" {
		id, err := parseID("conversation", v)
		if err != nil {
			return err
		}
		p.Conversation = &id
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return fmt.Errorf("%w: limit %q must be a number from 1 to 500", core.ErrInvalid, v)
		}
		p.Limit = n
	}
	runs, err := a.svc.Runs(r.Context(), p)
	if err != nil {
		return err
	}
	out := []RunJSON{}
	for _, run := range runs {
		if _, err := a.allowedConversationID(r, run.ConversationID); err != nil {
			continue // not the caller's
		}
		out = append(out, runJSON(run, nil))
	}
	writeJSON(w, http.StatusOK, RunList{Runs: out})
	return nil
}

func (a *API) getRun(w http.ResponseWriter, r *http.Request) error {
	run, err := a.allowedRun(r)
	if err != nil {
		return err
	}
	steps, err := a.svc.RunSteps(r.Context(), run.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, runJSON(run, steps))
	return nil
}

// runEvents lists a run's events oldest first; ?after= an event id pages.
func (a *API) runEvents(w http.ResponseWriter, r *http.Request) error {
	run, err := a.allowedRun(r)
	if err != nil {
		return err
	}
	var after int64
	if v := r.URL.Query().Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return fmt.Errorf("%w: after %q must be an event id", core.ErrInvalid, v)
		}
	}
	evs, err := a.svc.RunEvents(r.Context(), run.ID, after, 1000)
	if err != nil {
		return err
	}
	out := []RunEventJSON{}
	for _, e := range evs {
		out = append(out, RunEventJSON{ID: e.ID, Step: e.StepKey, Kind: e.Kind, Status: e.Status, Detail: e.Detail, At: e.CreatedAt})
	}
	writeJSON(w, http.StatusOK, RunEventList{Events: out})
	return nil
}

func (a *API) cancelRun(w http.ResponseWriter, r *http.Request) error {
	return a.actOnRun(w, r, func(ctx context.Context, id uuid.UUID, by string) (*core.Run, error) {
		return a.opts.Runs.CancelRun(ctx, id, by)
	})
}

func (a *API) retryRun(w http.ResponseWriter, r *http.Request) error {
	return a.actOnRun(w, r, func(ctx context.Context, id uuid.UUID, by string) (*core.Run, error) {
		return a.opts.Runs.RetryRun(ctx, id, by)
	})
}

func (a *API) actOnRun(w http.ResponseWriter, r *http.Request, act func(context.Context, uuid.UUID, string) (*core.Run, error)) error {
	run, err := a.allowedRun(r)
	if err != nil {
		return err
	}
	if a.opts.Runs == nil {
		return &httpError{status: http.StatusNotImplemented, msg: "runs cannot be acted on here"}
	}
	if run, err = act(r.Context(), run.ID, caller(r)); err != nil {
		return err
	}
	steps, err := a.svc.RunSteps(r.Context(), run.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, runJSON(run, steps))
	return nil
}

func runJSON(r *core.Run, steps []*core.RunStep) RunJSON {
	out := RunJSON{
		ID: r.ID, Conversation: r.ConversationID, Workspace: r.WorkspaceID, Lead: r.LeadAgent, Goal: r.Goal,
		Status: string(r.Status), Result: r.Result, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt,
	}
	for _, s := range steps {
		out.Steps = append(out.Steps, &RunStepJSON{
			ID: s.ID, Key: s.Key, Title: s.Title, Agent: s.Agent, Class: s.Class, Model: s.Model, Inputs: s.Inputs,
			DependsOn: s.DependsOn, Status: string(s.Status), Conversation: s.ConversationID, Attempts: s.Attempts,
			InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, CostMicroUSD: s.CostMicroUSD, Output: s.Output,
			Error: s.Error, StartedAt: s.StartedAt, FinishedAt: s.FinishedAt, Changes: core.StepChangesOf(s),
		})
	}
	return out
}
