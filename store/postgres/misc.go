package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (q *queries) InboundRecord(ctx context.Context, p *store.InboundRecordParams) (bool, error) {
	if p.Platform == "" || p.EventID == "" {
		return false, fmt.Errorf("recording inbound event: %w: empty Platform or EventID", store.ErrInvalid)
	}
	tag, err := q.exec(ctx, sqlq.Get("InboundRecord"), p.Platform, p.EventID, q.now(p.Now))
	if err != nil {
		return false, wrap(err, "recording inbound event %s/%s", p.Platform, p.EventID)
	}
	return tag.RowsAffected() == 1, nil
}

// ---- agents ----

func (q *queries) AgentUpsert(ctx context.Context, p *store.AgentUpsertParams) (*store.Agent, error) {
	if p.Name == "" {
		return nil, fmt.Errorf("upserting agent: %w: empty Name", store.ErrInvalid)
	}
	cfg, err := jsonArg("Config", p.Config, "{}")
	if err != nil {
		return nil, fmt.Errorf("upserting agent %s: %w", p.Name, err)
	}
	row, err := one[agentRow](ctx, q, sqlq.Get("AgentUpsert"), newID(), p.Name, cfg, q.now(p.Now))
	if err != nil {
		return nil, wrap(err, "upserting agent %s", p.Name)
	}
	return row.domain(), nil
}

func (q *queries) AgentGetByName(ctx context.Context, name string) (*store.Agent, error) {
	row, err := one[agentRow](ctx, q, sqlq.Get("AgentGetByName"), name)
	if err != nil {
		return nil, wrap(err, "getting agent %s", name)
	}
	return row.domain(), nil
}

