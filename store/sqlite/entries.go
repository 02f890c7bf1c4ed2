package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (q *queries) EntryAppend(ctx context.Context, p *store.EntryAppendParams) (*store.EntryAppendResult, error) {
	if p == nil {
		return nil, fmt.Errorf("appending entry: %w", invalid("params are nil"))
	}
	if !p.Kind.Valid() {
		return nil, fmt.Errorf("appending entry to %s: %w", p.ConversationID, invalid("Kind %q is not an entry kind", p.Kind))
	}
	content, err := jsonArg("Content", p.Content, "{}")
	if err != nil {
		return nil, fmt.Errorf("appending entry to %s: %w", p.ConversationID, err)
	}
	if p.Kind != store.EntryError && p.ExpectSeq != nil && *p.ExpectSeq < 1 {
		return nil, fmt.Errorf("appending entry to %s: %w", p.ConversationID, invalid("ExpectSeq %d must be at least 1", *p.ExpectSeq))
	}
	now := q.now(p.Now)
	var res *store.EntryAppendResult
	err = q.atomic(ctx, func() error {
		if p.LeaseOwner != "" {
			if err := q.fence(ctx, p.ConversationID, p.LeaseOwner, now); err != nil {
				return err
			}
		}
		e := &store.Entry{
			ID:             newID(),
			ConversationID: p.ConversationID,
			Kind:           p.Kind,
			Author:         p.Author,
			Content:        json.RawMessage(content),
			TurnID:         p.TurnID,
			CreatedAt:      fromMicros(micros(now)),
		}
		forked := false
		if p.Kind == store.EntryError {
			// No seq: the error is shown after the entry it followed and never
			// moves the log forward.
			conv, err := queryOne(ctx, q.db, "ConversationGet", scanConversation, sql.Named("id", p.ConversationID.String()))
			if err != nil {
				return err
			}
			e.AfterSeq = conv.LastSeq
		} else {
			// The common case in one statement: take the next seq.
			var seq int64
			err := q.db.queryRow(ctx, "ConversationNextSeq",
				sql.Named("id", p.ConversationID.String()),
				sql.Named("expect_seq", int64Arg(p.ExpectSeq)),
				sql.Named("now", micros(now))).Scan(&seq)
			switch {
			case err == nil:
				e.Seq, e.AfterSeq = &seq, seq-1
			case !errors.Is(err, sql.ErrNoRows):
				return mapErr(err)
			default:
				conv, err := queryOne(ctx, q.db, "ConversationGet", scanConversation, sql.Named("id", p.ConversationID.String()))
				if err != nil {
					return err
				}
				if p.ExpectSeq == nil {
					return fmt.Errorf("allocating seq %d of %s: no row updated", conv.LastSeq+1, conv.ID) // cannot happen under the single writer
				}
				if *p.ExpectSeq > conv.LastSeq {
					return fmt.Errorf("%w: ExpectSeq %d is past the end of the log (last seq %d)", store.ErrConflict, *p.ExpectSeq, conv.LastSeq)
				}
				fork, err := q.fork(ctx, conv, *p.ExpectSeq, now)
				if err != nil {
					return err
				}
				seq := *p.ExpectSeq
				e.ConversationID, e.Seq, e.AfterSeq, forked = fork.ID, &seq, seq-1, true
			}
		}
		if _, err := exec(ctx, q.db, "EntryInsert",
			sql.Named("id", e.ID.String()),
			sql.Named("conversation_id", e.ConversationID.String()),
			sql.Named("seq", int64Arg(e.Seq)),
			sql.Named("after_seq", e.AfterSeq),
			sql.Named("kind", string(e.Kind)),
			sql.Named("author", e.Author),
			sql.Named("content", content),
			sql.Named("turn_id", uuidArg(e.TurnID)),
			sql.Named("now", micros(now))); err != nil {
			return err
		}
		q.notify(store.TopicEntries, e.ConversationID.String())
		res = &store.EntryAppendResult{Entry: e, ConversationID: e.ConversationID, Forked: forked}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("appending %s entry to %s: %w", p.Kind, p.ConversationID, err)
	}
	return res, nil
}

// fork creates a child of parent seeded with parent's entries before seq, so
// that the caller's entry can land at seq in it. Nothing in parent changes
// but its child count.
func (q *queries) fork(ctx context.Context, parent *store.Conversation, seq int64, now time.Time) (*store.Conversation, error) {
	child, err := q.conversationInsert(ctx, &store.ConversationCreateParams{
		AgentID:  parent.AgentID,
		Title:    parent.Title,
		Provider: parent.Provider,
		Model:    parent.Model,
		Thinking: parent.Thinking,
		Metadata: parent.Metadata,
		Now:      now,
	}, parent, seq)
	if err != nil {
		return nil, fmt.Errorf("creating fork at seq %d: %w", seq, err)
	}
	if n := seq - 1; n > 0 {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = newID().String()
		}
		idsJSON, err := json.Marshal(ids)
		if err != nil {
			return nil, fmt.Errorf("encoding fork entry ids: %w", err)
		}
		copied, err := exec(ctx, q.db, "EntrySeedFork",
			sql.Named("fork_id", child.ID.String()),
			sql.Named("parent_id", parent.ID.String()),
			sql.Named("seq", seq),
			sql.Named("ids", string(idsJSON)))
		if err != nil {
			return nil, fmt.Errorf("seeding fork %s: %w", child.ID, err)
		}
		if copied != n {
			// The log of parent has a gap, which appends and discards never
			// leave: refuse rather than fork a broken log.
			return nil, fmt.Errorf("seeding fork %s: copied %d entries of seqs 1..%d", child.ID, copied, n)
		}
	}
	if _, err := exec(ctx, q.db, "ConversationAddChild",
		sql.Named("id", parent.ID.String()),
		sql.Named("now", micros(now))); err != nil {
		return nil, fmt.Errorf("counting fork on parent %s: %w", parent.ID, err)
	}
	return child, nil
}

