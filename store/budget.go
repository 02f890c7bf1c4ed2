package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Spending budgets: what each budget has spent in each period, and the
// reservations model calls hold against them (see core's budgets).

// BudgetLine is one budget a call counts against, in one period, with its
// limits. A zero limit does not bound that measure.
type BudgetLine struct {
	// Key names the budget: "agent:atlas", "workspace:T0TEAM", …
	Key string
	// Period is the UTC day or month it counts: "day:2026-12-07",
	// "month:2026-12".
	Period        string
	LimitMicroUSD int64
	LimitTokens   int64
}

// BudgetState is a budget's spend in one period.
type BudgetState struct {
	Key, Period      string
	SpentMicroUSD    int64
	SpentTokens      int64
	ReservedMicroUSD int64 // held by calls in flight
	ReservedTokens   int64
	ExtraMicroUSD    int64 // one-off extensions granted for the period
	ExtraTokens      int64
	WarnedAt         *time.Time // when the owner was told it passed 80 %
	UpdatedAt        time.Time
}

// BudgetReserveParams reserve a call's worst case against every line, all
// or none.
type BudgetReserveParams struct {
	ID       uuid.UUID // the reservation's; made by the caller
	Lines    []BudgetLine
	MicroUSD int64
	Tokens   int64
	// Holder says who holds it (the instance and the turn), for operators.
	Holder string
	Now    time.Time
	// TTL is how long the reservation lives unless renewed: a reservation
	// of a dead instance frees itself after it.
	TTL time.Duration
}

// BudgetReserveResult says whether the reservation was taken; when not,
// Refused is the first line it would have overdrawn, as it stood.
type BudgetReserveResult struct {
	OK      bool
	Refused *BudgetState
	Line    *BudgetLine // the refused line's limits
}

// BudgetChargeParams charge a call's real cost to every line, deleting its
// reservation (when it had one) in the same transaction.
type BudgetChargeParams struct {
	Reservation *uuid.UUID
	Lines       []BudgetLine
	MicroUSD    int64
	Tokens      int64
	// WarnAt is the share of a limit (0.8) past which the owner is told,
	// once per budget and period.
	WarnAt float64
	Now    time.Time
}

// BudgetExtendParams grant a one-off extension for one budget's period.
type BudgetExtendParams struct {
	Key, Period string
	MicroUSD    int64
	Tokens      int64
	Now         time.Time
}

// BudgetGetParams read a budget's period.
type BudgetGetParams struct {
	Key, Period string
	Now         time.Time // reservations expired by then are not counted
}

// BudgetQueries are the budgets' queries.
type BudgetQueries interface {
	// BudgetReserve takes the reservation against every line or none: a
	// line whose spend, live reservations and this call would pass its
	// limit plus extensions refuses it. Reservations of one budget are
	// serialised, so instances sharing the store never overdraw together.
	BudgetReserve(ctx context.Context, p *BudgetReserveParams) (*BudgetReserveResult, error)
	// BudgetRenew moves a reservation's expiry to until; false when it is
	// gone (charged, released, or expired and cleared).
	BudgetRenew(ctx context.Context, id uuid.UUID, until time.Time) (bool, error)
	// BudgetRelease deletes a reservation (no error if none).
	BudgetRelease(ctx context.Context, id uuid.UUID) error
	// BudgetCharge adds the cost to every line and deletes the
	// reservation; it returns the lines that passed WarnAt with this
	// charge for the first time in their period (the caller tells the
	// owner, once).
	BudgetCharge(ctx context.Context, p *BudgetChargeParams) ([]BudgetLine, error)
	// BudgetExtend adds a one-off extension to a budget's period.
	BudgetExtend(ctx context.Context, p *BudgetExtendParams) (*BudgetState, error)
	// BudgetGet reads a budget's period (zero spend when nothing counted
	// yet).
	BudgetGet(ctx context.Context, p *BudgetGetParams) (*BudgetState, error)
}

// Available is what the line leaves for new calls given st: its limit
// plus extensions, less spend and live reservations; -1 when unbounded.
func (l BudgetLine) Available(st *BudgetState) (microUSD, tokens int64) {
	microUSD, tokens = -1, -1
	if l.LimitMicroUSD > 0 {
		microUSD = l.LimitMicroUSD + st.ExtraMicroUSD - st.SpentMicroUSD - st.ReservedMicroUSD
	}
	if l.LimitTokens > 0 {
		tokens = l.LimitTokens + st.ExtraTokens - st.SpentTokens - st.ReservedTokens
	}
	return microUSD, tokens
}

// Passed reports whether st's spend has reached share of the line's limit
// (plus extensions) on either measure.
func (l BudgetLine) Passed(st *BudgetState, share float64) bool {
	if l.LimitMicroUSD > 0 && float64(st.SpentMicroUSD) >= share*float64(l.LimitMicroUSD+st.ExtraMicroUSD) {
		return true
	}
	return l.LimitTokens > 0 && float64(st.SpentTokens) >= share*float64(l.LimitTokens+st.ExtraTokens)
}
