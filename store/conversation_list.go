package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// ConversationListParams pages through the conversations a caller may see,
// most recently active first.
type ConversationListParams struct {
	// All lists every conversation (the operator); else only those of
	// Workspaces (none when it is empty).
	All        bool
	Workspaces []uuid.UUID
	// Before, when set, starts the page after this conversation: the
	// previous page's last row.
	Before *ConversationCursor
	Limit  int // 0 means DefaultListLimit
}

// ConversationCursor is where a page of ConversationList ends.
type ConversationCursor struct {
	UpdatedAt time.Time
	ID        uuid.UUID
}

// maxConversationPage bounds one page of ConversationList.
const maxConversationPage = 500

// ConversationListQueries is the listing of conversations.
type ConversationListQueries interface {
	ConversationList(ctx context.Context, p *ConversationListParams) ([]*Conversation, error)
}

func (q checked) ConversationList(ctx context.Context, p *ConversationListParams) ([]*Conversation, error) {
	if p == nil {
		return nil, invalidf("listing conversations: params are nil")
	}
	l := *p
	if l.Limit < 0 || l.Limit > maxConversationPage {
		return nil, invalidf("listing conversations: Limit %d is outside 0..%d", l.Limit, maxConversationPage)
	}
	l.Limit = limitOr(l.Limit, DefaultListLimit)
	if !l.All && len(l.Workspaces) == 0 {
		return []*Conversation{}, nil
	}
	if l.Workspaces == nil {
		l.Workspaces = []uuid.UUID{}
	}
	return q.Queries.ConversationList(ctx, &l)
}
