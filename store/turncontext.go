package store

import (
	"context"

	"github.com/google/uuid"
)

// A turn reads, before it calls the model, a handful of small rows about its
// conversation: the conversation, its latest summary, its bindings, its
// rulebook, the side thread or delegation it serves and its agent's
// personality. TurnContextGet reads them together so that a driver can send
// them in one round trip (Postgres pipelines them in one batch); each field
// is what the single read it stands for returns at that moment.

// TurnContext is what a turn reads of its conversation before the model.
type TurnContext struct {
	Conversation *Conversation
	// LatestSummary is EntryLatestSummary's entry; nil when there is none.
	LatestSummary *Entry
	// Bindings is BindingListByConversation's list.
	Bindings []*Binding
	// Rulebook is RulebookGet's; nil when the conversation has none.
	Rulebook *Rulebook
	// SideThread is SideThreadByChild's; nil when the conversation is no
	// side thread's child.
	SideThread *SideThread
	// Delegation is DelegationByChild's; nil when no delegation runs in
	// the conversation.
	Delegation *Delegation
	// Personality is the current version (PersonalityGet with Version 0)
	// of the document of the conversation's agent (Conversation.AgentID);
	// nil when the conversation has no agent or the agent no document.
	Personality *Personality
}

// TurnContextQueries reads a turn's context.
type TurnContextQueries interface {
	// TurnContextGet reads conversationID's TurnContext; ErrNotFound when
	// the conversation does not exist.
	TurnContextGet(ctx context.Context, conversationID uuid.UUID) (*TurnContext, error)
}
