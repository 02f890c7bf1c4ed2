package store

import (
	"context"

	"github.com/google/uuid"
)

// ApprovalListVisibleParams selects the pending approvals an inbox shows.
type ApprovalListVisibleParams struct {
	// All lists the pending approvals of every workspace (the operator);
	// else only those in conversations of Workspaces (none when it is
	// empty).
	All        bool
	Workspaces []uuid.UUID
	Limit      int // 0 means DefaultListLimit
}

// maxApprovalPage bounds one ApprovalListVisible.
const maxApprovalPage = 500

// ApprovalInboxQueries lists pending approvals across workspaces.
type ApprovalInboxQueries interface {
	// ApprovalListVisible lists the pending approvals in the conversations
	// of the given workspaces (or of all), oldest first, whatever the
	// conversations' last activity.
	ApprovalListVisible(ctx context.Context, p *ApprovalListVisibleParams) ([]*Approval, error)
}

func (q checked) ApprovalListVisible(ctx context.Context, p *ApprovalListVisibleParams) ([]*Approval, error) {
	if p == nil {
		return nil, invalidf("listing pending approvals: params are nil")
	}
	l := *p
	if l.Limit < 0 || l.Limit > maxApprovalPage {
		return nil, invalidf("listing pending approvals: Limit %d is outside 0..%d", l.Limit, maxApprovalPage)
	}
	l.Limit = limitOr(l.Limit, DefaultListLimit)
	if !l.All && len(l.Workspaces) == 0 {
		return []*Approval{}, nil
	}
	if l.Workspaces == nil {
		l.Workspaces = []uuid.UUID{}
	}
	return q.Queries.ApprovalListVisible(ctx, &l)
}
