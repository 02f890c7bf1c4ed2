package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Feedback is a person rating an agent's reply with a platform's feedback
// buttons (Slack's feedback_buttons): who, which reply (the entry it
// delivered), up or down.
type Feedback struct {
	Platform  string
	EventID   string // for dedupe: a redelivered click records nothing
	Workspace string
	UserID    string
	UserName  string
	EntryID   uuid.UUID
	Positive  bool
}

// FeedbackContent is a feedback entry: who rated which reply, and how.
// Models never see it.
type FeedbackContent struct {
	EntryID  uuid.UUID `json:"entry_id"`
	Positive bool      `json:"positive"`
	UserID   string    `json:"user_id"`
	UserName string    `json:"user_name,omitempty"`
	Platform string    `json:"platform"`
}

// RecordFeedback appends a feedback entry to the rated reply's
// conversation, with no turn: the agent does not answer a rating. The
// event id dedupes a redelivered click.
func (s *Service) RecordFeedback(ctx context.Context, f *Feedback) error {
	if f == nil || f.Platform == "" || f.EntryID == uuid.Nil {
		return invalid("feedback needs a platform and the rated entry")
	}
	e, err := s.st.EntryGet(ctx, f.EntryID)
	if errors.Is(err, store.ErrNotFound) {
		return invalid("no reply %s to rate", f.EntryID)
	}
	if err != nil {
		return fmt.Errorf("finding the rated reply %s: %w", f.EntryID, err)
	}
	if e.Kind != store.EntryAssistant {
		return invalid("entry %s is not a reply", f.EntryID)
	}
	err = s.st.InTx(ctx, func(q store.Queries) error {
		if f.EventID != "" {
			fresh, err := q.InboundRecord(ctx, &store.InboundRecordParams{Platform: f.Platform, EventID: f.EventID, Now: s.now()})
			if err != nil || !fresh {
				return err
			}
		}
		_, err := q.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: e.ConversationID, Kind: store.EntryFeedback, Author: store.UserAuthor(f.UserID),
			Content: mustJSON(FeedbackContent{EntryID: f.EntryID, Positive: f.Positive, UserID: f.UserID, UserName: f.UserName, Platform: f.Platform}),
			Now:     s.now(),
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("recording feedback on %s: %w", f.EntryID, err)
	}
	return nil
}
