package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) EntryAppend(ctx context.Context, p *store.EntryAppendParams) (*store.EntryAppendResult, error) {
	res, err := write(ctx, q, func(t *queries) (*store.EntryAppendResult, error) {
		if err := t.fence(ctx, p.ConversationID, p.LeaseOwner, p.Now); err != nil {
			return nil, err
		}
		if p.Kind != store.EntryError && p.ExpectSeq == nil {
			// The usual append: the next seq, with no read of the
			// conversation first (a missing one allocates no seq).
			return t.appendNext(ctx, p)
		}
		row, err := t.tx.ConversationGet(ctx, p.ConversationID)
		if err != nil {
			return nil, err
		}
		e := &store.Entry{
			ID: newID(), ConversationID: row.ID, AfterSeq: row.LastSeq, Kind: p.Kind, Author: p.Author,
			Content: p.Content, TurnID: p.TurnID, CreatedAt: fromMicros(micros(p.Now)),
		}
		forked := false
		// An error entry has no seq: it is shown after the entry it followed
		// and never moves the log forward.
		if p.Kind != store.EntryError {
			action, err := store.DecideAppend(row.LastSeq, p.ExpectSeq)
			if err != nil {
				return nil, err
			}
			var seq int64
			if action == store.AppendFork {
				seq, forked = *p.ExpectSeq, true
				parent := conversation(row)
				// The fork's title: its own when the parent has none, or when
				// it edits the first message of a parent titled
				// automatically; a rename's or a given title stays.
				title, auto := parent.Title, parent.TitleAuto
				if p.Title != "" && (parent.Title == "" || (p.Retitle && parent.TitleAuto)) {
					title, auto = p.Title, true
				}
				fork, err := t.fork(ctx, parent, seq, title, auto, p.Now)
				if err != nil {
					return nil, err
				}
				e.ConversationID = fork.ID
			} else if seq, err = t.tx.ConversationNextSeq(ctx, dbsqlc.ConversationNextSeqParams{ID: row.ID, Now: micros(p.Now), Title: p.Title}); err != nil {
				return nil, err
			}
			e.Seq, e.AfterSeq = &seq, seq-1
		}
		err = t.tx.EntryInsert(ctx, dbsqlc.EntryInsertParams{
			ID: e.ID, ConversationID: e.ConversationID, Seq: intArg(e.Seq), AfterSeq: e.AfterSeq,
			Kind: string(e.Kind), Author: string(e.Author), Content: string(e.Content), TurnID: uuidArg(e.TurnID),
			CreatedAt: micros(e.CreatedAt),
		})
		if err != nil {
			return nil, err
		}
		t.notify(store.TopicEntries, e.ConversationID.String())
		return &store.EntryAppendResult{Entry: e, ConversationID: e.ConversationID, Forked: forked}, nil
	})
	if err != nil {
		return nil, wrap(err, "appending %s entry to %s", p.Kind, p.ConversationID)
	}
	return res, nil
}

// appendNext appends p's entry at the conversation's next seq: two
// statements, the seq's allocation and the insert.
func (t *queries) appendNext(ctx context.Context, p *store.EntryAppendParams) (*store.EntryAppendResult, error) {
	seq, err := t.tx.ConversationNextSeq(ctx, dbsqlc.ConversationNextSeqParams{ID: p.ConversationID, Now: micros(p.Now), Title: p.Title})
	if err != nil {
		return nil, err
	}
	e := &store.Entry{
		ID: newID(), ConversationID: p.ConversationID, Seq: &seq, AfterSeq: seq - 1, Kind: p.Kind, Author: p.Author,
		Content: p.Content, TurnID: p.TurnID, CreatedAt: fromMicros(micros(p.Now)),
	}
	err = t.tx.EntryInsert(ctx, dbsqlc.EntryInsertParams{
		ID: e.ID, ConversationID: e.ConversationID, Seq: intArg(e.Seq), AfterSeq: e.AfterSeq,
		Kind: string(e.Kind), Author: string(e.Author), Content: string(e.Content), TurnID: uuidArg(e.TurnID),
		CreatedAt: micros(e.CreatedAt),
	})
	if err != nil {
		return nil, err
	}
	t.notify(store.TopicEntries, e.ConversationID.String())
	return &store.EntryAppendResult{Entry: e, ConversationID: e.ConversationID}, nil
}

