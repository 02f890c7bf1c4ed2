package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) BindingEnsure(ctx context.Context, p *store.BindingEnsureParams) (*store.BindingEnsureResult, error) {
	// Most calls find an existing binding; read before trying to write.
	b, err := q.BindingFind(ctx, &store.BindingFindParams{Place: p.Place})
	if !errors.Is(err, store.ErrNotFound) {
		return &store.BindingEnsureResult{Binding: b}, err
	}
	c := &p.Conversation
	channel, thread := p.Place.Columns()
	row, err := call(ctx, q, (*dbsqlc.Queries).BindingEnsure, &dbsqlc.BindingEnsureParams{
		ID: newID(), Platform: p.Place.Platform, Workspace: p.Place.Workspace, Channel: channel, Thread: thread,
		Now: ts(p.Now), ConversationID: c.ID, AgentID: c.AgentID, Title: c.Title, Provider: c.Provider,
		Model: c.Model, Thinking: c.Thinking, Metadata: c.Metadata, ConversationNow: ts(c.Now),
	})
	if err == nil {
		return &store.BindingEnsureResult{Binding: binding((*dbsqlc.Binding)(&row)), Created: true}, nil
	}
	if !errors.Is(err, errNoRow) {
		return nil, wrap(err, "ensuring binding %s", p.Place)
	}
	// Another caller created it between our read and our insert.
	b, err = q.BindingFind(ctx, &store.BindingFindParams{Place: p.Place})
	return &store.BindingEnsureResult{Binding: b}, err
}

func (q *queries) BindingFind(ctx context.Context, p *store.BindingFindParams) (*store.Binding, error) {
	channel, thread := p.Place.Columns()
	row, err := call(ctx, q, (*dbsqlc.Queries).BindingFind, &dbsqlc.BindingFindParams{
		Platform: p.Place.Platform, Workspace: p.Place.Workspace, Channel: channel, Thread: thread,
	})
	if err != nil {
		return nil, wrap(err, "finding binding %s", p.Place)
	}
	return binding(&row), nil
}

func (q *queries) BindingListByConversation(ctx context.Context, conversationID uuid.UUID) ([]*store.Binding, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).BindingListByConversation, conversationID)
	if err != nil {
		return nil, wrap(err, "listing bindings of conversation %s", conversationID)
	}
	return each(rows, binding), nil
}

func (q *queries) BindingAdvance(ctx context.Context, p *store.BindingAdvanceParams) (*store.Binding, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).BindingAdvance, &dbsqlc.BindingAdvanceParams{
		ID: p.ID, DeliveredSeq: p.DeliveredSeq, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "advancing binding %s", p.ID)
	}
	return binding(&row), nil
}

func (q *queries) PostedRecord(ctx context.Context, p *store.Posted) error {
	err := exec(ctx, q, (*dbsqlc.Queries).PostedRecord, &dbsqlc.PostedRecordParams{
		BindingID: p.BindingID, EntryID: p.EntryID, MessageIDs: p.MessageIDs, Now: ts(p.CreatedAt), Pending: p.Pending,
		Undeliverable: p.Undeliverable,
	})
	return wrap(err, "recording posted messages of entry %s on binding %s", p.EntryID, p.BindingID)
}

func (q *queries) PostedGet(ctx context.Context, p *store.PostedGetParams) (*store.Posted, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).PostedGet, (*dbsqlc.PostedGetParams)(p))
	if err != nil {
		return nil, wrap(err, "getting posted messages of entry %s on binding %s", p.EntryID, p.BindingID)
	}
	return &store.Posted{
		BindingID: row.BindingID, EntryID: row.EntryID, MessageIDs: row.MessageIDs,
		Pending: row.Pending, Undeliverable: row.Undeliverable, CreatedAt: row.CreatedAt,
	}, nil
}

func (q *queries) LiveStreamSave(ctx context.Context, l *store.LiveStream) error {
	err := exec(ctx, q, (*dbsqlc.Queries).LiveStreamSave, &dbsqlc.LiveStreamSaveParams{
		BindingID: l.BindingID, TurnID: l.TurnID, MessageIDs: l.MessageIDs, Now: ts(l.UpdatedAt),
	})
	return wrap(err, "recording live stream of binding %s", l.BindingID)
}

func (q *queries) LiveStreamGet(ctx context.Context, bindingID uuid.UUID) (*store.LiveStream, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).LiveStreamGet, bindingID)
	if err != nil {
		return nil, wrap(err, "getting live stream of binding %s", bindingID)
	}
	return (*store.LiveStream)(&row), nil
}

func (q *queries) LiveStreamDelete(ctx context.Context, bindingID uuid.UUID) error {
	err := exec(ctx, q, (*dbsqlc.Queries).LiveStreamDelete, bindingID)
	return wrap(err, "forgetting live stream of binding %s", bindingID)
}

func binding(r *dbsqlc.Binding) *store.Binding {
	return &store.Binding{
		ID:             r.ID,
		ConversationID: r.ConversationID,
		Place:          store.PlaceFromColumns(r.Platform, r.Workspace, r.Channel, r.Thread),
		DeliveredSeq:   r.DeliveredSeq,
		CreatedAt:      r.CreatedAt,
		UpdatedAt:      r.UpdatedAt,
	}
}
