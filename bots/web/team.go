package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// Agents working together, as people read it: a delegated task with the
// factors of its choice, and a conversation's side threads. Whoever may
// use the conversation a task was delegated from (or the side threads were
// opened in) may read them.

// DelegationJSON is a delegated task. Factors is the recorded choice:
// chosen, chosen_by (name or score), the weights and every candidate's
// factors and score, best first.
type DelegationJSON struct {
	ID               uuid.UUID       `json:"id"`
	FromConversation uuid.UUID       `json:"from_conversation"`
	FromAgent        string          `json:"from_agent"`
	ToAgent          string          `json:"to_agent"`
	Conversation     uuid.UUID       `json:"conversation"`
	Task             string          `json:"task"`
	Status           string          `json:"status"`
	Result           string          `json:"result,omitempty"`
	Factors          json.RawMessage `json:"factors"`
	CreatedAt        time.Time       `json:"created_at"`
	FinishedAt       *time.Time      `json:"finished_at,omitempty"`
}

func (a *API) getDelegation(w http.ResponseWriter, r *http.Request) error {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return &httpError{status: http.StatusBadRequest, msg: "the delegation id is not a UUID"}
	}
	d, err := a.svc.DelegationByID(r.Context(), id)
	if err != nil {
		return err
	}
	if _, err := a.allowedConversationID(r, d.FromConversation); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, delegationJSON(d))
	return nil
}

// SideThreadJSON is a side thread of a conversation.
type SideThreadJSON struct {
	ID           uuid.UUID `json:"id"`
	Conversation uuid.UUID `json:"conversation"` // the side conversation
	ParentSeq    int64     `json:"parent_seq"`
	Agents       []string  `json:"agents"` // the opener first
	Status       string    `json:"status"`
	Summary      string    `json:"summary,omitempty"`
	FinishedBy   string    `json:"finished_by,omitempty"`
	ProgressAt   time.Time `json:"progress_at"`
}

// SideThreadList is a conversation's side threads and delegations.
type SideThreadList struct {
	SideThreads []SideThreadJSON `json:"side_threads"`
	Delegations []DelegationJSON `json:"delegations"`
}

// listSideThreads lists the side threads opened in a conversation, with
// its delegations: {"side_threads": [...], "delegations": [...]}.
func (a *API) listSideThreads(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	ths, err := a.svc.SideThreads(r.Context(), id)
	if err != nil {
		return err
	}
	ds, err := a.svc.Delegations(r.Context(), id)
	if err != nil {
		return err
	}
	out := SideThreadList{SideThreads: []SideThreadJSON{}, Delegations: []DelegationJSON{}}
	for _, t := range ths {
		out.SideThreads = append(out.SideThreads, sideThreadJSON(t))
	}
	for _, d := range ds {
		out.Delegations = append(out.Delegations, delegationJSON(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func delegationJSON(d *core.Delegation) DelegationJSON {
	return DelegationJSON{
		ID: d.ID, FromConversation: d.FromConversation, FromAgent: d.FromAgent, ToAgent: d.ToAgent, Conversation: d.ChildID,
		Task: d.Task, Status: string(d.Status), Result: d.Result, Factors: d.Factors, CreatedAt: d.CreatedAt, FinishedAt: d.FinishedAt,
	}
}

func sideThreadJSON(t *core.SideThread) SideThreadJSON {
	return SideThreadJSON{
		ID: t.ID, Conversation: t.ChildID, ParentSeq: t.ParentSeq, Agents: t.Agents(), Status: string(t.Status),
		Summary: t.Summary, FinishedBy: t.FinishedBy, ProgressAt: t.ProgressAt,
	}
}
