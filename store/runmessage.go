package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Run messages: the platform message that shows a run's progress in one
// place (a binding of the run's conversation). It is stored, not kept in
// a process, so that a change shown after a restart, or by another
// instance, edits that message instead of posting a second one.
//
//	(none) ──RunMessageCreate──► posting ──RunMessageSave──► live ──► ended
//	                                ▲                                   │
//	                                └──────RunMessageSave (a new intent)┘
//
// The record is the intent before it is the record: RunMessageCreate
// makes it (posting, no message) before the platform is asked for the
// first message, and only one caller can (ErrConflict for the others).
// RunMessageSave is a compare-and-set on the record's version, so of two
// processes that both read a record, one changes it.

// RunMessageState is where a run's message stands.
type RunMessageState string

const (
	// RunMessagePosting: the first post is under way, or its process died
	// before the platform's answer was recorded; no message is named.
	RunMessagePosting RunMessageState = "posting"
	// RunMessageLive: the message shows the run and is updated as it moves.
	RunMessageLive RunMessageState = "live"
	// RunMessageEnded: the message shows how the run ended (on Slack, its
	// stream is stopped).
	RunMessageEnded RunMessageState = "ended"
)

// Valid reports whether s is a known state.
func (s RunMessageState) Valid() bool {
	switch s {
	case RunMessagePosting, RunMessageLive, RunMessageEnded:
		return true
	}
	return false
}

// RunMessage is the message that shows a run on one binding.
type RunMessage struct {
	RunID     uuid.UUID
	BindingID uuid.UUID
	Platform  string
	// Channel and MessageID name the message (Slack: the channel and the
	// ts; Discord: the channel and the message id); empty while posting.
	Channel   string
	MessageID string
	// Kind is how the message shows the run, the platform's word for it
	// (Slack: "stream" or "text").
	Kind  string
	State RunMessageState
	// Version counts the record's changes (1 when made); a save names the
	// version it read.
	Version int64
	// Sent is the platform's own note of what it last sent (per step), so
	// a change sends only what moved; a JSON object.
	Sent      json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RunMessageKey names the message of a run on a binding.
type RunMessageKey struct {
	RunID     uuid.UUID
	BindingID uuid.UUID
}

// RunMessageCreateParams record the intent to post a run's first message
// on a binding.
type RunMessageCreateParams struct {
	RunID     uuid.UUID
	BindingID uuid.UUID
	Platform  string
	Kind      string
	Now       time.Time
}

// RunMessageSaveParams change the record of a run's message on a binding,
// if it is still at PrevVersion.
type RunMessageSaveParams struct {
	RunID       uuid.UUID
	BindingID   uuid.UUID
	PrevVersion int64
	Channel     string
	MessageID   string
	Kind        string
	State       RunMessageState
	Sent        json.RawMessage // nil: {}
	Now         time.Time
}

// RunMessageQueries are the run messages' reads and writes.
type RunMessageQueries interface {
	// RunMessageCreate records the intent to post a run's first message
	// on a binding (state posting); ErrConflict when the run has a record
	// there already, ErrNotFound when the run or the binding does not
	// exist.
	RunMessageCreate(ctx context.Context, p *RunMessageCreateParams) (*RunMessage, error)
	// RunMessageGet returns the record; ErrNotFound when there is none.
	RunMessageGet(ctx context.Context, k *RunMessageKey) (*RunMessage, error)
	// RunMessageSave changes the record if it is at PrevVersion, and
	// counts a version; ErrConflict when it is at another (another process
	// changed it first), ErrNotFound when there is no record.
	RunMessageSave(ctx context.Context, p *RunMessageSaveParams) (*RunMessage, error)
}
