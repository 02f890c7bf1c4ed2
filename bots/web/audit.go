package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// The audit of guarded tool calls, read: GET /api/audit, and the page the
// switchboard audit command prints.

// Page sizes of the audit list.
const (
	DefaultAuditPage = 50
	MaxAuditPage     = 200
)

// AuditQuery is a filtered read of the audit, newest first. Empty fields
// filter nothing.
type AuditQuery struct {
	// Workspace is a Switchboard workspace id or, in its older form, the
	// platform workspace (Slack team, Discord guild) of the conversation's
	// binding.
	Workspace    string
	Agent        string
	Conversation *uuid.UUID
	Tool         string
	Decision     string
	Outcome      core.AuditOutcome
	From, To     time.Time // From inclusive, To exclusive
	Cursor       string    // a next_cursor from the page before
	Limit        int       // 0 means DefaultAuditPage
}

// AuditRecordJSON is one audit row as the API and the CLI show it.
type AuditRecordJSON struct {
	ID             uuid.UUID         `json:"id"`
	ConversationID *uuid.UUID        `json:"conversation_id"`
	CallID         string            `json:"call_id"`
	Agent          string            `json:"agent"`
	Actor          string            `json:"actor"`
	Tool           string            `json:"tool"`
	Risk           string            `json:"risk"`
	Decision       string            `json:"decision"`
	Outcome        core.AuditOutcome `json:"outcome"`
	DecidedBy      string            `json:"decided_by"`
	Detail         json.RawMessage   `json:"detail"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
}

// AuditPage is one page of the audit; NextCursor is empty on the last.
type AuditPage struct {
	Records    []AuditRecordJSON `json:"records"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// WorkspaceID is the Workspace filter when it names a Switchboard
// workspace (a UUID; Slack team and Discord guild ids never parse as one).
func (q *AuditQuery) WorkspaceID() (uuid.UUID, bool) {
	id, err := uuid.Parse(q.Workspace)
	return id, err == nil && q.Workspace != ""
}

// ListAudit reads one page of the audit from st.
func ListAudit(ctx context.Context, st store.Queries, q *AuditQuery) (*AuditPage, error) {
	limit := q.Limit
	if limit == 0 {
		limit = DefaultAuditPage
	}
	if limit < 1 || limit > MaxAuditPage {
		return nil, fmt.Errorf("%w: limit %d is outside 1..%d", core.ErrInvalid, q.Limit, MaxAuditPage)
	}
	p := &store.AuditListParams{
		Workspace: q.Workspace, Agent: q.Agent, ConversationID: q.Conversation, Action: q.Tool,
		Decision: q.Decision, Outcome: q.Outcome, From: q.From, To: q.To,
		Limit: limit + 1, // one more says whether a next page exists
	}
	if id, ok := q.WorkspaceID(); ok {
		p.Workspace, p.WorkspaceID = "", &id
	}
	if q.Cursor != "" {
		c, err := store.ParseAuditCursor(q.Cursor)
		if err != nil {
			return nil, fmt.Errorf("cursor: %w", err)
		}
		p.After = c
	}
	rows, err := st.AuditList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("reading the audit: %w", err)
	}
	page := &AuditPage{Records: []AuditRecordJSON{}}
	if len(rows) > limit {
		rows = rows[:limit]
		page.NextCursor = store.CursorOf(rows[limit-1]).String()
	}
	for _, r := range rows {
		page.Records = append(page.Records, AuditRecordJSON{
			ID: r.ID, ConversationID: r.ConversationID, CallID: r.CallID, Agent: r.Agent, Actor: r.Actor,
			Tool: r.Action, Risk: r.Risk, Decision: r.Decision, Outcome: r.Outcome, DecidedBy: r.DecidedBy,
			Detail: r.Detail, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		})
	}
	return page, nil
}

// ParseAuditQuery reads the filters of GET /api/audit: workspace, agent,
// conversation, tool, decision, outcome, from and to (RFC 3339), limit
// and cursor.
func ParseAuditQuery(v url.Values) (*AuditQuery, error) {
	q := &AuditQuery{
		Workspace: v.Get("workspace"), Agent: v.Get("agent"), Tool: v.Get("tool"),
		Decision: v.Get("decision"), Outcome: core.AuditOutcome(v.Get("outcome")), Cursor: v.Get("cursor"),
	}
	if q.Outcome != "" && !q.Outcome.Valid() {
		return nil, fmt.Errorf("%w: outcome %q is not one of pending, ok, failed, denied, expired, cancelled", core.ErrInvalid, q.Outcome)
	}
	if s := v.Get("conversation"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%w: conversation %q is not a conversation id", core.ErrInvalid, s)
		}
		q.Conversation = &id
	}
	for _, f := range []struct {
		name string
		to   *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		if s := v.Get(f.name); s != "" {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return nil, fmt.Errorf("%w: %s %q is not an RFC 3339 time (2026-01-02T15:04:05Z)", core.ErrInvalid, f.name, s)
			}
			*f.to = t
		}
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxAuditPage {
			return nil, fmt.Errorf("%w: limit %q must be a number from 1 to %d", core.ErrInvalid, s, MaxAuditPage)
		}
		q.Limit = n
	}
	return q, nil
}

// audit serves GET /api/audit.
func (a *API) audit(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseAuditQuery(r.URL.Query())
	if err != nil {
		return err
	}
	if err := a.mayReadAudit(r, q); err != nil {
		return err
	}
	page, err := ListAudit(r.Context(), a.st, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// mayReadAudit is where the caller's right to read the audit is checked.
// The operator (the holder of SWITCHBOARD_API_TOKEN, or a loopback caller
// when no token is set) reads the whole audit. A person reads one
// workspace's rows, named by its id, where they are an owner or admin (and
// their token reaches).
func (a *API) mayReadAudit(r *http.Request, q *AuditQuery) error {
	p := principal(r)
	if p.Admin() {
		return nil
	}
	ws, ok := q.WorkspaceID()
	if p.Kind != PrincipalPerson || !ok {
		return &httpError{status: http.StatusForbidden, msg: "only the operator may read the whole audit; a workspace's owners and admins read its rows with ?workspace=WORKSPACE_ID"}
	}
	if err := a.rights(r.Context(), p, &ws, workspace.Decide); err != nil {
		return &httpError{status: http.StatusForbidden, msg: fmt.Sprintf("reading the audit of workspace %s takes its owner or an admin", ws)}
	}
	return nil
}
