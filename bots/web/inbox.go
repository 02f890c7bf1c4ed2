package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// The approvals inbox: the confirmations and questions waiting in the
// conversations the caller may see, and deciding one of them by its
// conversation and call (approvals.go has the shape and the decision).

// ApprovalList is the inbox.
type ApprovalList struct {
	Approvals []ApprovalJSON `json:"approvals"`
}

// DecideRequest is the body of POST /api/conversations/{id}/decide.
type DecideRequest struct {
	CallID string `json:"call_id"`
	// Value is the decision ("approve", "always", "always_args", "deny")
	// or a question's answer.
	Value string `json:"value"`
}

// inboxLimit bounds how many pending approvals the inbox lists.
const inboxLimit = 500

// approvalList answers GET /api/approvals: the pending approvals in the
// conversations of the workspaces the caller may see, oldest first.
func (a *API) approvalList(w http.ResponseWriter, r *http.Request) error {
	all, ids, err := a.visibleWorkspaces(r.Context(), principal(r))
	if err != nil {
		return err
	}
	aps, err := a.svc.PendingApprovals(r.Context(), &core.ApprovalListVisibleParams{All: all, Workspaces: ids, Limit: inboxLimit})
	if err != nil {
		return err
	}
	out := make([]ApprovalJSON, len(aps))
	for i, ap := range aps {
		out[i] = approvalJSON(ap)
	}
	writeJSON(w, http.StatusOK, ApprovalList{Approvals: out})
	return nil
}

// decide answers POST /api/conversations/{id}/decide {"call_id", "value"}:
// the caller's decision on a pending confirmation ("approve", "always",
// "always_args" or "deny") or answer to a question, as a click on the
// platform's button would give it. It answers with the decided approval.
func (a *API) decide(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	var body DecideRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if body.CallID == "" || body.Value == "" {
		return fmt.Errorf("%w: call_id and value are required", core.ErrInvalid)
	}
	ap, err := a.svc.ApprovalOfCall(r.Context(), id, body.CallID)
	if errors.Is(err, core.ErrNotFound) {
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("call %s of conversation %s waits for no decision", body.CallID, id)}
	}
	if err != nil {
		return err
	}
	ap, err = a.decideAs(r, ap, body.Value, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, approvalJSON(ap))
	return nil
}
