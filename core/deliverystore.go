package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// The store as delivery (bots/deliver) uses it, one interface per
// aggregate it touches, each with only the methods it calls: a part of
// delivery takes the one it needs (a run's progress record takes
// RunMessageStore), and the Deliverer takes DeliveryStore, their union
// with the reads it makes. store.Store implements every one.

// PostedStore keeps the outbox of a binding: what each entry (or prompt)
// became on the platform, recorded as an intent before the platform call
// and with the message ids after it.
type PostedStore interface {
	// PostedGet is what an entry became on a binding; ErrNotFound when it
	// was never posted there.
	PostedGet(ctx context.Context, p *PostedGetParams) (*Posted, error)
	// PostedRecord records it; a second record replaces the first.
	PostedRecord(ctx context.Context, p *Posted) error
}

// LiveStreamStore keeps the one message per binding that a running turn
// streams its reply into, so a later attempt or another instance takes it
// over instead of leaving it cut.
type LiveStreamStore interface {
	LiveStreamSave(ctx context.Context, l *LiveStream) error
	// LiveStreamGet: ErrNotFound when the binding streams nothing.
	LiveStreamGet(ctx context.Context, bindingID uuid.UUID) (*LiveStream, error)
	LiveStreamDelete(ctx context.Context, bindingID uuid.UUID) error
}

// RunMessageStore keeps the message that shows a run's progress on a
// binding: an intent with a unique key before the first post (ErrConflict
// to the process that lost the race), the message after.
type RunMessageStore interface {
	RunMessageCreate(ctx context.Context, p *RunMessageCreateParams) (*RunMessage, error)
	// RunMessageGet: ErrNotFound when the run has no message there yet.
	RunMessageGet(ctx context.Context, k *RunMessageKey) (*RunMessage, error)
	// RunMessageSave: ErrConflict when the record changed since PrevVersion.
	RunMessageSave(ctx context.Context, p *RunMessageSaveParams) (*RunMessage, error)
}

// BindingStore is the places a conversation is delivered to, and how far
// each has been delivered.
type BindingStore interface {
	BindingListByConversation(ctx context.Context, conversationID uuid.UUID) ([]*Binding, error)
	// BindingAdvance moves the delivered cursor forward.
	BindingAdvance(ctx context.Context, p *BindingAdvanceParams) (*Binding, error)
	// BindingRelocate gives a binding another channel and thread.
	BindingRelocate(ctx context.Context, p *BindingRelocateParams) (*Binding, error)
}

// WorkLister reads the work queue (ReadTurnQueue).
type WorkLister interface {
	WorkList(ctx context.Context, p *store.WorkListParams) ([]*WorkItem, error)
}

// DeliveryStore is what the Deliverer reads and writes: its own records
// (the outbox, live streams, run messages, the bindings' cursors) and the
// conversations, logs, approvals, side threads and turn queue it shows.
type DeliveryStore interface {
	PostedStore
	LiveStreamStore
	RunMessageStore
	BindingStore
	WorkLister

	ConversationGet(ctx context.Context, id uuid.UUID) (*Conversation, error)
	EntryList(ctx context.Context, p *EntryListParams) ([]*Entry, error)
	ApprovalGet(ctx context.Context, id uuid.UUID) (*Approval, error)
	// ApprovalListPending is a conversation's pending approvals, oldest
	// first: the prompts to show.
	ApprovalListPending(ctx context.Context, conversationID uuid.UUID) ([]*Approval, error)
	SideThreadGet(ctx context.Context, id uuid.UUID) (*SideThread, error)
	// InTx runs fn in one transaction (RecordPost).
	InTx(ctx context.Context, fn func(q store.Queries) error) error
}

var _ DeliveryStore = store.Store(nil)

// RecordPost records the messages a post became. With streamFinished (the
// post replaced the binding's live message), the live stream's record is
// forgotten in the same transaction: a crash never leaves a finished
// stream recorded as open, for a later turn to take over and overwrite,
// nor a post that finished one without its record.
func RecordPost(ctx context.Context, st DeliveryStore, p *Posted, streamFinished bool) error {
	err := st.InTx(ctx, func(q store.Queries) error {
		if err := q.PostedRecord(ctx, p); err != nil {
			return err
		}
		if streamFinished {
			return q.LiveStreamDelete(ctx, p.BindingID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording the post of %s: %w", p.EntryID, err)
	}
	return nil
}
