package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/store"
)

// WorkInbound finishes an inbound event taken by Accept: it runs Submit
// (access, binding, people, entry, turn) right after the platform's ack.
const WorkInbound = "inbound"

// InboundArgs are the args of a WorkInbound item: the event as the platform
// adapter normalised it, with what the adapter still has to do after the ack
// (Inbound.Deferred).
type InboundArgs struct {
	Inbound Inbound `json:"inbound"`
	// Admitted: the access gate let the event in on the ack.
	Admitted bool `json:"admitted,omitempty"`
}

// Kind is WorkInbound.
func (InboundArgs) Kind() string { return WorkInbound }

// InboundFinisher is a platform adapter's part of an inbound event taken by
// Accept, run by the work item after the ack.
type InboundFinisher interface {
	// Prepare does what the adapter left for after the ack (reading shared
	// files named in in.Deferred into in.Files). It runs again when the
	// item is retried, so it must not have effects of its own.
	Prepare(ctx context.Context, in *Inbound) error
	// Submitted is told what Submit did with the event (a refusal's notice,
	// an ack reaction). On a retry after a crash it may be told twice, or
	// told Duplicate.
	Submitted(ctx context.Context, in *Inbound, res *SubmitResult)
}

// SetInboundFinisher names the adapter that finishes a platform's events
// taken by Accept. Call it before the service takes events; without one, a
// platform's Accept is Submit.
func (s *Service) SetInboundFinisher(platform string, f InboundFinisher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finishers == nil {
		s.finishers = map[string]InboundFinisher{}
	}
	s.finishers[platform] = f
}

func (s *Service) finisher(platform string) InboundFinisher {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finishers[platform]
}

// Accept takes an inbound event with one durable write: a work item holding
// the event, unique by its platform event id, enqueued with the Accepts
// running beside it in one statement (store.Store.EnqueueGroup). Everything
// else Submit does happens in that item (RunInbound), right after the
// platform has its ack. An accepted event
// is never lost: it is in the store when Accept returns, and the item runs
// until it is done; a redelivered event finds its item and is Duplicate.
// The items of one place (thread, channel or DM) run one at a time, in the
// order Accept stored them, so its messages are logged in the order they
// were acknowledged.
//
// An event without an id, or of a platform with no finisher, is Submitted
// as before.
func (s *Service) Accept(ctx context.Context, in *Inbound) (*SubmitResult, error) {
	if in == nil || in.Platform == "" || in.Channel == "" {
		return nil, invalid("inbound needs a platform and a channel")
	}
	if in.EventID == "" || s.finisher(in.Platform) == nil {
		if len(in.Deferred) > 0 {
			return nil, invalid("inbound of %s has deferred work but no finisher", in.Platform)
		}
		return s.Submit(ctx, in)
	}
	if strings.TrimSpace(in.Text) == "" && len(in.Files) == 0 && len(in.Deferred) == 0 {
		return &SubmitResult{Ignored: true}, nil
	}
	// The access gate decides on the ack, as under Submit: a refused
	// sender's message is never stored, and they hear why at once.
	in, refused, err := s.admitInbound(ctx, in)
	if err != nil || refused != nil {
		return refused, err
	}
	// A message that addresses no one is stored only in a thread the bot
	// is engaged in: that one read is all the ack does besides its write,
	// and only for messages that may not be for the bot.
	if _, inChannel := s.agents().ForChannel(in.Channel); !in.Mentioned && !in.IsDM && !inChannel {
		_, err := s.st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns(in.Platform, in.Workspace, in.Channel, in.Thread)})
		if errors.Is(err, store.ErrNotFound) {
			return &SubmitResult{Ignored: true}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("accepting %s event %s: finding binding: %w", in.Platform, in.EventID, err)
		}
	}
	key, order := "inbound/"+in.Platform+"/"+in.EventID, inboundOrderingKey(in)
	p, err := enqueueParams(InboundArgs{Inbound: *in, Admitted: true}, &EnqueueOpts{
		UniqueKey: &key, MaxAttempts: s.opts.MaxTurnAttempts + 1, Now: s.now(),
		// One place's events run one at a time, in the order of their
		// acks, in every instance: each binds and logs its message
		// before the next starts, as Submit on the ack did.
		OrderingKey: &order,
		// Ahead of turns: an event waits for its ack's work, never
		// behind the answers of the events before it.
		Priority: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("accepting %s event %s: %w", in.Platform, in.EventID, err)
	}
	// Grouped with the Accepts running beside it: one statement and one
	// commit for a burst's acks.
	r, err := s.st.EnqueueGroup(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("accepting %s event %s: %w", in.Platform, in.EventID, err)
	}
	return &SubmitResult{Accepted: true, Duplicate: !r.Inserted}, nil
}

// inboundOrderingKey is the ordering key of an event's inbound item: the
// place its message is bound to (a thread, a channel, a DM), as Submit finds
// it.
func inboundOrderingKey(in *Inbound) string {
	return "inbound/" + store.PlaceFromColumns(in.Platform, in.Workspace, in.Channel, in.Thread).String()
}

// RunInbound finishes an event taken by Accept: the adapter's deferred part,
// then Submit, whose dedupe record commits with the entry and the turn, so a
// retried item stores nothing twice.
func (s *Service) RunInbound(ctx context.Context, item *store.WorkItem, args InboundArgs) error {
	in := args.Inbound
	f := s.finisher(in.Platform)
	if f == nil && len(in.Deferred) > 0 {
		// The adapter is wired before the worker starts; until it is, the
		// item waits for its retry rather than lose the deferred part.
		return fmt.Errorf("finishing %s event %s: no finisher for %s", in.Platform, in.EventID, in.Platform)
	}
	if f != nil && len(in.Deferred) > 0 {
		if err := f.Prepare(ctx, &in); err != nil {
			return fmt.Errorf("preparing %s event %s: %w", in.Platform, in.EventID, err)
		}
	}
	sub := in
	sub.Deferred = nil
	// Grouped with the other events' Submits, apart from the acks: an ack
	// is one insert, and must not wait in a batch behind a dozen writes of
	// each event taken before it.
	res, err := s.submit(store.GroupBehind(ctx), &sub, args.Admitted)
	if err != nil {
		return err
	}
	if f != nil {
		f.Submitted(ctx, &in, res)
	}
	return nil
}

// DeferredJSON encodes an adapter's deferred part of an event (Inbound.Deferred).
func DeferredJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("core: encoding deferred inbound work: %v", err))
	}
	return b
}
