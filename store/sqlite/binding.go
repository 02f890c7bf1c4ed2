package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func bindingFindArgs(place store.Place) dbsqlc.BindingFindParams {
	channel, thread := place.Columns()
	return dbsqlc.BindingFindParams{Platform: place.Platform, Workspace: place.Workspace, Channel: channel, Thread: thread}
}

func (q *queries) BindingEnsure(ctx context.Context, p *store.BindingEnsureParams) (*store.BindingEnsureResult, error) {
	res, err := write(ctx, q, func(t *queries) (*store.BindingEnsureResult, error) {
		// The single writer serialises racing callers: the second one finds
		// the first one's row here.
		where := bindingFindArgs(p.Place)
		r, err := t.tx.BindingFind(ctx, where)
		if err == nil {
			return &store.BindingEnsureResult{Binding: binding(r)}, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		conv, err := t.conversationInsert(ctx, &p.Conversation, nil, 0, false)
		if err != nil {
			return nil, fmt.Errorf("creating its conversation: %w", err)
		}
		r, err = t.tx.BindingInsert(ctx, dbsqlc.BindingInsertParams{
			ID: newID(), ConversationID: conv.ID, Platform: where.Platform, Workspace: where.Workspace,
			Channel: where.Channel, Thread: where.Thread, Now: micros(p.Now),
		})
		if err != nil {
			return nil, err
		}
		return &store.BindingEnsureResult{Binding: binding(r), Created: true}, nil
	})
	if err != nil {
		return nil, wrap(err, "ensuring binding %s", p.Place)
	}
	return res, nil
}

func (q *queries) BindingFind(ctx context.Context, p *store.BindingFindParams) (*store.Binding, error) {
	r, err := q.read().BindingFind(ctx, bindingFindArgs(p.Place))
	if err != nil {
		return nil, wrap(err, "finding binding %s", p.Place)
	}
	return binding(r), nil
}

func (q *queries) BindingListByConversation(ctx context.Context, conversationID uuid.UUID) ([]*store.Binding, error) {
	rows, err := q.read().BindingListByConversation(ctx, conversationID)
	out, err := all(rows, err, binding)
	if err != nil {
		return nil, wrap(err, "listing bindings of conversation %s", conversationID)
	}
	return out, nil
}

func (q *queries) BindingAdvance(ctx context.Context, p *store.BindingAdvanceParams) (*store.Binding, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Binding, error) {
		r, err := t.tx.BindingAdvance(ctx, dbsqlc.BindingAdvanceParams{ID: p.ID, DeliveredSeq: p.DeliveredSeq, Now: micros(p.Now)})
		if errors.Is(err, sql.ErrNoRows) {
			// Not moved: the cursor is already there or past it (a no-op), or
			// there is no such binding.
			return t.tx.BindingGet(ctx, p.ID)
		}
		return r, err
	})
	if err != nil {
		return nil, wrap(err, "advancing binding %s to seq %d", p.ID, p.DeliveredSeq)
	}
	return binding(r), nil
}

func (q *queries) PostedRecord(ctx context.Context, p *store.Posted) error {
	pending := int64(0)
	if p.Pending {
		pending = 1
	}
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.PostedUpsert(ctx, dbsqlc.PostedUpsertParams{
			BindingID: p.BindingID, EntryID: p.EntryID, MessageIds: idsArg(p.MessageIDs),
			CreatedAt: micros(p.CreatedAt), Pending: pending, Undeliverable: p.Undeliverable,
		})
	})
	if err != nil {
		return wrap(err, "recording posted messages of entry %s on binding %s", p.EntryID, p.BindingID)
	}
	return nil
}

func (q *queries) PostedGet(ctx context.Context, p *store.PostedGetParams) (*store.Posted, error) {
	r, err := q.read().PostedGet(ctx, dbsqlc.PostedGetParams{BindingID: p.BindingID, EntryID: p.EntryID})
	var ids []string
	if err == nil {
		ids, err = decodeIDs(r.MessageIds, "message ids")
	}
	if err != nil {
		return nil, wrap(err, "getting posted messages of entry %s on binding %s", p.EntryID, p.BindingID)
	}
	return &store.Posted{BindingID: r.BindingID, EntryID: r.EntryID, MessageIDs: ids, Pending: r.Pending != 0, Undeliverable: r.Undeliverable, CreatedAt: fromMicros(r.CreatedAt)}, nil
}

func (q *queries) LiveStreamSave(ctx context.Context, l *store.LiveStream) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.LiveStreamSave(ctx, dbsqlc.LiveStreamSaveParams{
			BindingID: l.BindingID, TurnID: uuidArg(l.TurnID), MessageIds: idsArg(l.MessageIDs), UpdatedAt: micros(l.UpdatedAt),
		})
	})
	if err != nil {
		return wrap(err, "recording live stream of binding %s", l.BindingID)
	}
	return nil
}

func (q *queries) LiveStreamGet(ctx context.Context, bindingID uuid.UUID) (*store.LiveStream, error) {
	r, err := q.read().LiveStreamGet(ctx, bindingID)
	var ids []string
	if err == nil {
		ids, err = decodeIDs(r.MessageIds, "message ids")
	}
	if err != nil {
		return nil, wrap(err, "getting live stream of binding %s", bindingID)
	}
	return &store.LiveStream{BindingID: r.BindingID, TurnID: nullUUID(r.TurnID), MessageIDs: ids, UpdatedAt: fromMicros(r.UpdatedAt)}, nil
}

func (q *queries) LiveStreamDelete(ctx context.Context, bindingID uuid.UUID) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) { return struct{}{}, t.tx.LiveStreamDelete(ctx, bindingID) })
	if err != nil {
		return wrap(err, "forgetting live stream of binding %s", bindingID)
	}
	return nil
}
