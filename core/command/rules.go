package command

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Rulebooks is what !rules needs of core; *core.Service implements it.
type Rulebooks interface {
	Rulebook(ctx context.Context, conv uuid.UUID) (*store.Rulebook, error)
	SetRulebook(ctx context.Context, conv uuid.UUID, text, setBy string) (*store.Rulebook, error)
	ClearRulebook(ctx context.Context, conv uuid.UUID) (bool, error)
}

var _ Rulebooks = (*core.Service)(nil)

// RulesHelp lists the rulebook commands.
const RulesHelp = "• `rules <text>` sets this conversation's rulebook (reply style, length, when not to jump in) · `rules` shows it · `rules clear` removes it"

// rules answers "rules" (show), "rules clear" and "rules <text>" (set) for
// the conversation the command was typed in. text is the command as typed
// after the verb, line breaks kept.
func (h *Handler) rules(ctx context.Context, r request, text string) (string, error) {
	if h.opts.Rulebooks == nil {
		return "", invalid("rulebooks are not available here")
	}
	if r.ConversationID == uuid.Nil {
		return "", invalid("type `!rules` in the conversation it is for")
	}
	switch {
	case text == "":
		rb, err := h.opts.Rulebooks.Rulebook(ctx, r.ConversationID)
		if errors.Is(err, store.ErrNotFound) {
			return "This conversation has no rulebook. Set one with `!rules <text>`, e.g. `!rules Answer in two sentences at most.`", nil
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Rulebook of this conversation (set by %s on %s; `!rules clear` removes it):\n%s",
			setter(rb.SetBy), rb.UpdatedAt.Format("2006-01-02 15:04 MST"), rb.Text), nil
	case strings.EqualFold(text, "clear"):
		had, err := h.opts.Rulebooks.ClearRulebook(ctx, r.ConversationID)
		if err != nil {
			return "", err
		}
		if !had {
			return "This conversation had no rulebook.", nil
		}
		return "Rulebook cleared: the agents here follow only their own rules again.", nil
	}
	rb, err := h.opts.Rulebooks.SetRulebook(ctx, r.ConversationID, text, string(store.UserAuthor(r.UserID)))
	if errors.Is(err, core.ErrInvalid) {
		return "", invalid("%s", strings.TrimPrefix(err.Error(), core.ErrInvalid.Error()+": "))
	}
	if err != nil {
		return "", err
	}
	return "Rulebook set. The agents here follow it from their next reply:\n" + rb.Text, nil
}

// setter shows who set a rulebook: a platform user by their id.
func setter(by string) string {
	if id, ok := store.Author(by).User(); ok {
		return id
	}
	return by
}
