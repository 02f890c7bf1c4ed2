package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/google/uuid"
)

// The rules of retention (see retention.go), of forgetting a person (see
// PersonForget) and of the audit rows that record both (AuditLog).

func (q checked) WorkspaceRetentionSet(ctx context.Context, p *WorkspaceRetentionSetParams) (*WorkspaceRetention, error) {
	if p == nil || p.WorkspaceID == uuid.Nil {
		return nil, invalidf("setting retention: WorkspaceID is required")
	}
	c := *p
	switch {
	case c.KeepDays < 0 || c.KeepDays > MaxKeepDays:
		return nil, invalidf("setting the retention of workspace %s: KeepDays %d must be 0 (keep forever) or 1..%d", c.WorkspaceID, c.KeepDays, MaxKeepDays)
	case c.KeepDays == 0 && c.ExportDir != "":
		return nil, invalidf("setting the retention of workspace %s: ExportDir %q needs KeepDays (nothing is deleted, so nothing is exported)", c.WorkspaceID, c.ExportDir)
	case c.ExportDir != "" && !filepath.IsAbs(c.ExportDir):
		return nil, invalidf("setting the retention of workspace %s: ExportDir %q must be an absolute path on the server", c.WorkspaceID, c.ExportDir)
	}
	if c.ExportDir != "" {
		c.ExportDir = filepath.Clean(c.ExportDir)
	}
	c.Now = q.at(c.Now)
	return q.Queries.WorkspaceRetentionSet(ctx, &c)
}

func (q checked) WorkspaceRetentionGet(ctx context.Context, workspaceID uuid.UUID) (*WorkspaceRetention, error) {
	if workspaceID == uuid.Nil {
		return nil, invalidf("reading retention: the workspace id is required")
	}
	return q.Queries.WorkspaceRetentionGet(ctx, workspaceID)
}

func (q checked) ConversationExpiredList(ctx context.Context, p *ConversationExpiredListParams) ([]*ExpiredTree, error) {
	if p == nil || p.WorkspaceID == uuid.Nil {
		return nil, invalidf("listing expired conversations: WorkspaceID is required")
	}
	c := *p
	switch {
	case c.Before.IsZero():
		return nil, invalidf("listing expired conversations of workspace %s: Before is required", c.WorkspaceID)
	case c.Limit < 0 || c.Limit > DefaultListLimit:
		return nil, invalidf("listing expired conversations of workspace %s: Limit %d is outside 0..%d", c.WorkspaceID, c.Limit, DefaultListLimit)
	case c.After != nil && c.After.RootID == uuid.Nil:
		return nil, invalidf("listing expired conversations of workspace %s: the cursor names no root", c.WorkspaceID)
	}
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	c.Now = q.at(c.Now)
	return q.Queries.ConversationExpiredList(ctx, &c)
}

func (q checked) ConversationPurge(ctx context.Context, p *ConversationPurgeParams) (*ConversationPurgeResult, error) {
	if p == nil || p.RootID == uuid.Nil || p.WorkspaceID == uuid.Nil {
		return nil, invalidf("purging a conversation: RootID and WorkspaceID are required")
	}
	if p.Before.IsZero() {
		return nil, invalidf("purging conversation %s: Before is required", p.RootID)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.ConversationPurge(ctx, &c)
}

func (q checked) AuditLog(ctx context.Context, p *AuditLogParams) (*AuditRecord, error) {
	if p == nil || p.Action == "" || p.Actor == "" {
		return nil, invalidf("logging audit: Action and Actor are required")
	}
	c := *p
	if c.Outcome == "" {
		c.Outcome = AuditOK
	}
	if !c.Outcome.Valid() {
		return nil, invalidf("logging audit of %s: unknown Outcome %q", c.Action, c.Outcome)
	}
	var err error
	if c.Detail, err = jsonOr("Detail", c.Detail, "{}"); err != nil {
		return nil, fmt.Errorf("logging audit of %s: %w", c.Action, err)
	}
	c.Now = q.at(c.Now)
	c.ID = newID()
	return q.Queries.AuditLog(ctx, &c)
}

func (q checked) PersonForget(ctx context.Context, p *PersonForgetParams) (*PersonForgetResult, error) {
	if p == nil || p.PersonID == uuid.Nil {
		return nil, invalidf("forgetting a person: PersonID is required")
	}
	c := *p
	c.Now = q.at(c.Now)
	if c.By == "" {
		c.By = "operator"
	}
	var res *PersonForgetResult
	err := q.atomic(ctx, func(tq Queries) error {
		var err error
		if res, err = tq.PersonForget(ctx, &c); err != nil {
			return err
		}
		// The audit names the person by id (which names nobody once the
		// records are gone) and says what went; nothing else of theirs.
		detail, err := json.Marshal(struct {
			Person         uuid.UUID `json:"person"`
			DeleteMessages bool      `json:"delete_messages"`
			*PersonForgetResult
		}{c.PersonID, c.DeleteMessages, res})
		if err != nil {
			return err
		}
		_, err = checked{Queries: tq, now: q.now}.AuditLog(ctx, &AuditLogParams{
			Action: AuditForgetPerson, Actor: c.By, Outcome: AuditOK, Detail: detail, Now: c.Now,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
