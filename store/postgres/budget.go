package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Spending budgets. A reservation locks each budget's row for the period
// (BudgetSpendLock, in key order) before it sums what is reserved, so
// reservations against one budget from any number of instances queue.

func budgetState(r *dbsqlc.BudgetSpend) *store.BudgetState {
	return &store.BudgetState{
		Key: r.BudgetKey, Period: r.Period,
		SpentMicroUSD: r.SpentMicroUsd, SpentTokens: r.SpentTokens,
		ExtraMicroUSD: r.ExtraMicroUsd, ExtraTokens: r.ExtraTokens,
		WarnedAt: r.WarnedAt, UpdatedAt: r.UpdatedAt,
	}
}

func (q *queries) BudgetReserve(ctx context.Context, p *store.BudgetReserveParams) (*store.BudgetReserveResult, error) {
	var res *store.BudgetReserveResult
	now := ts(p.Now)
	err := q.atomic(ctx, func(t *queries) error {
		res = &store.BudgetReserveResult{OK: true}
		for i, l := range p.Lines {
			row, err := t.db.BudgetSpendLock(ctx, &dbsqlc.BudgetSpendLockParams{BudgetKey: l.Key, Period: l.Period, Now: now})
			if err != nil {
				return mapErr(err)
			}
			if err := t.db.BudgetReservationsExpire(ctx, &dbsqlc.BudgetReservationsExpireParams{BudgetKey: l.Key, Period: l.Period, Now: now}); err != nil {
				return mapErr(err)
			}
			held, err := t.db.BudgetReserved(ctx, &dbsqlc.BudgetReservedParams{BudgetKey: l.Key, Period: l.Period, Now: now})
			if err != nil {
				return mapErr(err)
			}
			st := budgetState(&row)
			st.ReservedMicroUSD, st.ReservedTokens = held.MicroUsd, held.Tokens
			usd, tok := l.Available(st)
			if (usd >= 0 && p.MicroUSD > usd) || (tok >= 0 && p.Tokens > tok) {
				// Nothing was inserted yet: the locks end with the
				// transaction, which writes nothing.
				res = &store.BudgetReserveResult{Refused: st, Line: &p.Lines[i]}
				return nil
			}
		}
		for _, l := range p.Lines {
			if err := t.db.BudgetReservationInsert(ctx, &dbsqlc.BudgetReservationInsertParams{
				ID: p.ID, BudgetKey: l.Key, Period: l.Period, MicroUsd: p.MicroUSD, Tokens: p.Tokens,
				Holder: p.Holder, ExpiresAt: ts(now.Add(p.TTL)), Now: now,
			}); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "reserving %d µ$ against %d budgets", p.MicroUSD, len(p.Lines))
	}
	return res, nil
}

func (q *queries) BudgetRenew(ctx context.Context, id uuid.UUID, until time.Time) (bool, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).BudgetReservationRenew, &dbsqlc.BudgetReservationRenewParams{ID: id, ExpiresAt: ts(until)})
	return n > 0, wrap(err, "renewing budget reservation %s", id)
}

func (q *queries) BudgetRelease(ctx context.Context, id uuid.UUID) error {
	return wrap(exec(ctx, q, (*dbsqlc.Queries).BudgetReservationDelete, id), "releasing budget reservation %s", id)
}

func (q *queries) BudgetCharge(ctx context.Context, p *store.BudgetChargeParams) ([]store.BudgetLine, error) {
	var warn []store.BudgetLine
	now := ts(p.Now)
	err := q.atomic(ctx, func(t *queries) error {
		warn = warn[:0]
		if p.Reservation != nil {
			if err := t.db.BudgetReservationDelete(ctx, *p.Reservation); err != nil {
				return mapErr(err)
			}
		}
		for _, l := range p.Lines {
			row, err := t.db.BudgetCharge(ctx, &dbsqlc.BudgetChargeParams{BudgetKey: l.Key, Period: l.Period, MicroUsd: p.MicroUSD, Tokens: p.Tokens, Now: now})
			if err != nil {
				return mapErr(err)
			}
			if p.WarnAt <= 0 || row.WarnedAt != nil || !l.Passed(budgetState(&row), p.WarnAt) {
				continue
			}
			n, err := t.db.BudgetWarned(ctx, &dbsqlc.BudgetWarnedParams{BudgetKey: l.Key, Period: l.Period, Now: now})
			if err != nil {
				return mapErr(err)
			}
			if n == 1 {
				warn = append(warn, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "charging %d µ$ to %d budgets", p.MicroUSD, len(p.Lines))
	}
	return warn, nil
}

func (q *queries) BudgetExtend(ctx context.Context, p *store.BudgetExtendParams) (*store.BudgetState, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).BudgetExtend, &dbsqlc.BudgetExtendParams{
		BudgetKey: p.Key, Period: p.Period, MicroUsd: p.MicroUSD, Tokens: p.Tokens, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "extending budget %s for %s", p.Key, p.Period)
	}
	return budgetState(&r), nil
}

func (q *queries) BudgetGet(ctx context.Context, p *store.BudgetGetParams) (*store.BudgetState, error) {
	st := &store.BudgetState{Key: p.Key, Period: p.Period}
	r, err := call(ctx, q, (*dbsqlc.Queries).BudgetSpendGet, &dbsqlc.BudgetSpendGetParams{BudgetKey: p.Key, Period: p.Period})
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, wrap(err, "reading budget %s for %s", p.Key, p.Period)
	default:
		st = budgetState(&r)
	}
	held, err := call(ctx, q, (*dbsqlc.Queries).BudgetReserved, &dbsqlc.BudgetReservedParams{BudgetKey: p.Key, Period: p.Period, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "reading budget %s's reservations for %s", p.Key, p.Period)
	}
	st.ReservedMicroUSD, st.ReservedTokens = held.MicroUsd, held.Tokens
	return st, nil
}
