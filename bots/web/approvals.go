package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Approvals over the API: a call waiting for a person (an agent called
// through /mcp, or from an API conversation, that hit a confirm rule) can
// be read and decided here by the caller who asked (the principal that
// posted the message, under approvals.deciders: starter) and by the
// operator; admins, under approvals.deciders: admins, decide on the
// platforms. The decision takes the same
// path as a button click (core.Service.Act): the turn resumes and
// finishes.

// Decider is the part of the service that takes a decision.
type Decider interface {
	Act(ctx context.Context, a *core.Action) (*core.ActionResult, error)
}

var _ Decider = (*core.Service)(nil)

// ApprovalJSON is an approval as the API shows it.
type ApprovalJSON struct {
	ID             string          `json:"id"`
	ConversationID string          `json:"conversation_id"`
	CallID         string          `json:"call_id"`
	Tool           string          `json:"tool"`
	Kind           string          `json:"kind"`
	Risk           string          `json:"risk"`
	Status         string          `json:"status"`
	Request        json.RawMessage `json:"request"`
	DecidedBy      string          `json:"decided_by,omitempty"`
	ExpiresAt      time.Time       `json:"expires_at"`
	CreatedAt      time.Time       `json:"created_at"`
}

func approvalJSON(ap *store.Approval) ApprovalJSON {
	return ApprovalJSON{
		ID: ap.ID.String(), ConversationID: ap.ConversationID.String(), CallID: ap.CallID, Tool: ap.Tool,
		Kind: string(ap.Kind), Risk: ap.Risk, Status: string(ap.Status), Request: ap.Request, DecidedBy: ap.DecidedBy,
		ExpiresAt: ap.ExpiresAt, CreatedAt: ap.CreatedAt,
	}
}

func (a *API) approvalRoutes(mux *http.ServeMux) {
	mux.Handle("GET /api/approvals/{id}", a.handle(a.getApproval))
	mux.Handle("POST /api/approvals/{id}", a.handle(a.decideApproval))
}

// approval reads the approval of the path, if the caller may see its
// conversation (404 otherwise, as for a conversation).
func (a *API) approval(r *http.Request) (*store.Approval, error) {
	id, err := parseID("approval id", r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	ap, err := a.st.ApprovalGet(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("approval %s not found", id)}
	}
	if err != nil {
		return nil, err
	}
	if _, err := a.allowedConversationID(r, ap.ConversationID); errors.Is(err, store.ErrNotFound) {
		return nil, &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("approval %s not found", id)}
	} else if err != nil {
		return nil, err
	}
	return ap, nil
}

func (a *API) getApproval(w http.ResponseWriter, r *http.Request) error {
	ap, err := a.approval(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, approvalJSON(ap))
	return nil
}

// decideApproval decides: {"choice": "approve" | "always" | "always_args" |
// "deny"} for a confirmation, {"choice": "<answer>"} for a question.
func (a *API) decideApproval(w http.ResponseWriter, r *http.Request) error {
	d, ok := a.svc.(Decider)
	if !ok {
		return &httpError{status: http.StatusNotImplemented, msg: "this service takes no decisions over the API"}
	}
	ap, err := a.approval(r)
	if err != nil {
		return err
	}
	var body struct {
		Choice string `json:"choice"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if body.Choice == "" {
		return &httpError{status: http.StatusBadRequest, msg: `choice is empty: want "approve", "always", "always_args" or "deny" (or a question's answer)`}
	}
	if ap.Kind == store.ApprovalConfirm {
		switch body.Choice {
		case core.ChoiceAllowOnce, core.ChoiceAlwaysAllow, core.ChoiceAlwaysAllowArgs, core.ChoiceDeny:
		default:
			return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf(`choice %q: want "approve", "always", "always_args" or "deny"`, body.Choice)}
		}
	}
	p := principal(r)
	res, err := d.Act(r.Context(), &core.Action{
		Platform: "api", ActionID: core.ApprovalActionID(ap.ID), Value: body.Choice,
		UserID: p.Name(), Operator: p.Admin(), At: time.Now(),
	})
	if err != nil {
		return err
	}
	switch {
	case res.Refused:
		return &httpError{status: http.StatusForbidden, msg: res.Reason}
	case res.Duplicate:
		return &httpError{status: http.StatusConflict, msg: fmt.Sprintf("approval %s was decided already", ap.ID)}
	}
	ap, err = a.st.ApprovalGet(r.Context(), ap.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, approvalJSON(ap))
	return nil
}
