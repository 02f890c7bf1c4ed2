package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func scanApproval(r scanner) (*store.Approval, error) {
	var (
		a                       store.Approval
		kind, request, deciders string
		status                  string
		decision                sql.NullString
		expires, created        int64
		decided                 sql.NullInt64
	)
	if err := r.Scan(&a.ID, &a.ConversationID, &a.CallID, &a.Tool, &kind, &a.Risk,
		&request, &deciders, &status, &decision, &a.DecidedBy, &expires, &decided, &created); err != nil {
		return nil, err
	}
	a.Kind = store.ApprovalKind(kind)
	a.Request = json.RawMessage(request)
	if err := json.Unmarshal([]byte(deciders), &a.Deciders); err != nil {
		return nil, fmt.Errorf("decoding deciders: %w", err)
	}
	a.Status = store.ApprovalStatus(status)
	if decision.Valid {
		a.Decision = json.RawMessage(decision.String)
	}
	a.ExpiresAt = fromMicros(expires)
	a.DecidedAt = nullMicros(decided)
	a.CreatedAt = fromMicros(created)
	return &a, nil
}

func (q *queries) ApprovalCreate(ctx context.Context, p *store.ApprovalCreateParams) (*store.Approval, error) {
	switch {
	case p == nil:
		return nil, fmt.Errorf("creating approval: %w", invalid("params are nil"))
	case p.CallID == "":
		return nil, fmt.Errorf("creating approval in %s: %w", p.ConversationID, invalid("CallID is empty"))
	case p.Kind != store.ApprovalConfirm && p.Kind != store.ApprovalQuestion:
		return nil, fmt.Errorf("creating approval in %s: %w", p.ConversationID, invalid("Kind %q is not an approval kind", p.Kind))
	case p.ExpiresAt.IsZero():
		return nil, fmt.Errorf("creating approval in %s: %w", p.ConversationID, invalid("ExpiresAt is zero"))
	}
	request, err := jsonArg("Request", p.Request, "{}")
	if err != nil {
		return nil, fmt.Errorf("creating approval in %s: %w", p.ConversationID, err)
	}
	deciders := p.Deciders
	if deciders == nil {
		deciders = []string{}
	}
	decidersJSON, err := json.Marshal(deciders)
	if err != nil {
		return nil, fmt.Errorf("creating approval in %s: encoding deciders: %w", p.ConversationID, err)
	}
	var a *store.Approval
	err = q.atomic(ctx, func() error {
		var err error
		a, err = queryOne(ctx, q.db, "ApprovalInsert", scanApproval,
			sql.Named("id", newID().String()),
			sql.Named("conversation_id", p.ConversationID.String()),
			sql.Named("call_id", p.CallID),
			sql.Named("tool", p.Tool),
			sql.Named("kind", string(p.Kind)),
			sql.Named("risk", p.Risk),
			sql.Named("request", request),
			sql.Named("deciders", string(decidersJSON)),
			sql.Named("expires_at", micros(p.ExpiresAt)),
			sql.Named("now", micros(q.now(p.Now))))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating approval for call %s in %s: %w", p.CallID, p.ConversationID, err)
	}
	return a, nil
}

func (q *queries) ApprovalGet(ctx context.Context, id uuid.UUID) (*store.Approval, error) {
	a, err := queryOne(ctx, q.db, "ApprovalGet", scanApproval, sql.Named("id", id.String()))
	if err != nil {
		return nil, fmt.Errorf("getting approval %s: %w", id, err)
	}
	return a, nil
}

func (q *queries) ApprovalFindByCall(ctx context.Context, conversationID uuid.UUID, callID string) (*store.Approval, error) {
	a, err := queryOne(ctx, q.db, "ApprovalFindByCall", scanApproval,
		sql.Named("conversation_id", conversationID.String()),
		sql.Named("call_id", callID))
	if err != nil {
		return nil, fmt.Errorf("finding approval for call %s in %s: %w", callID, conversationID, err)
	}
	return a, nil
}

func (q *queries) ApprovalListPending(ctx context.Context, conversationID uuid.UUID) ([]*store.Approval, error) {
	out, err := queryList(ctx, q.db, "ApprovalListPending", scanApproval, sql.Named("conversation_id", conversationID.String()))
	if err != nil {
		return nil, fmt.Errorf("listing pending approvals of %s: %w", conversationID, err)
	}
	return out, nil
}

func (q *queries) ApprovalDecide(ctx context.Context, p *store.ApprovalDecideParams) (*store.Approval, error) {
	if p == nil {
		return nil, fmt.Errorf("deciding approval: %w", invalid("params are nil"))
	}
	if p.Status != store.ApprovalApproved && p.Status != store.ApprovalDenied {
		return nil, fmt.Errorf("deciding approval %s: %w", p.ID, invalid("Status %q must be approved or denied", p.Status))
	}
	var decision any
	if len(p.Decision) > 0 {
		d, err := jsonArg("Decision", p.Decision, "")
		if err != nil {
			return nil, fmt.Errorf("deciding approval %s: %w", p.ID, err)
		}
		decision = d
	}
	now := q.now(p.Now)
	var a *store.Approval
	err := q.atomic(ctx, func() error {
		var err error
		a, err = queryOne(ctx, q.db, "ApprovalDecide", scanApproval,
			sql.Named("id", p.ID.String()),
			sql.Named("status", string(p.Status)),
			sql.Named("decision", decision),
			sql.Named("decided_by", p.DecidedBy),
			sql.Named("now", micros(now)))
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		cur, err := queryOne(ctx, q.db, "ApprovalGet", scanApproval, sql.Named("id", p.ID.String()))
		if err != nil {
			return err
		}
		if cur.Status != store.ApprovalPending {
			return fmt.Errorf("%w: approval is already %s", store.ErrConflict, cur.Status)
		}
		return fmt.Errorf("%w: approval expired at %s", store.ErrConflict, cur.ExpiresAt.Format(time.RFC3339Nano))
	})
	if err != nil {
		return nil, fmt.Errorf("deciding approval %s: %w", p.ID, err)
	}
	return a, nil
}

func (q *queries) ApprovalExpire(ctx context.Context, now time.Time, limit int) ([]*store.Approval, error) {
	var out []*store.Approval
	err := q.atomic(ctx, func() error {
		var err error
		out, err = queryList(ctx, q.db, "ApprovalExpire", scanApproval,
			sql.Named("now", micros(q.now(now))),
			sql.Named("limit", limitArg(limit)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("expiring approvals: %w", err)
	}
	// RETURNING has no order; report the oldest expiry first.
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].ExpiresAt.Equal(out[j].ExpiresAt) {
			return out[i].ExpiresAt.Before(out[j].ExpiresAt)
		}
		return out[i].CreatedAt.Before(out[j].CreatedAt)
	})
	return out, nil
}

func (q *queries) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	if r == nil {
		return fmt.Errorf("recording audit: %w", invalid("record is nil"))
	}
	detail, err := jsonArg("Detail", r.Detail, "{}")
	if err != nil {
		return fmt.Errorf("recording audit of %s: %w", r.Action, err)
	}
	id := r.ID
	if id == uuid.Nil {
		id = newID()
	}
	err = q.atomic(ctx, func() error {
		_, err := exec(ctx, q.db, "AuditInsert",
			sql.Named("id", id.String()),
			sql.Named("conversation_id", uuidArg(r.ConversationID)),
			sql.Named("actor", r.Actor),
			sql.Named("action", r.Action),
			sql.Named("risk", r.Risk),
			sql.Named("decision", r.Decision),
			sql.Named("result", r.Result),
			sql.Named("detail", detail),
			sql.Named("created_at", micros(q.now(r.CreatedAt))))
		return err
	})
	if err != nil {
		return fmt.Errorf("recording audit of %s by %s: %w", r.Action, r.Actor, err)
	}
	return nil
}

