package core

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// A person edits or deletes a message they sent, on a platform.
//
// An edit of a message in the log forks the conversation at that message:
// the fork holds the entries before it and the message with its new text,
// the place (the Slack thread, the Discord channel) now shows the fork, and
// the agent answers the new text there. Nothing is overwritten: the old
// branch stays as it was. A deletion is written to the log as a deleted
// entry that points at the message, which stays; the model is told the
// message was withdrawn.

// MessageEdit is an edit of a message, normalised by the adapter.
type MessageEdit struct {
	Platform  string
	EventID   string // for dedupe
	Workspace string
	Channel   string
	Thread    string // as Inbound.Thread for the original message
	MessageID string // the edited message's platform id
	UserID    string // who edited it ("" for a deletion by someone unknown)
	UserName  string
	Text      string // the new text
	// Deleted marks a deletion rather than an edit (Text is unused).
	Deleted bool
}

// EditResult says what an edit or deletion did.
type EditResult struct {
	// Ignored: the message is not in a conversation, is not the editor's,
	// or its text did not change (Slack sends an edit for a link preview);
	// nothing was stored.
	Ignored bool
	// Duplicate: the event was seen before.
	Duplicate bool
	// ConversationID is the fork an edit made, or the conversation a
	// deletion was marked in; Seq is the edited message's seq there.
	ConversationID uuid.UUID
	Seq            int64
}

// MessageEditor is the half of core that takes edits and deletions; the
// adapters use it when their Submitter has it.
type MessageEditor interface {
	EditMessage(ctx context.Context, e *MessageEdit) (*EditResult, error)
}

// DeletedContent is a deleted entry: which message was deleted, by whom.
type DeletedContent struct {
	EntryID   uuid.UUID `json:"entry_id"`
	Seq       int64     `json:"seq"`
	MessageID string    `json:"message_id"`
	UserID    string    `json:"user_id"`
	Platform  string    `json:"platform"`
}

// EditMessage forks the conversation at an edited message, or marks a
// deleted one, in one transaction with the turn it queues.
func (s *Service) EditMessage(ctx context.Context, e *MessageEdit) (*EditResult, error) {
	if e == nil || e.Platform == "" || e.Channel == "" || e.MessageID == "" {
		return nil, invalid("an edit needs a platform, a channel and the message id")
	}
	text := strings.TrimSpace(e.Text)
	if !e.Deleted && text == "" {
		return &EditResult{Ignored: true}, nil
	}
	if s.opts.Gate != nil && !e.Deleted {
		adm, err := s.opts.Gate.Admit(ctx, &Inbound{Platform: e.Platform, EventID: e.EventID, Workspace: e.Workspace, Channel: e.Channel,
			Thread: e.Thread, MessageID: e.MessageID, UserID: e.UserID, UserName: e.UserName, Text: e.Text, Mentioned: true})
		if err != nil {
			return nil, fmt.Errorf("checking access of %s user %s: %w", e.Platform, e.UserID, err)
		}
		if adm.Refused {
			return &EditResult{Ignored: true}, nil
		}
	}
	var res EditResult
	err := s.st.InTx(ctx, func(q store.Queries) error {
		res = EditResult{}
		b, err := q.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns(e.Platform, e.Workspace, e.Channel, e.Thread)})
		if errors.Is(err, store.ErrNotFound) {
			res.Ignored = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("finding the binding: %w", err)
		}
		msg, old, err := findMessage(ctx, q, b.ConversationID, e.MessageID)
		// Only the author edits; a deletion may name nobody (Discord does not
		// say who deleted a message).
		notAuthor := old.UserID != e.UserID && !(e.Deleted && e.UserID == "")
		if err != nil || msg == nil || notAuthor || (!e.Deleted && old.Text == e.Text) {
			res.Ignored = err == nil
			return err
		}
		if e.EventID != "" {
			fresh, err := q.InboundRecord(ctx, &store.InboundRecordParams{Platform: e.Platform, EventID: e.EventID, Now: s.now()})
			if err != nil {
				return fmt.Errorf("recording edit event: %w", err)
			}
			if !fresh {
				res.Duplicate = true
				return nil
			}
		}
		seq := msg.SeqValue()
		if e.Deleted {
			_, err := q.EntryAppend(ctx, &store.EntryAppendParams{
				ConversationID: b.ConversationID, Kind: store.EntryDeleted, Author: msg.Author,
				Content: mustJSON(DeletedContent{EntryID: msg.ID, Seq: seq, MessageID: e.MessageID, UserID: e.UserID, Platform: e.Platform}),
				Now:     s.now(),
			})
			res.ConversationID, res.Seq = b.ConversationID, seq
			return err
		}
		edited := old
		edited.Text = e.Text
		if e.UserName != "" {
			edited.UserName = e.UserName
		}
		// An edit of a person's first message titles the fork by its new
		// text, unless the conversation's title is not automatic
		// (store.Conversation.TitleAuto).
		edit := &store.EntryAppendParams{
			ConversationID: b.ConversationID, ExpectSeq: &seq, Kind: store.EntryUser, Author: msg.Author,
			Content: mustJSON(edited), Now: s.now(),
		}
		if _, isPerson := msg.Author.User(); isPerson {
			edit.Title = ConversationTitle(e.Text)
			if edit.Retitle, err = firstMessageEdit(ctx, q, b.ConversationID, seq); err != nil {
				return err
			}
		}
		ap, err := q.EntryAppend(ctx, edit)
		if err != nil {
			return fmt.Errorf("forking at the edited message: %w", err)
		}
		// The place shows the fork from now on: what came before the edited
		// message is on the platform already, and the answer to the new text
		// is delivered there.
		if _, err := q.BindingMove(ctx, &store.BindingMoveParams{ID: b.ID, ConversationID: ap.ConversationID, DeliveredSeq: seq, Now: s.now()}); err != nil {
			return err
		}
		res.ConversationID, res.Seq = ap.ConversationID, ap.Entry.SeqValue()
		return s.enqueueTurn(ctx, q, ap.ConversationID, res.Seq, "message")
	})
	if err != nil {
		return nil, fmt.Errorf("taking the %s edit of %s: %w", e.Platform, e.MessageID, err)
	}
	return &res, nil
}

// findMessage finds the user entry of a platform message in a
// conversation's log, the latest when a fork repeated it.
func findMessage(ctx context.Context, q store.Queries, conv uuid.UUID, messageID string) (*store.Entry, UserContent, error) {
	es, err := q.EntryList(ctx, &store.EntryListParams{ConversationID: conv})
	if err != nil {
		return nil, UserContent{}, fmt.Errorf("reading the log of %s: %w", conv, err)
	}
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Kind != store.EntryUser {
			continue
		}
		c, err := Decode[UserContent](es[i])
		if err == nil && c.MessageID == messageID {
			return es[i], c, nil
		}
	}
	return nil, UserContent{}, nil
}