func (q *queries) EntryList(ctx context.Context, p *store.EntryListParams) ([]*store.Entry, error) {
	if p == nil {
		return nil, fmt.Errorf("listing entries: %w", invalid("params are nil"))
	}
	if p.AfterSeq < 0 || p.UpToSeq < 0 {
		return nil, fmt.Errorf("listing entries of %s: %w", p.ConversationID, invalid("AfterSeq %d and UpToSeq %d must not be negative", p.AfterSeq, p.UpToSeq))
	}
	name := "EntryList"
	if p.WithErrors {
		name = "EntryListWithErrors"
	}
	out, err := queryList(ctx, q.db, name, func(r scanner) (*store.Entry, error) { return scanEntry(r) },
		sql.Named("conversation_id", p.ConversationID.String()),
		sql.Named("after_seq", p.AfterSeq),
		sql.Named("up_to", p.UpToSeq),
		sql.Named("limit", limitArg(p.Limit)))
	if err != nil {
		return nil, fmt.Errorf("listing entries of %s after seq %d: %w", p.ConversationID, p.AfterSeq, err)
	}
	return out, nil
}

func (q *queries) EntryGet(ctx context.Context, id uuid.UUID) (*store.Entry, error) {
	e, err := queryOne(ctx, q.db, "EntryGet", func(r scanner) (*store.Entry, error) { return scanEntry(r) },
		sql.Named("id", id.String()))
	if err != nil {
		return nil, fmt.Errorf("getting entry %s: %w", id, err)
	}
	return e, nil
}

func (q *queries) EntryDiscard(ctx context.Context, p *store.EntryDiscardParams) (int, error) {
	if p == nil {
		return 0, fmt.Errorf("discarding entries: %w", invalid("params are nil"))
	}
	if p.AfterSeq < 0 {
		return 0, fmt.Errorf("discarding entries of %s: %w", p.ConversationID, invalid("AfterSeq %d must not be negative", p.AfterSeq))
	}
	now := micros(q.now(p.Now))
	var moved int64
	err := q.atomic(ctx, func() error {
		if err := q.mustExist(ctx, p.ConversationID); err != nil {
			return err
		}
		args := []any{
			sql.Named("conversation_id", p.ConversationID.String()),
			sql.Named("after_seq", p.AfterSeq),
			sql.Named("reason", p.Reason),
			sql.Named("now", now),
		}
		var err error
		if moved, err = exec(ctx, q.db, "EntryDiscardCopy", args...); err != nil {
			return err
		}
		if moved == 0 {
			return nil
		}
		deleted, err := exec(ctx, q.db, "EntryDiscardDelete", args[:2]...)
		if err != nil {
			return err
		}
		if deleted != moved {
			return fmt.Errorf("moved %d entries but deleted %d", moved, deleted)
		}
		// The next append takes AfterSeq+1 again: seqs stay gap-free.
		if _, err := exec(ctx, q.db, "ConversationRewind",
			sql.Named("id", p.ConversationID.String()),
			sql.Named("after_seq", p.AfterSeq),
			sql.Named("now", now)); err != nil {
			return err
		}
		if _, err := exec(ctx, q.db, "EntryDiscardRewindBindings", args[0], args[1], args[3]); err != nil {
			return err
		}
		q.notify(store.TopicEntries, p.ConversationID.String())
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("discarding entries of %s after seq %d: %w", p.ConversationID, p.AfterSeq, err)
	}
	return int(moved), nil
}

func (q *queries) EntryListDiscarded(ctx context.Context, conversationID uuid.UUID) ([]*store.DiscardedEntry, error) {
	out, err := queryList(ctx, q.db, "EntryListDiscarded", func(r scanner) (*store.DiscardedEntry, error) {
		var (
			reason    string
			discarded int64
		)
		e, err := scanEntry(r, &reason, &discarded)
		if err != nil {
			return nil, err
		}
		return &store.DiscardedEntry{Entry: *e, Reason: reason, DiscardedAt: fromMicros(discarded)}, nil
	}, sql.Named("conversation_id", conversationID.String()))
	if err != nil {
		return nil, fmt.Errorf("listing discarded entries of %s: %w", conversationID, err)
	}
	return out, nil
}