func (q *queries) AuditList(ctx context.Context, conversationID uuid.UUID) ([]*store.AuditRecord, error) {
	out, err := queryList(ctx, q.db, "AuditList", func(s scanner) (*store.AuditRecord, error) {
		var (
			r       store.AuditRecord
			conv    uuid.NullUUID
			detail  string
			created int64
		)
		if err := s.Scan(&r.ID, &conv, &r.Actor, &r.Action, &r.Risk, &r.Decision, &r.Result, &detail, &created); err != nil {
			return nil, err
		}
		r.ConversationID = nullUUID(conv)
		r.Detail = json.RawMessage(detail)
		r.CreatedAt = fromMicros(created)
		return &r, nil
	}, sql.Named("conversation_id", conversationID.String()))
	if err != nil {
		return nil, fmt.Errorf("listing audit of conversation %s: %w", conversationID, err)
	}
	return out, nil
}

func (q *queries) UsageRecord(ctx context.Context, u *store.Usage) error {
	if u == nil {
		return fmt.Errorf("recording usage: %w", invalid("usage is nil"))
	}
	id := u.ID
	if id == uuid.Nil {
		id = newID()
	}
	err := q.atomic(ctx, func() error {
		_, err := exec(ctx, q.db, "UsageInsert",
			sql.Named("id", id.String()),
			sql.Named("conversation_id", u.ConversationID.String()),
			sql.Named("turn_id", uuidArg(u.TurnID)),
			sql.Named("agent_id", uuidArg(u.AgentID)),
			sql.Named("provider", u.Provider),
			sql.Named("model", u.Model),
			sql.Named("input_tokens", u.InputTokens),
			sql.Named("output_tokens", u.OutputTokens),
			sql.Named("cached_tokens", u.CachedTokens),
			sql.Named("reasoning_tokens", u.ReasoningTokens),
			sql.Named("cost_micro_usd", u.CostMicroUSD),
			sql.Named("created_at", micros(q.now(u.CreatedAt))))
		return err
	})
	if err != nil {
		return fmt.Errorf("recording usage in %s: %w", u.ConversationID, err)
	}
	return nil
}

