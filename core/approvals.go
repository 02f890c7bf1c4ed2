package core

import (
	"context"

	"github.com/google/uuid"
)

// Approvals, read: who may see one is who may use its conversation, and
// the inbox lists those of the workspaces a caller sees; the caller checks
// both.

// Approval reads approval id.
func (s *Service) Approval(ctx context.Context, id uuid.UUID) (*Approval, error) {
	return s.st.ApprovalGet(ctx, id)
}

// ApprovalOfCall is the approval call callID of conversation conv waits
// for (ErrNotFound: none).
func (s *Service) ApprovalOfCall(ctx context.Context, conv uuid.UUID, callID string) (*Approval, error) {
	return s.st.ApprovalFindByCall(ctx, &ApprovalFindByCallParams{ConversationID: conv, CallID: callID})
}

// PendingApprovals lists the approvals p selects that wait for a decision,
// oldest first.
func (s *Service) PendingApprovals(ctx context.Context, p *ApprovalListVisibleParams) ([]*Approval, error) {
	return s.st.ApprovalListVisible(ctx, p)
}

// ConversationApprovals lists the approvals conversation conv waits for.
func (s *Service) ConversationApprovals(ctx context.Context, conv uuid.UUID) ([]*Approval, error) {
	return s.st.ApprovalListPending(ctx, conv)
}
