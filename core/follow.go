package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// What a client that follows a conversation from outside reads (the
// terminal chat, an MCP call waiting for its answer): wake-ups when the
// log grows, the log from a seq, whether its turns are over, and what the
// agent answered. Live deltas come from the Hub; these are the durable
// side, true whichever instance runs the turn.

// TurnQueue is what a conversation's work queue holds of turns.
type TurnQueue struct {
	// Waiting: a turn waits to be claimed (a new one, or a retry).
	Waiting bool
	// Running: a worker runs one, on this instance or another.
	Running bool
}

// Empty reports that no turn waits or runs.
func (q TurnQueue) Empty() bool { return !q.Waiting && !q.Running }

// turnQueueRead bounds ReadTurnQueue's read of a long queue.
const turnQueueRead = 100

// ReadTurnQueue reads conv's turn queue from st, in one read: two (one per
// state) could miss an item that is claimed between them (waiting at the
// first, running at the second) or retried (running, then waiting) and
// report an empty queue while a turn is still to come. At most
// turnQueueRead items are read: a conversation's turns are claimed in
// order, so the one running is among the oldest.
func ReadTurnQueue(ctx context.Context, st WorkLister, conv uuid.UUID) (TurnQueue, error) {
	items, err := st.WorkList(ctx, &store.WorkListParams{
		ConversationID: &conv, Kind: WorkTurn, States: []store.WorkState{store.WorkRunning, store.WorkAvailable},
		Limit: turnQueueRead,
	})
	if err != nil {
		return TurnQueue{}, fmt.Errorf("reading the turn queue of %s: %w", conv, err)
	}
	var q TurnQueue
	for _, it := range items {
		switch it.State {
		case store.WorkRunning:
			q.Running = true
		case store.WorkAvailable:
			q.Waiting = true
		}
	}
	return q, nil
}

// TurnQueue reads conv's turn queue.
func (s *Service) TurnQueue(ctx context.Context, conv uuid.UUID) (TurnQueue, error) {
	return ReadTurnQueue(ctx, s.st, conv)
}

// TurnsOver reports whether conv is quiet: nothing runs under its lease
// (the conversation is not running) and no turn waits or runs. It is how a
// follower sees a turn that another instance ran come to its end, with
// whatever that turn's items left to do done too.
func (s *Service) TurnsOver(ctx context.Context, conv uuid.UUID) (bool, error) {
	c, err := s.st.ConversationGet(ctx, conv)
	if err != nil {
		return false, fmt.Errorf("reading conversation %s: %w", conv, err)
	}
	if c.Status == store.ConversationRunning {
		return false, nil
	}
	q, err := s.TurnQueue(ctx, conv)
	return err == nil && q.Empty(), err
}

// EntryWakeups signals each time an entry is appended to conv, by any
// instance (the store's notifications of new entries, those of conv
// only): a follower reads the log on it. Signals are coalesced, so one
// may stand for several appends. The channel closes when ctx ends or the
// store stops sending.
func (s *Service) EntryWakeups(ctx context.Context, conv uuid.UUID) (<-chan struct{}, error) {
	notes, err := s.st.Subscribe(ctx, store.TopicEntries)
	if err != nil {
		return nil, fmt.Errorf("following the entries of %s: %w", conv, err)
	}
	out := make(chan struct{}, 1)
	want := conv.String()
	go func() {
		defer close(out)
		for n := range notes {
			if n.Payload != want {
				continue
			}
			select {
			case out <- struct{}{}:
			default: // one is pending already
			}
		}
	}()
	return out, nil
}

// Cursor reads conv's log forward from the seq after.
func (s *Service) Cursor(conv uuid.UUID, after int64) *Cursor {
	return NewCursor(s.st, conv, after)
}

// Answer is what an agent said after a message, as a caller that asked
// and waited for the turn reads it.
type Answer struct {
	// Texts are the agent's replies with text and the texts of its cards,
	// in order.
	Texts []string
	// Card is the last card the agent posted (cards.Stamped JSON); nil
	// when none.
	Card json.RawMessage
	// Failure is the last error people were shown (an interim notice, a
	// retry under way, is not one); "" when none.
	Failure string
}

// AnswerAfter reads the answer to the message at seq of conv: the
// entries after it, and the errors that followed them.
func (s *Service) AnswerAfter(ctx context.Context, conv uuid.UUID, seq int64) (*Answer, error) {
	entries, err := s.st.EntryList(ctx, &store.EntryListParams{ConversationID: conv, AfterSeq: seq, WithErrors: true})
	if err != nil {
		return nil, fmt.Errorf("reading %s after %d: %w", conv, seq, err)
	}
	a := &Answer{}
	for _, e := range entries {
		switch e.Kind {
		case store.EntryAssistant:
			if c, err := Decode[AssistantContent](e); err == nil && strings.TrimSpace(c.Text) != "" {
				a.Texts = append(a.Texts, c.Text)
			}
		case store.EntryCard:
			if c, err := Decode[CardContent](e); err == nil {
				a.Card = c.Card
				if c.Text != "" {
					a.Texts = append(a.Texts, c.Text)
				}
			}
		case store.EntryError:
			if c, err := Decode[ErrorContent](e); err == nil && !c.Interim {
				a.Failure = c.Message
			}
		}
	}
	return a, nil
}