func (q *queries) UsageList(ctx context.Context, conversationID uuid.UUID) ([]*store.Usage, error) {
	out, err := queryList(ctx, q.db, "UsageList", func(s scanner) (*store.Usage, error) {
		var (
			u           store.Usage
			turn, agent uuid.NullUUID
			created     int64
		)
		if err := s.Scan(&u.ID, &u.ConversationID, &turn, &agent, &u.Provider, &u.Model,
			&u.InputTokens, &u.OutputTokens, &u.CachedTokens, &u.ReasoningTokens, &u.CostMicroUSD, &created); err != nil {
			return nil, err
		}
		u.TurnID, u.AgentID = nullUUID(turn), nullUUID(agent)
		u.CreatedAt = fromMicros(created)
		return &u, nil
	}, sql.Named("conversation_id", conversationID.String()))
	if err != nil {
		return nil, fmt.Errorf("listing usage of conversation %s: %w", conversationID, err)
	}
	return out, nil
}

func validateNamedLease(p *store.NamedLeaseParams, needTTL bool) error {
	switch {
	case p == nil:
		return invalid("params are nil")
	case p.Name == "" || p.Owner == "":
		return invalid("Name %q and Owner %q must both be set", p.Name, p.Owner)
	case needTTL && p.TTL <= 0:
		return invalid("TTL %s must be positive", p.TTL)
	}
	return nil
}

func (q *queries) LeaseAcquire(ctx context.Context, p *store.NamedLeaseParams) (bool, error) {
	if err := validateNamedLease(p, true); err != nil {
		return false, fmt.Errorf("acquiring lease: %w", err)
	}
	now := q.now(p.Now)
	var n int64
	err := q.atomic(ctx, func() error {
		var err error
		n, err = exec(ctx, q.db, "LeaseAcquire",
			sql.Named("name", p.Name),
			sql.Named("owner", p.Owner),
			sql.Named("expires_at", micros(now.Add(p.TTL))),
			sql.Named("now", micros(now)))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("acquiring lease %q for %s: %w", p.Name, p.Owner, err)
	}
	return n > 0, nil
}

func (q *queries) LeaseRelease(ctx context.Context, p *store.NamedLeaseParams) error {
	if err := validateNamedLease(p, false); err != nil {
		return fmt.Errorf("releasing lease: %w", err)
	}
	err := q.atomic(ctx, func() error {
		_, err := exec(ctx, q.db, "LeaseRelease", sql.Named("name", p.Name), sql.Named("owner", p.Owner))
		return err
	})
	if err != nil {
		return fmt.Errorf("releasing lease %q for %s: %w", p.Name, p.Owner, err)
	}
	return nil
}
