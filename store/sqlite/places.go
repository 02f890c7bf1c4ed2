package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (q *queries) InboundRecord(ctx context.Context, p *store.InboundRecordParams) (bool, error) {
	switch {
	case p == nil:
		return false, fmt.Errorf("recording inbound event: %w", invalid("params are nil"))
	case p.Platform == "" || p.EventID == "":
		return false, fmt.Errorf("recording inbound event: %w", invalid("Platform %q and EventID %q must both be set", p.Platform, p.EventID))
	}
	var n int64
	err := q.atomic(ctx, func() error {
		var err error
		n, err = exec(ctx, q.db, "InboundRecord",
			sql.Named("platform", p.Platform),
			sql.Named("event_id", p.EventID),
			sql.Named("now", micros(q.now(p.Now))))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("recording inbound event %s/%s: %w", p.Platform, p.EventID, err)
	}
	return n == 1, nil
}

func scanAgent(r scanner) (*store.Agent, error) {
	var (
		a                store.Agent
		config           string
		created, updated int64
	)
	if err := r.Scan(&a.ID, &a.Name, &config, &created, &updated); err != nil {
		return nil, err
	}
	a.Config = json.RawMessage(config)
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &a, nil
}

func (q *queries) AgentUpsert(ctx context.Context, p *store.AgentUpsertParams) (*store.Agent, error) {
	if p == nil || p.Name == "" {
		return nil, fmt.Errorf("upserting agent: %w", invalid("Name is empty"))
	}
	config, err := jsonArg("Config", p.Config, "{}")
	if err != nil {
		return nil, fmt.Errorf("upserting agent %q: %w", p.Name, err)
	}
	var a *store.Agent
	err = q.atomic(ctx, func() error {
		var err error
		a, err = queryOne(ctx, q.db, "AgentUpsert", scanAgent,
			sql.Named("id", newID().String()),
			sql.Named("name", p.Name),
			sql.Named("config", config),
			sql.Named("now", micros(q.now(p.Now))))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("upserting agent %q: %w", p.Name, err)
	}
	return a, nil
}

func (q *queries) AgentGetByName(ctx context.Context, name string) (*store.Agent, error) {
	a, err := queryOne(ctx, q.db, "AgentGetByName", scanAgent, sql.Named("name", name))
	if err != nil {
		return nil, fmt.Errorf("getting agent %q: %w", name, err)
	}
	return a, nil
}

func (q *queries) AgentList(ctx context.Context) ([]*store.Agent, error) {
	out, err := queryList(ctx, q.db, "AgentList", scanAgent)
	if err != nil {
		return nil, fmt.Errorf("listing agents: %w", err)
	}
	return out, nil
}

func scanBinding(r scanner) (*store.Binding, error) {
	var (
		b                store.Binding
		created, updated int64
	)
	if err := r.Scan(&b.ID, &b.ConversationID, &b.Platform, &b.Workspace, &b.Channel,
		&b.Thread, &b.DeliveredSeq, &created, &updated); err != nil {
		return nil, err
	}
	b.CreatedAt, b.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &b, nil
}

func placeArgs(platform, workspace, channel, thread string) []any {
	return []any{
		sql.Named("platform", platform),
		sql.Named("workspace", workspace),
		sql.Named("channel", channel),
		sql.Named("thread", thread),
	}
}

func (q *queries) BindingEnsure(ctx context.Context, p *store.BindingEnsureParams) (*store.BindingEnsureResult, error) {
	switch {
	case p == nil:
		return nil, fmt.Errorf("ensuring binding: %w", invalid("params are nil"))
	case p.Platform == "" || p.Channel == "":
		return nil, fmt.Errorf("ensuring binding: %w", invalid("Platform %q and Channel %q must both be set", p.Platform, p.Channel))
	}
	now := q.now(p.Now)
	var res *store.BindingEnsureResult
	err := q.atomic(ctx, func() error {
		// The single writer serialises racing callers: the second one finds
		// the first one's row here.
		b, err := queryOne(ctx, q.db, "BindingFind", scanBinding, placeArgs(p.Platform, p.Workspace, p.Channel, p.Thread)...)
		if err == nil {
			res = &store.BindingEnsureResult{Binding: b}
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		cp := p.Conversation
		if cp.Now.IsZero() {
			cp.Now = now
		}
		conv, err := q.conversationInsert(ctx, &cp, nil, 0)
		if err != nil {
			return fmt.Errorf("creating its conversation: %w", err)
		}
		args := append(placeArgs(p.Platform, p.Workspace, p.Channel, p.Thread),
			sql.Named("id", newID().String()),
			sql.Named("conversation_id", conv.ID.String()),
			sql.Named("now", micros(now)))
		b, err = queryOne(ctx, q.db, "BindingInsert", scanBinding, args...)
		if err != nil {
			return err
		}
		res = &store.BindingEnsureResult{Binding: b, Created: true}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ensuring binding %s/%s/%s/%s: %w", p.Platform, p.Workspace, p.Channel, p.Thread, err)
	}
	return res, nil
}

func (q *queries) BindingFind(ctx context.Context, platform, workspace, channel, thread string) (*store.Binding, error) {
	b, err := queryOne(ctx, q.db, "BindingFind", scanBinding, placeArgs(platform, workspace, channel, thread)...)
	if err != nil {
		return nil, fmt.Errorf("finding binding %s/%s/%s/%s: %w", platform, workspace, channel, thread, err)
	}
	return b, nil
}

func (q *queries) BindingListByConversation(ctx context.Context, conversationID uuid.UUID) ([]*store.Binding, error) {
	out, err := queryList(ctx, q.db, "BindingListByConversation", scanBinding, sql.Named("conversation_id", conversationID.String()))
	if err != nil {
		return nil, fmt.Errorf("listing bindings of conversation %s: %w", conversationID, err)
	}
	return out, nil
}

func (q *queries) BindingAdvance(ctx context.Context, p *store.BindingAdvanceParams) (*store.Binding, error) {
	if p == nil {
		return nil, fmt.Errorf("advancing binding: %w", invalid("params are nil"))
	}
	var b *store.Binding
	err := q.atomic(ctx, func() error {
		var err error
		b, err = queryOne(ctx, q.db, "BindingAdvance", scanBinding,
			sql.Named("id", p.ID.String()),
			sql.Named("delivered_seq", p.DeliveredSeq),
			sql.Named("now", micros(q.now(p.Now))))
		if errors.Is(err, store.ErrNotFound) {
			// Not moved: the cursor is already there or past it (a no-op), or
			// there is no such binding.
			b, err = queryOne(ctx, q.db, "BindingGet", scanBinding, sql.Named("id", p.ID.String()))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("advancing binding %s to seq %d: %w", p.ID, p.DeliveredSeq, err)
	}
	return b, nil
}

func (q *queries) PostedRecord(ctx context.Context, p *store.Posted) error {
	if p == nil {
		return fmt.Errorf("recording posted messages: %w", invalid("params are nil"))
	}
	ids := p.MessageIDs
	if ids == nil {
		ids = []string{}
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("recording posted messages of entry %s: encoding message ids: %w", p.EntryID, err)
	}
	err = q.atomic(ctx, func() error {
		_, err := exec(ctx, q.db, "PostedUpsert",
			sql.Named("binding_id", p.BindingID.String()),
			sql.Named("entry_id", p.EntryID.String()),
			sql.Named("message_ids", string(idsJSON)),
			sql.Named("now", micros(q.now(p.CreatedAt))),
			sql.Named("pending", p.Pending))
		return err
	})
	if err != nil {
		return fmt.Errorf("recording posted messages of entry %s on binding %s: %w", p.EntryID, p.BindingID, err)
	}
	return nil
}

func (q *queries) PostedGet(ctx context.Context, bindingID, entryID uuid.UUID) (*store.Posted, error) {
	p, err := queryOne(ctx, q.db, "PostedGet", func(r scanner) (*store.Posted, error) {
		var (
			p       store.Posted
			ids     string
			created int64
		)
		if err := r.Scan(&p.BindingID, &p.EntryID, &ids, &p.Pending, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(ids), &p.MessageIDs); err != nil {
			return nil, fmt.Errorf("decoding message ids: %w", err)
		}
		p.CreatedAt = fromMicros(created)
		return &p, nil
	}, sql.Named("binding_id", bindingID.String()), sql.Named("entry_id", entryID.String()))
	if err != nil {
		return nil, fmt.Errorf("getting posted messages of entry %s on binding %s: %w", entryID, bindingID, err)
	}
	return p, nil
}

func (q *queries) LiveStreamSave(ctx context.Context, l *store.LiveStream) error {
	if l == nil {
		return fmt.Errorf("recording live stream: %w", invalid("params are nil"))
	}
	ids := l.MessageIDs
	if ids == nil {
		ids = []string{}
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("recording live stream of binding %s: encoding message ids: %w", l.BindingID, err)
	}
	var turn any
	if l.TurnID != nil {
		turn = l.TurnID.String()
	}
	l.UpdatedAt = q.now(l.UpdatedAt)
	_, err = exec(ctx, q.db, "LiveStreamSave",
		sql.Named("binding_id", l.BindingID.String()),
		sql.Named("turn_id", turn),
		sql.Named("message_ids", string(idsJSON)),
		sql.Named("now", micros(l.UpdatedAt)))
	if err != nil {
		return fmt.Errorf("recording live stream of binding %s: %w", l.BindingID, err)
	}
	return nil
}

func (q *queries) LiveStreamGet(ctx context.Context, bindingID uuid.UUID) (*store.LiveStream, error) {
	l, err := queryOne(ctx, q.db, "LiveStreamGet", func(r scanner) (*store.LiveStream, error) {
		var (
			l       store.LiveStream
			turn    sql.NullString
			ids     string
			updated int64
		)
		if err := r.Scan(&l.BindingID, &turn, &ids, &updated); err != nil {
			return nil, err
		}
		if turn.Valid {
			id, err := uuid.Parse(turn.String)
			if err != nil {
				return nil, fmt.Errorf("decoding turn id: %w", err)
			}
			l.TurnID = &id
		}
		if err := json.Unmarshal([]byte(ids), &l.MessageIDs); err != nil {
			return nil, fmt.Errorf("decoding message ids: %w", err)
		}
		l.UpdatedAt = fromMicros(updated)
		return &l, nil
	}, sql.Named("binding_id", bindingID.String()))
	if err != nil {
		return nil, fmt.Errorf("getting live stream of binding %s: %w", bindingID, err)
	}
	return l, nil
}

func (q *queries) LiveStreamDelete(ctx context.Context, bindingID uuid.UUID) error {
	if _, err := exec(ctx, q.db, "LiveStreamDelete", sql.Named("binding_id", bindingID.String())); err != nil {
		return fmt.Errorf("forgetting live stream of binding %s: %w", bindingID, err)
	}
	return nil
}
