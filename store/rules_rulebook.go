package store

import (
	"context"
	"unicode/utf8"

	"github.com/google/uuid"
)

// MaxRulebookChars bounds a rulebook: it is sent with every turn of its
// conversation, so it is kept to a page.
const MaxRulebookChars = 4000

// The rulebooks' rules: a rulebook names its conversation and its author,
// and has text of at most MaxRulebookChars characters.

func (q checked) RulebookGet(ctx context.Context, conversationID uuid.UUID) (*Rulebook, error) {
	if conversationID == uuid.Nil {
		return nil, invalidf("reading rulebook: ConversationID is required")
	}
	return q.Queries.RulebookGet(ctx, conversationID)
}

func (q checked) RulebookSet(ctx context.Context, p *RulebookSetParams) (*Rulebook, error) {
	switch {
	case p == nil || p.ConversationID == uuid.Nil:
		return nil, invalidf("setting rulebook: ConversationID is required")
	case p.Text == "":
		return nil, invalidf("setting rulebook of %s: empty Text (clear it instead)", p.ConversationID)
	case utf8.RuneCountInString(p.Text) > MaxRulebookChars:
		return nil, invalidf("setting rulebook of %s: Text has %d characters, more than %d", p.ConversationID, utf8.RuneCountInString(p.Text), MaxRulebookChars)
	case p.SetBy == "":
		return nil, invalidf("setting rulebook of %s: empty SetBy", p.ConversationID)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.RulebookSet(ctx, &c)
}

func (q checked) RulebookClear(ctx context.Context, conversationID uuid.UUID) (bool, error) {
	if conversationID == uuid.Nil {
		return false, invalidf("clearing rulebook: ConversationID is required")
	}
	return q.Queries.RulebookClear(ctx, conversationID)
}