// fork creates a child of parent seeded with parent's entries before seq, so
// that the caller's entry can land at seq in it, titled title (automatic
// when auto). Nothing in parent changes but its child count.
func (q *queries) fork(ctx context.Context, parent *store.Conversation, seq int64, title string, auto bool, now time.Time) (*store.Conversation, error) {
	child, err := q.conversationInsert(ctx, &store.ConversationCreateParams{
		ID: newID(), AgentID: parent.AgentID, Title: title, Provider: parent.Provider,
		Model: parent.Model, Thinking: parent.Thinking, Metadata: parent.Metadata, Now: now,
	}, parent, seq, auto)
	if err != nil {
		return nil, fmt.Errorf("creating fork at seq %d: %w", seq, err)
	}
	if n := seq - 1; n > 0 {
		ids := make([]uuid.UUID, n)
		for i := range ids {
			ids[i] = newID()
		}
		idsJSON, err := json.Marshal(ids)
		if err != nil {
			return nil, fmt.Errorf("encoding fork entry ids: %w", err)
		}
		copied, err := q.tx.EntrySeedFork(ctx, dbsqlc.EntrySeedForkParams{ForkID: child.ID, Ids: string(idsJSON), ParentID: parent.ID, Seq: seq})
		if err != nil {
			return nil, fmt.Errorf("seeding fork %s: %w", child.ID, err)
		}
		if copied != n {
			// The log of parent has a gap, which appends never leave: refuse
			// rather than fork a broken log.
			return nil, fmt.Errorf("seeding fork %s: copied %d entries of seqs 1..%d", child.ID, copied, n)
		}
	}
	if err := q.tx.RulebookCopy(ctx, dbsqlc.RulebookCopyParams{ForkID: child.ID, ParentID: parent.ID}); err != nil {
		return nil, fmt.Errorf("copying the rulebook of %s to fork %s: %w", parent.ID, child.ID, err)
	}
	if err := q.tx.ConversationAddChild(ctx, dbsqlc.ConversationAddChildParams{ID: parent.ID, Now: micros(now)}); err != nil {
		return nil, fmt.Errorf("counting fork on parent %s: %w", parent.ID, err)
	}
	return child, nil
}

func (q *queries) EntryList(ctx context.Context, p *store.EntryListParams) ([]*store.Entry, error) {
	rows, err := q.read().EntryList(ctx, entryListArgs(p))
	out, err := all(rows, err, listedEntry(p.ConversationID))
	if err == nil && p.WithErrors {
		out, err = q.withErrors(ctx, p, out)
	}
	if err != nil {
		return nil, wrap(err, "listing entries of %s after seq %d", p.ConversationID, p.AfterSeq)
	}
	return out, nil
}

// withErrors merges into list (the entries with a seq that EntryList read
// for p) the error entries of the same range (see store.ErrorsUpTo and
// store.MergeErrors).
func (q *queries) withErrors(ctx context.Context, p *store.EntryListParams, list []*store.Entry) ([]*store.Entry, error) {
	upTo, ok := store.ErrorsUpTo(p, list)
	if !ok {
		return list, nil
	}
	args := entryListArgs(p)
	args.UpTo = upTo
	rows, err := q.read().EntryErrorList(ctx, dbsqlc.EntryErrorListParams(args))
	listed := listedEntry(p.ConversationID)
	errs, err := all(rows, err, func(r dbsqlc.EntryErrorListRow) *store.Entry { return listed(dbsqlc.EntryListRow(r)) })
	if err != nil || len(errs) == 0 {
		return list, err
	}
	return store.MergeErrors(list, errs, p.Limit), nil
}

func (q *queries) EntryListInChannel(ctx context.Context, p *store.EntryListInChannelParams) ([]*store.Entry, error) {
	rows, err := q.read().EntryListInChannel(ctx, dbsqlc.EntryListInChannelParams{
		Platform: p.Place.Platform, Workspace: p.Place.Workspace, Channel: p.Place.Channel, Limit: int64(max(p.Limit, 1)),
	})
	out, err := all(rows, err, entry)
	if err != nil {
		return nil, wrap(err, "listing the messages of channel %s", p.Place.Channel)
	}
	return out, nil
}

// listedEntry converts the rows of EntryList and EntryErrorList, which
// leave out the conversation's id.
func listedEntry(conv uuid.UUID) func(dbsqlc.EntryListRow) *store.Entry {
	return func(r dbsqlc.EntryListRow) *store.Entry {
		return &store.Entry{
			ID: r.ID, ConversationID: conv, Seq: nullInt(r.Seq), AfterSeq: r.AfterSeq,
			Kind: store.EntryKind(r.Kind), Author: store.Author(r.Author), Content: json.RawMessage(r.Content),
			TurnID: nullUUID(r.TurnID), CreatedAt: fromMicros(r.CreatedAt),
		}
	}
}

func entryListArgs(p *store.EntryListParams) dbsqlc.EntryListParams {
	return dbsqlc.EntryListParams{ConversationID: p.ConversationID, AfterSeq: p.AfterSeq, UpTo: p.UpToSeq, Limit: limitArg(p.Limit)}
}

func (q *queries) EntryGet(ctx context.Context, id uuid.UUID) (*store.Entry, error) {
	r, err := q.read().EntryGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "getting entry %s", id)
	}
	return entry(r), nil
}
