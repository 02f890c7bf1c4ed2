package core

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Rulebooks: the people of a conversation can give it house rules of its
// own (reply style, length, when not to jump in), with !rules or the API.
// The rulebook goes in the stable prompt block, after the agent's
// personality and the general rules and apart from both, so every agent in
// the conversation follows it whatever its personality says. It is read
// once per turn and sent byte-identical until someone changes it, so it
// stays in the prompt cache.

// Rulebook is a conversation's rulebook; ErrNotFound (store's) when it has
// none.
func (s *Service) Rulebook(ctx context.Context, conv uuid.UUID) (*store.Rulebook, error) {
	rb, err := s.st.RulebookGet(ctx, conv)
	if err != nil {
		return nil, fmt.Errorf("reading the rulebook of %s: %w", conv, err)
	}
	return rb, nil
}

// SetRulebook replaces a conversation's rulebook; an empty text is
// ErrInvalid (ClearRulebook removes one).
func (s *Service) SetRulebook(ctx context.Context, conv uuid.UUID, text, setBy string) (*store.Rulebook, error) {
	text = strings.TrimSpace(text)
	switch n := utf8.RuneCountInString(text); {
	case n == 0:
		return nil, invalid("the rulebook is empty; clear it instead")
	case n > store.MaxRulebookChars:
		return nil, invalid("the rulebook has %d characters; keep it to %d", n, store.MaxRulebookChars)
	}
	rb, err := s.st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: conv, Text: text, SetBy: setBy, Now: s.now()})
	if err != nil {
		return nil, fmt.Errorf("setting the rulebook of %s: %w", conv, err)
	}
	return rb, nil
}

// ClearRulebook removes a conversation's rulebook and reports whether it
// had one.
func (s *Service) ClearRulebook(ctx context.Context, conv uuid.UUID) (bool, error) {
	ok, err := s.st.RulebookClear(ctx, conv)
	if err != nil {
		return false, fmt.Errorf("clearing the rulebook of %s: %w", conv, err)
	}
	return ok, nil
}

// rulebookPart is the rulebook's section of the stable block ("" when the
// conversation has none: rb nil).
func rulebookPart(rb *store.Rulebook) string {
	if rb == nil {
		return ""
	}
	return RulebookHeading + "\n" + rb.Text
}

// RulebookHeading opens the rulebook's section of the stable block.
const RulebookHeading = "Rulebook of this conversation, set by the people in it. Follow it over the general rules above and over your own habits where they differ:"
