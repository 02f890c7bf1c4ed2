package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Spending budgets. SQLite has one writer: a reservation's writer
// transaction already runs alone.

func budgetState(r dbsqlc.BudgetSpend) *store.BudgetState {
	return &store.BudgetState{
		Key: r.BudgetKey, Period: r.Period,
		SpentMicroUSD: r.SpentMicroUsd, SpentTokens: r.SpentTokens,
		ExtraMicroUSD: r.ExtraMicroUsd, ExtraTokens: r.ExtraTokens,
		WarnedAt: nullMicros(r.WarnedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func (q *queries) BudgetReserve(ctx context.Context, p *store.BudgetReserveParams) (*store.BudgetReserveResult, error) {
	now := micros(p.Now)
	res, err := write(ctx, q, func(t *queries) (*store.BudgetReserveResult, error) {
		for i, l := range p.Lines {
			row, err := t.tx.BudgetSpendLock(ctx, dbsqlc.BudgetSpendLockParams{BudgetKey: l.Key, Period: l.Period, Now: now})
			if err != nil {
				return nil, err
			}
			if err := t.tx.BudgetReservationsExpire(ctx, dbsqlc.BudgetReservationsExpireParams{BudgetKey: l.Key, Period: l.Period, Now: now}); err != nil {
				return nil, err
			}
			held, err := t.tx.BudgetReserved(ctx, dbsqlc.BudgetReservedParams{BudgetKey: l.Key, Period: l.Period, Now: now})
			if err != nil {
				return nil, err
			}
			st := budgetState(row)
			st.ReservedMicroUSD, st.ReservedTokens = held.MicroUsd, held.Tokens
			usd, tok := l.Available(st)
			if (usd >= 0 && p.MicroUSD > usd) || (tok >= 0 && p.Tokens > tok) {
				return &store.BudgetReserveResult{Refused: st, Line: &p.Lines[i]}, nil
			}
		}
		for _, l := range p.Lines {
			if err := t.tx.BudgetReservationInsert(ctx, dbsqlc.BudgetReservationInsertParams{
				ID: p.ID, BudgetKey: l.Key, Period: l.Period, MicroUsd: p.MicroUSD, Tokens: p.Tokens,
				Holder: p.Holder, ExpiresAt: micros(p.Now.Add(p.TTL)), Now: now,
			}); err != nil {
				return nil, err
			}
		}
		return &store.BudgetReserveResult{OK: true}, nil
	})
	if err != nil {
		return nil, wrap(err, "reserving %d µ$ against %d budgets", p.MicroUSD, len(p.Lines))
	}
	return res, nil
}

func (q *queries) BudgetRenew(ctx context.Context, id uuid.UUID, until time.Time) (bool, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.BudgetReservationRenew(ctx, dbsqlc.BudgetReservationRenewParams{ID: id, ExpiresAt: micros(until)})
	})
	if err != nil {
		return false, wrap(err, "renewing budget reservation %s", id)
	}
	return n > 0, nil
}

func (q *queries) BudgetRelease(ctx context.Context, id uuid.UUID) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.BudgetReservationDelete(ctx, id)
	})
	if err != nil {
		return wrap(err, "releasing budget reservation %s", id)
	}
	return nil
}

func (q *queries) BudgetCharge(ctx context.Context, p *store.BudgetChargeParams) ([]store.BudgetLine, error) {
	now := micros(p.Now)
	warn, err := write(ctx, q, func(t *queries) ([]store.BudgetLine, error) {
		var warn []store.BudgetLine
		if p.Reservation != nil {
			if err := t.tx.BudgetReservationDelete(ctx, *p.Reservation); err != nil {
				return nil, err
			}
		}
		for _, l := range p.Lines {
			row, err := t.tx.BudgetCharge(ctx, dbsqlc.BudgetChargeParams{BudgetKey: l.Key, Period: l.Period, MicroUsd: p.MicroUSD, Tokens: p.Tokens, Now: now})
			if err != nil {
				return nil, err
			}
			if p.WarnAt <= 0 || row.WarnedAt.Valid || !l.Passed(budgetState(row), p.WarnAt) {
				continue
			}
			n, err := t.tx.BudgetWarned(ctx, dbsqlc.BudgetWarnedParams{BudgetKey: l.Key, Period: l.Period, Now: now})
			if err != nil {
				return nil, err
			}
			if n == 1 {
				warn = append(warn, l)
			}
		}
		return warn, nil
	})
	if err != nil {
		return nil, wrap(err, "charging %d µ$ to %d budgets", p.MicroUSD, len(p.Lines))
	}
	return warn, nil
}

func (q *queries) BudgetExtend(ctx context.Context, p *store.BudgetExtendParams) (*store.BudgetState, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.BudgetSpend, error) {
		return t.tx.BudgetExtend(ctx, dbsqlc.BudgetExtendParams{BudgetKey: p.Key, Period: p.Period, MicroUsd: p.MicroUSD, Tokens: p.Tokens, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "extending budget %s for %s", p.Key, p.Period)
	}
	return budgetState(r), nil
}

func (q *queries) BudgetGet(ctx context.Context, p *store.BudgetGetParams) (*store.BudgetState, error) {
	st := &store.BudgetState{Key: p.Key, Period: p.Period}
	r, err := q.read().BudgetSpendGet(ctx, dbsqlc.BudgetSpendGetParams{BudgetKey: p.Key, Period: p.Period})
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, wrap(err, "reading budget %s for %s", p.Key, p.Period)
	default:
		st = budgetState(r)
	}
	held, err := q.read().BudgetReserved(ctx, dbsqlc.BudgetReservedParams{BudgetKey: p.Key, Period: p.Period, Now: micros(p.Now)})
	if err != nil {
		return nil, wrap(err, "reading budget %s's reservations for %s", p.Key, p.Period)
	}
	st.ReservedMicroUSD, st.ReservedTokens = held.MicroUsd, held.Tokens
	return st, nil
}
