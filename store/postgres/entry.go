package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (q *queries) EntryAppend(ctx context.Context, p *store.EntryAppendParams) (*store.EntryAppendResult, error) {
	if !p.Kind.Valid() {
		return nil, fmt.Errorf("appending entry to %s: %w: unknown kind %q", p.ConversationID, store.ErrInvalid, p.Kind)
	}
	content, err := jsonArg("Content", p.Content, "{}")
	if err != nil {
		return nil, fmt.Errorf("appending entry to %s: %w", p.ConversationID, err)
	}
	now := q.now(p.Now)
	id := newID()

	if p.Kind == store.EntryError {
		row, err := one[entryRow](ctx, q, sqlq.Get("EntryAppendError"),
			id, p.ConversationID, p.Author, content, p.TurnID, now, p.LeaseOwner)
		if errors.Is(err, pgxNoRows) && p.LeaseOwner != "" {
			return nil, q.fenceErr(ctx, p.ConversationID, p.LeaseOwner, "appending error entry to %s", p.ConversationID)
		}
		if err != nil {
			return nil, wrap(err, "appending error entry to %s", p.ConversationID)
		}
		q.notify(note{topic: store.TopicEntries, payload: p.ConversationID.String()})
		return &store.EntryAppendResult{Entry: row.domain(), ConversationID: p.ConversationID}, nil
	}

	if p.ExpectSeq != nil && *p.ExpectSeq < 1 {
		return nil, fmt.Errorf("appending entry to %s: %w: ExpectSeq must be at least 1, got %d",
			p.ConversationID, store.ErrInvalid, *p.ExpectSeq)
	}

	// Fast path, one statement: the next seq, or ExpectSeq when it is next.
	row, err := one[entryRow](ctx, q, sqlq.Get("EntryAppendNext"),
		id, p.ConversationID, p.ExpectSeq, string(p.Kind), p.Author, content, p.TurnID, now, p.LeaseOwner)
	if err == nil {
		q.notify(note{topic: store.TopicEntries, payload: p.ConversationID.String()})
		return &store.EntryAppendResult{Entry: row.domain(), ConversationID: p.ConversationID}, nil
	}
	if !errors.Is(err, pgxNoRows) {
		return nil, wrap(err, "appending entry to %s", p.ConversationID)
	}

	// The conversation is missing or ExpectSeq is not next: decide under the
	// conversation's row lock, so the answer cannot change underneath.
	var res *store.EntryAppendResult
	err = q.atomic(ctx, func(q *queries) error {
		var (
			lastSeq      int64
			leaseOwner   string
			leaseExpires *time.Time
		)
		err := q.scan(ctx, sqlq.Get("EntryLockConversation"), []any{p.ConversationID}, &lastSeq, &leaseOwner, &leaseExpires)
		if err != nil {
			return wrap(err, "appending entry to %s", p.ConversationID)
		}
		if p.LeaseOwner != "" && (leaseOwner != p.LeaseOwner || leaseExpires == nil || !leaseExpires.After(now)) {
			return fmt.Errorf("appending entry to %s: %w: the lease is held by %q, not %q", p.ConversationID, store.ErrLeaseLost, leaseOwner, p.LeaseOwner)
		}
		expect := lastSeq + 1
		if p.ExpectSeq != nil {
			expect = *p.ExpectSeq
		}
		switch {
		case expect == lastSeq+1:
			// Another append ended between our two statements; it is next now.
			row, err := one[entryRow](ctx, q, sqlq.Get("EntryAppendNext"),
				id, p.ConversationID, expect, string(p.Kind), p.Author, content, p.TurnID, now, p.LeaseOwner)
			if err != nil {
				return wrap(err, "appending entry to %s", p.ConversationID)
			}
			res = &store.EntryAppendResult{Entry: row.domain(), ConversationID: p.ConversationID}
		case expect > lastSeq+1:
			return fmt.Errorf("appending entry to %s: %w: ExpectSeq %d is past the next seq %d",
				p.ConversationID, store.ErrConflict, expect, lastSeq+1)
		default:
			forkID := newID()
			row, err := one[entryRow](ctx, q, sqlq.Get("EntryFork"),
				id, p.ConversationID, forkID, expect, string(p.Kind), p.Author, content, p.TurnID, now)
			if err != nil {
				return wrap(err, "forking conversation %s at seq %d", p.ConversationID, expect)
			}
			res = &store.EntryAppendResult{Entry: row.domain(), ConversationID: forkID, Forked: true}
		}
		q.notify(note{topic: store.TopicEntries, payload: res.ConversationID.String()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (q *queries) EntryList(ctx context.Context, p *store.EntryListParams) ([]*store.Entry, error) {
	if p.AfterSeq < 0 || p.UpToSeq < 0 {
		return nil, fmt.Errorf("listing entries of %s: %w: negative cursor", p.ConversationID, store.ErrInvalid)
	}
	name := "EntryList"
	if p.WithErrors {
		name = "EntryListWithErrors"
	}
	rows, err := all[entryRow](ctx, q, sqlq.Get(name), p.ConversationID, p.AfterSeq, p.UpToSeq, limitArg(p.Limit))
	if err != nil {
		return nil, wrap(err, "listing entries of %s", p.ConversationID)
	}
	out := make([]*store.Entry, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

func (q *queries) EntryGet(ctx context.Context, id uuid.UUID) (*store.Entry, error) {
	row, err := one[entryRow](ctx, q, sqlq.Get("EntryGet"), id)
	if err != nil {
		return nil, wrap(err, "getting entry %s", id)
	}
	return row.domain(), nil
}

func (q *queries) EntryDiscard(ctx context.Context, p *store.EntryDiscardParams) (int, error) {
	if p.AfterSeq < 0 {
		return 0, fmt.Errorf("discarding entries of %s: %w: negative AfterSeq", p.ConversationID, store.ErrInvalid)
	}
	now := q.now(p.Now)
	var moved int
	err := q.atomic(ctx, func(q *queries) error {
		var lastSeq int64
		err := q.scan(ctx, sqlq.Get("EntryDiscardRewind"), []any{p.ConversationID, p.AfterSeq, now}, &lastSeq)
		if err != nil {
			return wrap(err, "discarding entries of %s", p.ConversationID)
		}
		tag, err := q.exec(ctx, sqlq.Get("EntryDiscardMove"), p.ConversationID, p.AfterSeq, p.Reason, now)
		if err != nil {
			return wrap(err, "discarding entries of %s", p.ConversationID)
		}
		moved = int(tag.RowsAffected())
		if _, err := q.exec(ctx, sqlq.Get("EntryDiscardRewindBindings"), p.ConversationID, p.AfterSeq, now); err != nil {
			return wrap(err, "rewinding delivered cursors of %s", p.ConversationID)
		}
		return nil
	})
	return moved, err
}

func (q *queries) EntryListDiscarded(ctx context.Context, conversationID uuid.UUID) ([]*store.DiscardedEntry, error) {
	rows, err := all[discardedRow](ctx, q, sqlq.Get("EntryListDiscarded"), conversationID)
	if err != nil {
		return nil, wrap(err, "listing discarded entries of %s", conversationID)
	}
	out := make([]*store.DiscardedEntry, len(rows))
	for i, r := range rows {
		out[i] = &store.DiscardedEntry{Entry: *r.entryRow.domain(), Reason: r.Reason, DiscardedAt: r.DiscardedAt.UTC()}
	}
	return out, nil
}

// fenceErr explains why a write fenced by owner matched no conversation row:
// the conversation is missing, or owner does not hold its live lease.
func (q *queries) fenceErr(ctx context.Context, convID uuid.UUID, owner, format string, args ...any) error {
	ok, err := q.exists(ctx, "ConversationExists", convID)
	if err != nil {
		return wrap(err, format, args...)
	}
	if !ok {
		return fmt.Errorf(format+": %w", append(args, store.ErrNotFound)...)
	}
	return fmt.Errorf(format+": %w: %q does not hold the conversation's lease", append(args, store.ErrLeaseLost, owner)...)
}
