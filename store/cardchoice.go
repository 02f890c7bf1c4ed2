package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Card choices: a card's buttons are settled by the first click that acts
// on them. CardChoiceSettle is a conditional insert keyed by the card's
// entry, made in the transaction that records the click's action: of two
// clicks, on one instance or two, one settles the card and the other gets
// the choice that was made first, to tell the clicker who made it.

// CardChoice is the click that settled a card's buttons.
type CardChoice struct {
	EntryID        uuid.UUID // the card's entry
	ConversationID uuid.UUID
	ActionID       string // the card action chosen
	Value          string
	Label          string // the button's label, as shown
	Platform       string // where the click came from
	UserID         string // the clicker's platform user id
	UserName       string
	CreatedAt      time.Time
}

// CardChoiceSettleParams is one click on a card's button.
type CardChoiceSettleParams struct {
	EntryID        uuid.UUID
	ConversationID uuid.UUID
	ActionID       string
	Value          string
	Label          string
	Platform       string
	UserID         string
	UserName       string
	Now            time.Time
}

// CardChoiceSettleResult is what became of a click: Settled when it was
// the first (Choice is then the click's own), else Choice is the earlier
// click that settled the card.
type CardChoiceSettleResult struct {
	Choice  *CardChoice
	Settled bool
}

// CardChoiceQueries are the card choices' reads and writes.
type CardChoiceQueries interface {
	// CardChoiceSettle records the click as the card's choice unless the
	// card has one; either way it returns the card's choice. ErrNotFound
	// when the entry or conversation does not exist.
	CardChoiceSettle(ctx context.Context, p *CardChoiceSettleParams) (*CardChoiceSettleResult, error)
	// CardChoiceGet returns a card's choice; ErrNotFound when it has none.
	CardChoiceGet(ctx context.Context, entryID uuid.UUID) (*CardChoice, error)
}
