package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/run/plan"
)

// Starting a run without a chat: POST /api/runs opens a conversation of
// the lead's to hold the run, in the workspace POST /api/conversations
// would put it in, and starts the plan there. Who may open that
// conversation may start the run, and whoever may use it then reads and
// acts on the run as on any other (runs.go).

// RunStarts starts runs outside a chat (core/runs_start.go).
type RunStarts interface {
	StartRunWith(ctx context.Context, p *core.StartRunParams) (*core.Run, error)
}

var _ RunStarts = (*core.Service)(nil)

// StartRunRequest is the body of POST /api/runs.
type StartRunRequest struct {
	// Lead is the agent that leads the run; an agent's session may name
	// only its own agent (the default).
	Lead string `json:"lead"`
	// Plan is the plan_run tool's input: a goal and steps.
	Plan *plan.Plan `json:"plan"`
	// Workspace is a workspace id, or a Slack team or Discord guild bound
	// to one; default as for POST /api/conversations: a person's personal
	// workspace, the operator's none.
	Workspace string `json:"workspace,omitempty"`
	// Title names the run's conversation; default the plan's goal.
	Title string `json:"title,omitempty"`
}

// startRun answers 201 with the run and its steps, as GET /api/runs/{id}
// would.
func (a *API) startRun(w http.ResponseWriter, r *http.Request) error {
	var body StartRunRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if err := a.mayCreateConversation(r, &body.Lead); err != nil {
		return err
	}
	switch {
	case body.Lead == "":
		return fmt.Errorf("%w: lead: is required (the agent that leads the run)", core.ErrInvalid)
	case body.Plan == nil:
		return fmt.Errorf("%w: plan: is required (a goal and steps, as the plan_run tool takes)", core.ErrInvalid)
	}
	ws, err := a.workspaceForRun(r, body.Workspace)
	if err != nil {
		return err
	}
	run, err := a.svc.StartRunWith(r.Context(), &core.StartRunParams{
		Lead: body.Lead, Plan: body.Plan, Title: body.Title, Starter: caller(r), WorkspaceID: ws,
	})
	if err != nil {
		return err
	}
	steps, err := a.svc.RunSteps(r.Context(), run.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, runJSON(run, steps))
	return nil
}

// workspaceForRun is workspaceForNew for a workspace named as the other
// endpoints take one: its id, or a Slack team or Discord guild bound to it.
func (a *API) workspaceForRun(r *http.Request, asked string) (*uuid.UUID, error) {
	var id *uuid.UUID
	if asked != "" {
		ws, err := a.svc.Workspaces().Named(r.Context(), asked)
		if err != nil {
			return nil, err
		}
		id = &ws
	}
	return a.svc.Workspaces().ForNew(r.Context(), principal(r).actor(), id)
}
