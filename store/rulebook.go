package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Rulebooks: a conversation may carry a rulebook, the house rules its
// people set for the agents in it (reply style, length, when not to jump
// in). It is one text per conversation, replaced whole; no row means no
// rulebook. A fork starts with its parent's rulebook.

// Rulebook is a conversation's rulebook.
type Rulebook struct {
	ConversationID uuid.UUID
	Text           string
	SetBy          string // who set it: a person's Author, the operator
	UpdatedAt      time.Time
}

// RulebookSetParams replaces a conversation's rulebook.
type RulebookSetParams struct {
	ConversationID uuid.UUID
	Text           string // not empty; RulebookClear removes a rulebook
	SetBy          string
	Now            time.Time
}

// RulebookQueries are the rulebooks' reads and writes.
type RulebookQueries interface {
	// RulebookGet reads a conversation's rulebook; ErrNotFound when it has
	// none (whether or not the conversation exists).
	RulebookGet(ctx context.Context, conversationID uuid.UUID) (*Rulebook, error)
	// RulebookSet writes the rulebook, replacing any; ErrNotFound when the
	// conversation does not exist.
	RulebookSet(ctx context.Context, p *RulebookSetParams) (*Rulebook, error)
	// RulebookClear removes the rulebook and reports whether there was one.
	RulebookClear(ctx context.Context, conversationID uuid.UUID) (bool, error)
}
