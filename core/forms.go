package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/store"
)

// Forms: a card's button may open a form (cards.Form). The click that opens
// it records nothing: Act answers with the form for the platform to show
// (ActionResult.Form). The submission comes back through Act with the
// answers in Action.Values; they are checked against the stamped form
// (never against anything the platform sends about it), and then
//
//	wrong answers ─► ActionResult.Invalid, keyed by input name; nothing
//	                 recorded, the person fixes them and submits again
//	right answers ─► settleCard, like a click: one action entry whose
//	                 Values hold the typed answers (a tool action's
//	                 Args get them too), and the turn that reads it
//
// Exactly once: the submission's platform event id is recorded in the same
// transaction (a retried submission does nothing), and the card is settled
// by the first submission or click, on any instance.

// formAnswers handles a form button's click or its submission. It returns
// a result to answer with, or nil when the answers are right and content
// now holds them, for settleCard to record.
func (s *Service) formAnswers(ctx context.Context, a *Action, entry *store.Entry, act *cards.Action, content *ActionContent) (*ActionResult, error) {
	if a.Values == nil {
		choice, err := s.st.CardChoiceGet(ctx, entry.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return &ActionResult{Form: act.Form, FormTitle: act.FormTitle()}, nil
		case err != nil:
			return nil, fmt.Errorf("reading the choice of card %s: %w", entry.ID, err)
		}
		return &ActionResult{Duplicate: true, Settled: &Settled{
			By: cmp.Or(choice.UserName, choice.UserID), ByUserID: choice.UserID, Platform: choice.Platform,
			Choice: cmp.Or(choice.Label, choice.Value, choice.ActionID), At: choice.CreatedAt,
		}}, nil
	}
	answers, problems := act.Form.Parse(a.Values)
	if len(problems) > 0 {
		return &ActionResult{Invalid: problems, Form: act.Form, FormTitle: act.FormTitle()}, nil
	}
	values, err := json.Marshal(answers)
	if err != nil {
		return nil, fmt.Errorf("encoding the answers to card %s: %w", entry.ID, err)
	}
	content.Values = values
	if content.Tool != "" {
		if content.Args, err = cards.MergeArgs(act.Args, answers); err != nil {
			return nil, fmt.Errorf("card %s: %w", entry.ID, err)
		}
	}
	return nil, nil
}
