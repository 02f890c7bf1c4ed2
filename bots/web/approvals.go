package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Approvals over the API: a call waiting for a person (a confirmation or a
// question) can be listed (GET /api/approvals, inbox.go), read (GET
// /api/approvals/{id}) and decided, by its id (POST /api/approvals/{id}
// {"choice"}) or by its conversation and call (POST
// /api/conversations/{id}/decide {"call_id", "value"}). Whoever may see
// the conversation may read it; who may decide is core's rule (the
// operator any; a person what was asked of them, under
// approvals.deciders). Every decision takes the same path as a button
// click (core.Service.Act, through decideAs): the turn resumes and
// finishes. Both decision routes answer with the decided approval.

// Actor is what the API needs of core to decide an approval: a click,
// as a platform's button would send it. *core.Service implements it.
type Actor interface {
	Act(ctx context.Context, a *core.Action) (*core.ActionResult, error)
}

// Decider is Actor, by the name the approvals API first gave it.
type Decider = Actor

var _ Actor = (*core.Service)(nil)

// ApprovalJSON is an approval as the API shows it, in the inbox and alone.
type ApprovalJSON struct {
	ID             string          `json:"id"`
	ConversationID string          `json:"conversation_id"`
	CallID         string          `json:"call_id"`
	Tool           string          `json:"tool"`
	Kind           string          `json:"kind"`
	Risk           string          `json:"risk"`
	Status         string          `json:"status"`
	Request        json.RawMessage `json:"request"`
	Deciders       []string        `json:"deciders"`
	DecidedBy      string          `json:"decided_by,omitempty"`
	ExpiresAt      time.Time       `json:"expires_at"`
	CreatedAt      time.Time       `json:"created_at"`
}

func approvalJSON(ap *core.Approval) ApprovalJSON {
	deciders := ap.Deciders
	if deciders == nil {
		deciders = []string{}
	}
	return ApprovalJSON{
		ID: ap.ID.String(), ConversationID: ap.ConversationID.String(), CallID: ap.CallID, Tool: ap.Tool,
		Kind: string(ap.Kind), Risk: ap.Risk, Status: string(ap.Status), Request: ap.Request, Deciders: deciders,
		DecidedBy: ap.DecidedBy, ExpiresAt: ap.ExpiresAt, CreatedAt: ap.CreatedAt,
	}
}

// actor is what takes decisions: Options.Actor, else the service when it
// can; nil when neither.
func (a *API) actor() Actor {
	if a.opts.Actor != nil {
		return a.opts.Actor
	}
	if d, ok := a.svc.(Actor); ok {
		return d
	}
	return nil
}

// approval reads the approval of the path, if the caller may see its
// conversation (404 otherwise, as for a conversation).
func (a *API) approval(r *http.Request) (*core.Approval, error) {
	id, err := parseID("approval id", r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	ap, err := a.svc.Approval(r.Context(), id)
	if errors.Is(err, core.ErrNotFound) {
		return nil, &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("approval %s not found", id)}
	}
	if err != nil {
		return nil, err
	}
	if _, err := a.allowedConversationID(r, ap.ConversationID); errors.Is(err, core.ErrNotFound) {
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

// ChoiceRequest is the body of POST /api/approvals/{id}.
type ChoiceRequest struct {
	// Choice is "approve", "always", "always_args" or "deny" for a
	// confirmation; a question's answer, or the index of one of its
	// choices.
	Choice string `json:"choice"`
}

// decideApproval decides: {"choice": "approve" | "always" | "always_args" |
// "deny"} for a confirmation, {"choice": "<answer>"} for a question (an
// answer may also be the index of one of its choices).
func (a *API) decideApproval(w http.ResponseWriter, r *http.Request) error {
	ap, err := a.approval(r)
	if err != nil {
		return err
	}
	var body ChoiceRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if body.Choice == "" {
		return &httpError{status: http.StatusBadRequest, msg: `choice is empty: want "approve", "always", "always_args" or "deny" (or a question's answer)`}
	}
	ap, err = a.decideAs(r, ap, body.Choice, true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, approvalJSON(ap))
	return nil
}

// decideAs takes the caller's decision on ap, as a click on the platform's
// button would, and returns the approval as decided. byID says the
// decision names the approval (a question's answer may then be the index
// of a choice); else it names the conversation's call.
func (a *API) decideAs(r *http.Request, ap *core.Approval, value string, byID bool) (*core.Approval, error) {
	act := a.actor()
	if act == nil {
		return nil, &httpError{status: http.StatusNotImplemented, msg: "this service takes no decisions over the API"}
	}
	if ap.Kind == core.ApprovalConfirm {
		switch value {
		case core.ChoiceAllowOnce, core.ChoiceAlwaysAllow, core.ChoiceAlwaysAllowArgs, core.ChoiceDeny:
		default:
			return nil, &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf(`decision %q: want "approve", "always", "always_args" or "deny"`, value)}
		}
	}
	p := principal(r)
	action := &core.Action{
		Platform: "web", EventID: "decide:" + ap.ID.String() + ":" + p.Name(),
		ConversationID: ap.ConversationID, CallID: ap.CallID, Value: value,
		UserID: p.Name(), Operator: p.Admin(), At: a.opts.Now(),
	}
	if byID {
		action.ActionID = core.ApprovalActionID(ap.ID)
	}
	if p.Kind == PrincipalPerson {
		if person, err := a.svc.Person(r.Context(), p.PersonID); err == nil && person.DisplayName != "" {
			action.UserName = person.DisplayName
		}
	}
	res, err := act.Act(r.Context(), action)
	if err != nil {
		return nil, err
	}
	switch {
	case res.Refused:
		return nil, &httpError{status: http.StatusForbidden, msg: res.Reason}
	case res.Duplicate:
		return nil, &httpError{status: http.StatusConflict, msg: fmt.Sprintf("approval %s was decided already", ap.ID)}
	}
	return a.svc.Approval(r.Context(), ap.ID)
}
