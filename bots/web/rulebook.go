package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// Rulebooks is what the rulebook endpoints need of core; *core.Service
// implements it.
type Rulebooks interface {
	Rulebook(ctx context.Context, conv uuid.UUID) (*core.Rulebook, error)
	SetRulebook(ctx context.Context, conv uuid.UUID, text, setBy string) (*core.Rulebook, error)
	ClearRulebook(ctx context.Context, conv uuid.UUID) (bool, error)
}

var _ Rulebooks = (*core.Service)(nil)

// A conversation's rulebook: whoever may use the conversation
// (allowedConversation) may read it; an agent's session may read it, and
// only people and the operator set it.

// RulebookJSON is a conversation's rulebook; Text is "" when it has none.
type RulebookJSON struct {
	ConversationID uuid.UUID  `json:"conversation_id"`
	Text           string     `json:"text"`
	SetBy          string     `json:"set_by,omitempty"`
	UpdatedAt      *time.Time `json:"updated_at,omitempty"`
}

func (a *API) getRulebook(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	if _, err := a.svc.Conversation(r.Context(), id); err != nil {
		return err
	}
	rb, err := a.opts.Rulebooks.Rulebook(r.Context(), id)
	if errors.Is(err, core.ErrNotFound) {
		writeJSON(w, http.StatusOK, RulebookJSON{ConversationID: id})
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rulebookJSON(rb))
	return nil
}

// putRulebook replaces the rulebook with {"text": "..."}; an empty text
// clears it.
func (a *API) putRulebook(w http.ResponseWriter, r *http.Request) error {
	id, err := a.allowedConversation(r)
	if err != nil {
		return err
	}
	if principal(r).Kind == PrincipalAgent {
		return &httpError{status: http.StatusForbidden, msg: "a conversation's rulebook is set by its people, not by an agent"}
	}
	var body TextRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if _, err := a.svc.Conversation(r.Context(), id); err != nil {
		return err
	}
	if strings.TrimSpace(body.Text) == "" {
		if _, err := a.opts.Rulebooks.ClearRulebook(r.Context(), id); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, RulebookJSON{ConversationID: id})
		return nil
	}
	rb, err := a.opts.Rulebooks.SetRulebook(r.Context(), id, body.Text, caller(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rulebookJSON(rb))
	return nil
}

func rulebookJSON(rb *core.Rulebook) RulebookJSON {
	at := rb.UpdatedAt
	return RulebookJSON{ConversationID: rb.ConversationID, Text: rb.Text, SetBy: rb.SetBy, UpdatedAt: &at}
}
