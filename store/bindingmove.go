package store

import (
	"time"

	"github.com/google/uuid"
)

// Moving a binding: to a fork (an edit), or to another place (a routine
// run's thread).

// BindingMoveParams moves a binding to another conversation.
type BindingMoveParams struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	// DeliveredSeq is the cursor in the new conversation: what it holds up
	// to this seq is already on the platform.
	DeliveredSeq int64
	Now          time.Time
}

// BindingRelocateParams gives a binding another place on the same platform
// (a routine run's place becomes the thread under its first post).
type BindingRelocateParams struct {
	ID    uuid.UUID
	Place Place
	Now   time.Time
}
