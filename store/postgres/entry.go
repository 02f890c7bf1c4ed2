package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) EntryAppend(ctx context.Context, p *store.EntryAppendParams) (*store.EntryAppendResult, error) {
	id, now := newID(), ts(p.Now)
	if p.Kind == store.EntryError {
		row, err := call(ctx, q, (*dbsqlc.Queries).EntryAppendError, &dbsqlc.EntryAppendErrorParams{
			ID: id, ConversationID: p.ConversationID, Author: string(p.Author), Content: p.Content,
			TurnID: p.TurnID, Now: now, LeaseOwner: p.LeaseOwner,
		})
		if errors.Is(err, errNoRow) {
			return nil, q.fenceErr(ctx, p.ConversationID, p.LeaseOwner, "appending error entry to %s", p.ConversationID)
		}
		if err != nil {
			return nil, wrap(err, "appending error entry to %s", p.ConversationID)
		}
		return q.appended(&row, false), nil
	}

	// Fast path, one statement: the next seq, or ExpectSeq when it is next.
	next := &dbsqlc.EntryAppendNextParams{
		ID: id, ConversationID: p.ConversationID, ExpectSeq: p.ExpectSeq, Kind: string(p.Kind),
		Author: string(p.Author), Content: p.Content, TurnID: p.TurnID, Now: now, LeaseOwner: p.LeaseOwner,
		Title: p.Title,
	}
	row, err := call(ctx, q, (*dbsqlc.Queries).EntryAppendNext, next)
	if err == nil {
		q.wrote(row.Xid)
		return q.appended(nextEntry(next, row.Seq), false), nil
	}
	if !errors.Is(err, errNoRow) {
		return nil, wrap(err, "appending entry to %s", p.ConversationID)
	}

	// The conversation is missing, the lease is not ours or ExpectSeq is not
	// next: decide under the conversation's row lock, so the answer cannot
	// change underneath.
	var res *store.EntryAppendResult
	err = q.atomic(ctx, func(q *queries) error {
		conv, err := call(ctx, q, (*dbsqlc.Queries).EntryLockConversation, p.ConversationID)
		if err != nil {
			return err
		}
		if p.LeaseOwner != "" && (conv.LeaseOwner != p.LeaseOwner || conv.LeaseExpiresAt == nil || !conv.LeaseExpiresAt.After(now)) {
			return fmt.Errorf("%w: the lease is held by %q, not %q", store.ErrLeaseLost, conv.LeaseOwner, p.LeaseOwner)
		}
		action, err := store.DecideAppend(conv.LastSeq, p.ExpectSeq)
		if err != nil {
			return err
		}
		if action == store.AppendNext {
			// Another append ended between our two statements; ExpectSeq is next now.
			row, err := call(ctx, q, (*dbsqlc.Queries).EntryAppendNext, next)
			if err != nil {
				return err
			}
			q.wrote(row.Xid)
			res = q.appended(nextEntry(next, row.Seq), false)
			return nil
		}
		row, err := call(ctx, q, (*dbsqlc.Queries).EntryFork, &dbsqlc.EntryForkParams{
			ID: id, ParentID: p.ConversationID, ForkID: newID(), ForkSeq: *p.ExpectSeq, Kind: string(p.Kind),
			Author: string(p.Author), Content: p.Content, TurnID: p.TurnID, Now: now, Title: p.Title,
			Retitle: p.Retitle,
		})
		if err != nil {
			return wrap(err, "forking at seq %d", *p.ExpectSeq)
		}
		res = q.appended(&row, true)
		return nil
	})
	if err != nil {
		return nil, wrap(err, "appending entry to %s", p.ConversationID)
	}
	return res, nil
}

// nextEntry is the row EntryAppendNext wrote at seq, from its parameters.
func nextEntry(p *dbsqlc.EntryAppendNextParams, seq *int64) *dbsqlc.Entry {
	return &dbsqlc.Entry{
		ID: p.ID, ConversationID: p.ConversationID, Seq: seq, AfterSeq: *seq - 1, Kind: p.Kind,
		Author: p.Author, Content: p.Content, TurnID: p.TurnID, CreatedAt: p.Now,
	}
}

// appended wakes the readers of the conversation the entry landed in.
func (q *queries) appended(row *dbsqlc.Entry, forked bool) *store.EntryAppendResult {
	q.notify(store.TopicEntries, row.ConversationID.String())
	return &store.EntryAppendResult{Entry: entry(row), ConversationID: row.ConversationID, Forked: forked}
}

func (q *queries) EntryList(ctx context.Context, p *store.EntryListParams) ([]*store.Entry, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).EntryList, &dbsqlc.EntryListParams{
		ConversationID: p.ConversationID, AfterSeq: p.AfterSeq, UpToSeq: p.UpToSeq, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing entries of %s after seq %d", p.ConversationID, p.AfterSeq)
	}
	list := each(rows, entry)
	if p.WithErrors {
		if list, err = q.withErrors(ctx, p, list); err != nil {
			return nil, wrap(err, "listing error entries of %s after seq %d", p.ConversationID, p.AfterSeq)
		}
	}
	return list, nil
}

// withErrors merges into list (the entries with a seq that EntryList read
// for p) the error entries of the same range (see store.ErrorsUpTo and
// store.MergeErrors).
func (q *queries) withErrors(ctx context.Context, p *store.EntryListParams, list []*store.Entry) ([]*store.Entry, error) {
	upTo, ok := store.ErrorsUpTo(p, list)
	if !ok {
		return list, nil
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).EntryErrorList, &dbsqlc.EntryErrorListParams{
		ConversationID: p.ConversationID, AfterSeq: p.AfterSeq, UpToSeq: upTo, MaxRows: int32(p.Limit),
	})
	if err != nil || len(rows) == 0 {
		return list, err
	}
	errs := each(rows, entry)
	return store.MergeErrors(list, errs, p.Limit), nil
}

func (q *queries) EntryListInChannel(ctx context.Context, p *store.EntryListInChannelParams) ([]*store.Entry, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).EntryListInChannel, &dbsqlc.EntryListInChannelParams{
		Platform: p.Place.Platform, Workspace: p.Place.Workspace, Channel: p.Place.Channel, MaxRows: int32(max(p.Limit, 1)),
	})
	if err != nil {
		return nil, wrap(err, "listing the messages of channel %s", p.Place.Channel)
	}
	return each(rows, entry), nil
}

func (q *queries) EntryGet(ctx context.Context, id uuid.UUID) (*store.Entry, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).EntryGet, id)
	if err != nil {
		return nil, wrap(err, "getting entry %s", id)
	}
	return entry(&row), nil
}

// fenceErr explains why a write fenced by owner matched no conversation row:
// the conversation is missing, or owner does not hold its live lease.
func (q *queries) fenceErr(ctx context.Context, convID uuid.UUID, owner, format string, args ...any) error {
	if err := q.mustExist(ctx, convID); err != nil {
		return wrap(err, format, args...)
	}
	return fmt.Errorf(format+": %w: %q does not hold the conversation's lease", append(args, store.ErrLeaseLost, owner)...)
}

func entry(r *dbsqlc.Entry) *store.Entry {
	return &store.Entry{
		ID:             r.ID,
		ConversationID: r.ConversationID,
		Seq:            r.Seq,
		AfterSeq:       r.AfterSeq,
		Kind:           store.EntryKind(r.Kind),
		Author:         store.Author(r.Author),
		Content:        r.Content,
		TurnID:         r.TurnID,
		CreatedAt:      r.CreatedAt,
	}
}
