package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// The audit of guarded tool calls, read: GET /api/audit, and the page the
// switchboard audit command prints.

// Page sizes of the audit list.
const (
	DefaultAuditPage = core.DefaultAuditPage
	MaxAuditPage     = core.MaxAuditPage
)

// AuditQuery is a filtered read of the audit (core.AuditQuery).
type AuditQuery = core.AuditQuery

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

// AuditPageOf is a page of the audit as the API and the CLI show it.
func AuditPageOf(rows *core.AuditRows) *AuditPage {
	page := &AuditPage{Records: []AuditRecordJSON{}, NextCursor: rows.NextCursor}
	for _, r := range rows.Records {
		page.Records = append(page.Records, AuditRecordJSON{
			ID: r.ID, ConversationID: r.ConversationID, CallID: r.CallID, Agent: r.Agent, Actor: r.Actor,
			Tool: r.Action, Risk: r.Risk, Decision: r.Decision, Outcome: r.Outcome, DecidedBy: r.DecidedBy,
			Detail: r.Detail, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		})
	}
	return page
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

// audit serves GET /api/audit: the operator reads the whole audit, a
// workspace's owners and admins its rows (core.Service.Audit).
func (a *API) audit(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseAuditQuery(r.URL.Query())
	if err != nil {
		return err
	}
	rows, err := a.svc.Audit(r.Context(), principal(r).actor(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AuditPageOf(rows))
	return nil
}

// auditExport serves GET /api/audit/export: the rows created in a time
// range, oldest first, one audit.Event a line (core.Service.ExportAudit
// checks the caller). The answer streams: a failure after its first line
// ends it short, and the log says why.
func (a *API) auditExport(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	x := &core.AuditExport{}
	now := time.Now()
	for _, f := range []struct {
		name string
		to   *time.Time
	}{{"since", &x.Since}, {"until", &x.Until}} {
		if s := v.Get(f.name); s != "" {
			t, err := core.ParseAuditTime(s, now)
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			*f.to = t
		}
	}
	if s := v.Get("workspace"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			return fmt.Errorf("%w: workspace %q is not a workspace id", core.ErrInvalid, s)
		}
		x.WorkspaceID = &id
	}
	lw := &linesWriter{w: w}
	_, err := a.svc.ExportAudit(r.Context(), principal(r).actor(), x, lw)
	if err != nil && lw.started {
		a.log.WarnContext(r.Context(), "audit export cut short", "error", err)
		return nil
	}
	if err != nil {
		return err
	}
	if !lw.started {
		lw.start()
	}
	return nil
}

// linesWriter sends the JSON-lines headers with the first line, so that an
// error before it is answered as JSON.
type linesWriter struct {
	w       http.ResponseWriter
	started bool
}

func (l *linesWriter) start() {
	l.started = true
	l.w.Header().Set("Content-Type", mediaJSONLines)
	l.w.Header().Set("Content-Disposition", `attachment; filename="audit.jsonl"`)
	l.w.WriteHeader(http.StatusOK)
}

func (l *linesWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.start()
	}
	return l.w.Write(p)
}
