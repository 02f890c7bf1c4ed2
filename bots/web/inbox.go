package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Actor is what the API needs of core to decide an approval: a click,
// as a platform's button would send it. *core.Service implements it.
type Actor interface {
	Act(ctx context.Context, a *core.Action) (*core.ActionResult, error)
}

// inboxRoutes serves the approvals inbox: the confirmations and
// questions waiting in the conversations the caller may see, and deciding
// one of them.
func (a *API) inboxRoutes(mux *http.ServeMux) {
	if a.opts.Actor == nil {
		return
	}
	mux.Handle("GET /api/approvals", a.handle(a.approvalList))
	mux.Handle("POST /api/conversations/{id}/decide", a.handle(a.decide))
}

type inboxApprovalJSON struct {
	ID             uuid.UUID       `json:"id"`
	ConversationID uuid.UUID       `json:"conversation_id"`
	CallID         string          `json:"call_id"`
	Tool           string          `json:"tool"`
	Kind           string          `json:"kind"`
	Risk           string          `json:"risk"`
	Request        json.RawMessage `json:"request"`
	Deciders       []string        `json:"deciders"`
	CreatedAt      time.Time       `json:"created_at"`
	ExpiresAt      time.Time       `json:"expires_at"`
}

// inboxScan bounds how many of the caller's most recently active
// conversations the inbox looks through.
const inboxScan = 200

// approvalList answers GET /api/approvals: the pending approvals of the
// paused conversations the caller may see, among its most recently active
// ones.
func (a *API) approvalList(w http.ResponseWriter, r *http.Request) error {
	all, ids, err := a.visibleWorkspaces(r.Context(), principal(r))
	if err != nil {
		return err
	}
	convs, err := a.st.ConversationList(r.Context(), &store.ConversationListParams{All: all, Workspaces: ids, Limit: inboxScan})
	if err != nil {
		return err
	}
	out := []inboxApprovalJSON{}
	for _, c := range convs {
		if c.Status != store.ConversationPaused {
			continue
		}
		aps, err := a.st.ApprovalListPending(r.Context(), c.ID)
		if err != nil {
			return err
		}
		for _, ap := range aps {
			out = append(out, inboxApprovalJSON{
				ID: ap.ID, ConversationID: ap.ConversationID, CallID: ap.CallID, Tool: ap.Tool, Kind: string(ap.Kind),
				Risk: ap.Risk, Request: ap.Request, Deciders: ap.Deciders, CreatedAt: ap.CreatedAt, ExpiresAt: ap.ExpiresAt,
			})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
	return nil
}

// decide answers POST /api/conversations/{id}/decide {"call_id", "value"}:
// the caller's decision on a pending confirmation ("approve", "always",
// "always_args" or "deny") or answer to a question, as a click on the
// platform's button would give it. The operator may decide any; a person
// what was asked of them.
func (a *API) decide(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	var body struct {
		CallID string `json:"call_id"`
		Value  string `json:"value"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if body.CallID == "" || body.Value == "" {
		return fmt.Errorf("%w: call_id and value are required", core.ErrInvalid)
	}
	p := principal(r)
	act := &core.Action{
		Platform: "web", EventID: "decide:" + id.String() + ":" + body.CallID + ":" + p.Name(),
		ConversationID: id, CallID: body.CallID, Value: body.Value,
		UserID: caller(r), UserName: p.Name(), Operator: p.Admin(), At: a.opts.Now(),
	}
	if p.Kind == PrincipalPerson {
		if person, err := a.st.PersonGet(r.Context(), p.PersonID); err == nil && person.DisplayName != "" {
			act.UserName = person.DisplayName
		}
	}
	res, err := a.opts.Actor.Act(r.Context(), act)
	if err != nil {
		return err
	}
	switch {
	case res.Refused:
		return &httpError{status: http.StatusForbidden, msg: res.Reason}
	case res.Duplicate:
		return &httpError{status: http.StatusConflict, msg: "this was already decided"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation_id": id, "call_id": body.CallID, "decided": body.Value})
	return nil
}
