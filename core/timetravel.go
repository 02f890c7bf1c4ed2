package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Time travel: a conversation's derived state (its status, the calls
// waiting for a result, the approvals waiting for a person) as it was when
// the entry at a seq was written, rebuilt by replaying the log up to it with
// the engine's own readings (pendingCalls, needsResponse). Only approvals
// live outside the log, in a table whose rows change when decided; "as they
// were at N" reads them against the log:
//
//   - an approval is shown at N when its call was pending at N (its call at
//     or before N, its result after): that is when a person was being
//     asked;
//   - it shows the decision stored on the row only when the row was decided
//     before entry N was written (decided_at before the entry's created_at:
//     the call was then running on the server); otherwise it shows as
//     pending, decided by nobody, as people saw it then.

// ConversationState is a conversation's derived state at a seq.
type ConversationState struct {
	// At is the seq the state is at.
	At int64
	// Status is paused when a call waited for a person or a client, running
	// when a turn was owed or under way (the log ended with something the
	// agent had not answered, or a call of its own was running), idle
	// otherwise.
	Status       store.ConversationStatus
	PendingCalls []PendingCall
	// Approvals are the approvals of the pending calls, as they were at At.
	Approvals []*store.Approval
}

// StateAt rebuilds conv's status, pending calls and approvals as they were
// when the entry at seq at was written. An at outside 1..the last seq is
// ErrInvalid naming at.
func (s *Service) StateAt(ctx context.Context, conv uuid.UUID, at int64) (*ConversationState, error) {
	c, err := s.st.ConversationGet(ctx, conv)
	if err != nil {
		return nil, fmt.Errorf("loading conversation %s: %w", conv, err)
	}
	if at < 1 || at > c.LastSeq {
		return nil, invalid("at=%d is not a seq of this conversation: want 1 to %d", at, c.LastSeq)
	}
	entries, err := s.st.EntryList(ctx, &store.EntryListParams{ConversationID: conv, UpToSeq: at})
	if err != nil {
		return nil, fmt.Errorf("reading the log of %s up to %d: %w", conv, at, err)
	}
	pending, err := s.PendingCallsAt(ctx, conv, at)
	if err != nil {
		return nil, err
	}
	then := entries[len(entries)-1].CreatedAt // when entry at was written
	st := &ConversationState{At: at, PendingCalls: pending, Approvals: []*store.Approval{}}
	for i, pc := range pending {
		ap, err := s.st.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: conv, CallID: pc.CallID})
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the approval of call %s: %w", pc.CallID, err)
		}
		if ap.DecidedAt != nil && ap.DecidedAt.Before(then) {
			// Decided by then: the call ran on the server.
			pending[i].WaitingFor = "server"
		} else {
			// Undecided by then: the call waited for a person, whatever
			// its execution state says now.
			pending[i].WaitingFor = "person"
			was := *ap
			was.Status, was.Decision, was.DecidedBy, was.DecidedAt = store.ApprovalPending, nil, "", nil
			ap = &was
		}
		st.Approvals = append(st.Approvals, ap)
	}
	switch {
	case waitsOutside(pending):
		st.Status = store.ConversationPaused
	case len(pending) > 0 || needsResponse(entries, s.agentOf(c).Name):
		st.Status = store.ConversationRunning
	default:
		st.Status = store.ConversationIdle
	}
	return st, nil
}

// waitsOutside reports whether a call waits for a person or a client.
func waitsOutside(pending []PendingCall) bool {
	for _, pc := range pending {
		if pc.WaitingFor == "person" || pc.WaitingFor == "client" {
			return true
		}
	}
	return false
}

// loadModelLogAt is the view a turn of conv would read now (loadModelLog),
// or for time travel (at > 0) the whole log up to seq at: a summary written
// later covers entries the state at at still needs.
func (s *Service) loadModelLogAt(ctx context.Context, q store.Queries, conv *store.Conversation, at int64) (*modelLog, error) {
	if at <= 0 {
		return loadModelLog(ctx, q, conv, windowOf(s.agentOf(conv)))
	}
	entries, err := q.EntryList(ctx, &store.EntryListParams{ConversationID: conv.ID, UpToSeq: at})
	if err != nil {
		return nil, fmt.Errorf("loading the log of %s up to seq %d: %w", conv.ID, at, err)
	}
	return &modelLog{entries: entries}, nil
}
