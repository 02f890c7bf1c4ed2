package core

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// The audit of guarded tool calls, read: by the operator whole, by a
// workspace's owners and admins for their workspace.

// Page sizes of the audit list.
const (
	DefaultAuditPage = 50
	MaxAuditPage     = 200
)

// AuditRecord is one guarded tool call and how it was decided.
type AuditRecord = store.AuditRecord

// AuditLister is what reading the audit takes: the store, or a test's fake.
type AuditLister interface {
	AuditList(ctx context.Context, p *store.AuditListParams) ([]*store.AuditRecord, error)
}

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
	Outcome      AuditOutcome
	From, To     time.Time // From inclusive, To exclusive
	Cursor       string    // a next_cursor from the page before
	Limit        int       // 0 means DefaultAuditPage
}

// WorkspaceID is the Workspace filter when it names a Switchboard
// workspace (a UUID; Slack team and Discord guild ids never parse as one).
func (q *AuditQuery) WorkspaceID() (uuid.UUID, bool) {
	id, err := uuid.Parse(q.Workspace)
	return id, err == nil && q.Workspace != ""
}

// AuditRows is one page of the audit; NextCursor is empty on the last.
type AuditRows struct {
	Records    []*AuditRecord
	NextCursor string
}

// ListAudit reads one page of the audit from st, whoever asks: the CLI on
// the database, and Service.Audit once it checked the caller.
func ListAudit(ctx context.Context, st AuditLister, q *AuditQuery) (*AuditRows, error) {
	limit := q.Limit
	if limit == 0 {
		limit = DefaultAuditPage
	}
	if limit < 1 || limit > MaxAuditPage {
		return nil, fmt.Errorf("%w: limit %d is outside 1..%d", ErrInvalid, q.Limit, MaxAuditPage)
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
	out := &AuditRows{Records: rows}
	if len(rows) > limit {
		out.Records = rows[:limit]
		out.NextCursor = store.CursorOf(rows[limit-1]).String()
	}
	return out, nil
}

// Audit reads one page of the audit for a. The operator reads the whole
// audit; a person reads one workspace's rows, named by its id, where they
// are an owner or admin (Decide) and their credential reaches.
func (s *Service) Audit(ctx context.Context, a workspace.Actor, q *AuditQuery) (*AuditRows, error) {
	if !a.Operator {
		ws, ok := q.WorkspaceID()
		if a.Person == uuid.Nil || !ok {
			return nil, workspace.Forbidden("only the operator may read the whole audit; a workspace's owners and admins read its rows with ?workspace=WORKSPACE_ID")
		}
		if err := workspace.Rights(ctx, s.st, a, &ws, workspace.Decide); err != nil {
			return nil, workspace.Forbidden(fmt.Sprintf("reading the audit of workspace %s takes its owner or an admin", ws))
		}
	}
	return ListAudit(ctx, s.st, q)
}