func (q *queries) AgentList(ctx context.Context) ([]*store.Agent, error) {
	rows, err := all[agentRow](ctx, q, sqlq.Get("AgentList"))
	if err != nil {
		return nil, wrap(err, "listing agents")
	}
	out := make([]*store.Agent, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// ---- bindings and posted messages ----

func (q *queries) BindingEnsure(ctx context.Context, p *store.BindingEnsureParams) (*store.BindingEnsureResult, error) {
	if p.Platform == "" {
		return nil, fmt.Errorf("ensuring binding: %w: empty Platform", store.ErrInvalid)
	}
	place := fmt.Sprintf("%s/%s/%s/%s", p.Platform, p.Workspace, p.Channel, p.Thread)
	// Most calls find an existing binding; read before trying to write.
	b, err := q.BindingFind(ctx, p.Platform, p.Workspace, p.Channel, p.Thread)
	if err == nil {
		return &store.BindingEnsureResult{Binding: b}, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("ensuring binding %s: %w", place, err)
	}

	c := &p.Conversation
	meta, err := jsonArg("Conversation.Metadata", c.Metadata, "{}")
	if err != nil {
		return nil, fmt.Errorf("ensuring binding %s: %w", place, err)
	}
	convID := c.ID
	if convID == uuid.Nil {
		convID = newID()
	}
	now := q.now(p.Now)
	convNow := now
	if !c.Now.IsZero() {
		convNow = ts(c.Now)
	}
	row, err := one[bindingRow](ctx, q, sqlq.Get("BindingEnsure"),
		newID(), p.Platform, p.Workspace, p.Channel, p.Thread,
		convID, c.AgentID, c.Title, c.Provider, c.Model, c.Thinking, meta, convNow, now)
	if err == nil {
		return &store.BindingEnsureResult{Binding: row.domain(), Created: true}, nil
	}
	if !errors.Is(err, pgxNoRows) {
		return nil, wrap(err, "ensuring binding %s", place)
	}
	// Another caller created it between our read and our insert.
	b, err = q.BindingFind(ctx, p.Platform, p.Workspace, p.Channel, p.Thread)
	if err != nil {
		return nil, fmt.Errorf("ensuring binding %s: %w", place, err)
	}
	return &store.BindingEnsureResult{Binding: b}, nil
}

func (q *queries) BindingFind(ctx context.Context, platform, workspace, channel, thread string) (*store.Binding, error) {
	row, err := one[bindingRow](ctx, q, sqlq.Get("BindingFind"), platform, workspace, channel, thread)
	if err != nil {
		return nil, wrap(err, "finding binding %s/%s/%s/%s", platform, workspace, channel, thread)
	}
	return row.domain(), nil
}

func (q *queries) BindingListByConversation(ctx context.Context, conversationID uuid.UUID) ([]*store.Binding, error) {
	rows, err := all[bindingRow](ctx, q, sqlq.Get("BindingListByConversation"), conversationID)
	if err != nil {
		return nil, wrap(err, "listing bindings of conversation %s", conversationID)
	}
	out := make([]*store.Binding, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

func (q *queries) BindingAdvance(ctx context.Context, p *store.BindingAdvanceParams) (*store.Binding, error) {
	if p.DeliveredSeq < 0 {
		return nil, fmt.Errorf("advancing binding %s: %w: negative DeliveredSeq", p.ID, store.ErrInvalid)
	}
	row, err := one[bindingRow](ctx, q, sqlq.Get("BindingAdvance"), p.ID, p.DeliveredSeq, q.now(p.Now))
	if err != nil {
		return nil, wrap(err, "advancing binding %s", p.ID)
	}
	return row.domain(), nil
}

// PostedRecord fills p.CreatedAt when it is zero.
func (q *queries) PostedRecord(ctx context.Context, p *store.Posted) error {
	p.CreatedAt = q.now(p.CreatedAt)
	_, err := q.exec(ctx, sqlq.Get("PostedRecord"), p.BindingID, p.EntryID, nonNilStrings(p.MessageIDs), p.CreatedAt, p.Pending)
	if err != nil {
		return wrap(err, "recording posted messages of entry %s on binding %s", p.EntryID, p.BindingID)
	}
	return nil
}

func (q *queries) PostedGet(ctx context.Context, bindingID, entryID uuid.UUID) (*store.Posted, error) {
	row, err := one[postedRow](ctx, q, sqlq.Get("PostedGet"), bindingID, entryID)
	if err != nil {
		return nil, wrap(err, "getting posted messages of entry %s on binding %s", entryID, bindingID)
	}
	return &store.Posted{
		BindingID:  row.BindingID,
		EntryID:    row.EntryID,
		MessageIDs: row.MessageIDs,
		Pending:    row.Pending,
		CreatedAt:  row.CreatedAt.UTC(),
	}, nil
}

// LiveStreamSave fills l.UpdatedAt when it is zero.
func (q *queries) LiveStreamSave(ctx context.Context, l *store.LiveStream) error {
	l.UpdatedAt = q.now(l.UpdatedAt)
	if _, err := q.exec(ctx, sqlq.Get("LiveStreamSave"), l.BindingID, l.TurnID, nonNilStrings(l.MessageIDs), l.UpdatedAt); err != nil {
		return wrap(err, "recording live stream of binding %s", l.BindingID)
	}
	return nil
}

func (q *queries) LiveStreamGet(ctx context.Context, bindingID uuid.UUID) (*store.LiveStream, error) {
	row, err := one[liveStreamRow](ctx, q, sqlq.Get("LiveStreamGet"), bindingID)
	if err != nil {
		return nil, wrap(err, "getting live stream of binding %s", bindingID)
	}
	return &store.LiveStream{BindingID: row.BindingID, TurnID: row.TurnID, MessageIDs: row.MessageIDs, UpdatedAt: row.UpdatedAt.UTC()}, nil
}

func (q *queries) LiveStreamDelete(ctx context.Context, bindingID uuid.UUID) error {
	if _, err := q.exec(ctx, sqlq.Get("LiveStreamDelete"), bindingID); err != nil {
		return wrap(err, "forgetting live stream of binding %s", bindingID)
	}
	return nil
}

// ---- approvals ----

func (q *queries) ApprovalCreate(ctx context.Context, p *store.ApprovalCreateParams) (*store.Approval, error) {
	switch p.Kind {
	case store.ApprovalConfirm, store.ApprovalQuestion:
	default:
		return nil, fmt.Errorf("creating approval for call %s: %w: unknown kind %q", p.CallID, store.ErrInvalid, p.Kind)
	}
	if p.CallID == "" {
		return nil, fmt.Errorf("creating approval: %w: empty CallID", store.ErrInvalid)
	}
	if p.ExpiresAt.IsZero() {
		return nil, fmt.Errorf("creating approval for call %s: %w: zero ExpiresAt", p.CallID, store.ErrInvalid)
	}
	req, err := jsonArg("Request", p.Request, "{}")
	if err != nil {
		return nil, fmt.Errorf("creating approval for call %s: %w", p.CallID, err)
	}
	row, err := one[approvalRow](ctx, q, sqlq.Get("ApprovalCreate"),
		newID(), p.ConversationID, p.CallID, p.Tool, string(p.Kind), p.Risk, req,
		nonNilStrings(p.Deciders), ts(p.ExpiresAt), q.now(p.Now))
	if err != nil {
		return nil, wrap(err, "creating approval for call %s in %s", p.CallID, p.ConversationID)
	}
	return row.domain(), nil
}

func (q *queries) ApprovalGet(ctx context.Context, id uuid.UUID) (*store.Approval, error) {
	row, err := one[approvalRow](ctx, q, sqlq.Get("ApprovalGet"), id)
	if err != nil {
		return nil, wrap(err, "getting approval %s", id)
	}
	return row.domain(), nil
}

func (q *queries) ApprovalFindByCall(ctx context.Context, conversationID uuid.UUID, callID string) (*store.Approval, error) {
	row, err := one[approvalRow](ctx, q, sqlq.Get("ApprovalFindByCall"), conversationID, callID)
	if err != nil {
		return nil, wrap(err, "finding approval for call %s in %s", callID, conversationID)
	}
	return row.domain(), nil
}

func (q *queries) ApprovalListPending(ctx context.Context, conversationID uuid.UUID) ([]*store.Approval, error) {
	rows, err := all[approvalRow](ctx, q, sqlq.Get("ApprovalListPending"), conversationID)
	if err != nil {
		return nil, wrap(err, "listing pending approvals of %s", conversationID)
	}
	out := make([]*store.Approval, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

func (q *queries) ApprovalDecide(ctx context.Context, p *store.ApprovalDecideParams) (*store.Approval, error) {
	switch p.Status {
	case store.ApprovalApproved, store.ApprovalDenied:
	default:
		return nil, fmt.Errorf("deciding approval %s: %w: status must be approved or denied, got %q",
			p.ID, store.ErrInvalid, p.Status)
	}
	var decision any // NULL when no decision value is given
	if len(p.Decision) > 0 {
		d, err := jsonArg("Decision", p.Decision, "")
		if err != nil {
			return nil, fmt.Errorf("deciding approval %s: %w", p.ID, err)
		}
		decision = d
	}
	row, err := one[approvalRow](ctx, q, sqlq.Get("ApprovalDecide"),
		p.ID, string(p.Status), decision, p.DecidedBy, q.now(p.Now))
	if errors.Is(err, pgxNoRows) {
		cur, gerr := q.ApprovalGet(ctx, p.ID)
		if gerr != nil {
			return nil, fmt.Errorf("deciding approval %s: %w", p.ID, gerr)
		}
		why := "already " + string(cur.Status)
		if cur.Status == store.ApprovalPending {
			why = "expired"
		}
		return nil, fmt.Errorf("deciding approval %s: %w: %s", p.ID, store.ErrConflict, why)
	}
	if err != nil {
		return nil, wrap(err, "deciding approval %s", p.ID)
	}
	return row.domain(), nil
}

func (q *queries) ApprovalExpire(ctx context.Context, now time.Time, limit int) ([]*store.Approval, error) {
	rows, err := all[approvalRow](ctx, q, sqlq.Get("ApprovalExpire"), q.now(now), limitArg(limit))
	if err != nil {
		return nil, wrap(err, "expiring approvals")
	}
	out := make([]*store.Approval, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// ---- audit ----

// AuditRecord fills r.ID and r.CreatedAt when they are zero.
func (q *queries) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	detail, err := jsonArg("Detail", r.Detail, "{}")
	if err != nil {
		return fmt.Errorf("recording audit of %s: %w", r.Action, err)
	}
	if r.ID == uuid.Nil {
		r.ID = newID()
	}
	r.CreatedAt = q.now(r.CreatedAt)
	_, err = q.exec(ctx, sqlq.Get("AuditRecord"),
		r.ID, r.ConversationID, r.Actor, r.Action, r.Risk, r.Decision, r.Result, detail, r.CreatedAt)
	if err != nil {
		return wrap(err, "recording audit of %s", r.Action)
	}
	return nil
}

func (q *queries) AuditList(ctx context.Context, conversationID uuid.UUID) ([]*store.AuditRecord, error) {
	rows, err := all[auditRow](ctx, q, sqlq.Get("AuditList"), conversationID)
	if err != nil {
		return nil, wrap(err, "listing audit of conversation %s", conversationID)
	}
	out := make([]*store.AuditRecord, len(rows))
	for i, r := range rows {
		out[i] = &store.AuditRecord{
			ID:             r.ID,
			ConversationID: r.ConversationID,
			Actor:          r.Actor,
			Action:         r.Action,
			Risk:           r.Risk,
			Decision:       r.Decision,
			Result:         r.Result,
			Detail:         jsonOut(r.Detail),
			CreatedAt:      r.CreatedAt.UTC(),
		}
	}
	return out, nil
}

// ---- named leases ----

func (q *queries) LeaseAcquire(ctx context.Context, p *store.NamedLeaseParams) (bool, error) {
	if p.Name == "" {
		return false, fmt.Errorf("acquiring lease: %w: empty Name", store.ErrInvalid)
	}
	if err := validLease(p.Owner, p.TTL); err != nil {
		return false, fmt.Errorf("acquiring lease %s: %w", p.Name, err)
	}
	now := q.now(p.Now)
	var name string
	err := q.scan(ctx, sqlq.Get("LeaseAcquire"), []any{p.Name, p.Owner, ts(now.Add(p.TTL)), now}, &name)
	if errors.Is(err, pgxNoRows) {
		return false, nil
	}
	if err != nil {
		return false, wrap(err, "acquiring lease %s", p.Name)
	}
	return true, nil
}

func (q *queries) LeaseRelease(ctx context.Context, p *store.NamedLeaseParams) error {
	if _, err := q.exec(ctx, sqlq.Get("LeaseRelease"), p.Name, p.Owner); err != nil {
		return wrap(err, "releasing lease %s", p.Name)
	}
	return nil
}

// ---- usage ----

// UsageRecord fills u.ID and u.CreatedAt when they are zero.
func (q *queries) UsageRecord(ctx context.Context, u *store.Usage) error {
	if u.ID == uuid.Nil {
		u.ID = newID()
	}
	u.CreatedAt = q.now(u.CreatedAt)
	_, err := q.exec(ctx, sqlq.Get("UsageRecord"),
		u.ID, u.ConversationID, u.TurnID, u.AgentID, u.Provider, u.Model, u.InputTokens,
		u.OutputTokens, u.CachedTokens, u.ReasoningTokens, u.CostMicroUSD, u.CreatedAt)
	if err != nil {
		return wrap(err, "recording usage in conversation %s", u.ConversationID)
	}
	return nil
}

func (q *queries) UsageList(ctx context.Context, conversationID uuid.UUID) ([]*store.Usage, error) {
	rows, err := all[usageRow](ctx, q, sqlq.Get("UsageList"), conversationID)
	if err != nil {
		return nil, wrap(err, "listing usage of conversation %s", conversationID)
	}
	out := make([]*store.Usage, len(rows))
	for i, r := range rows {
		out[i] = &store.Usage{
			ID:              r.ID,
			ConversationID:  r.ConversationID,
			TurnID:          r.TurnID,
			AgentID:         r.AgentID,
			Provider:        r.Provider,
			Model:           r.Model,
			InputTokens:     r.InputTokens,
			OutputTokens:    r.OutputTokens,
			CachedTokens:    r.CachedTokens,
			ReasoningTokens: r.ReasoningTokens,
			CostMicroUSD:    r.CostMicroUSD,
			CreatedAt:       r.CreatedAt.UTC(),
		}
	}
	return out, nil
}
