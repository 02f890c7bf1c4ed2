package store

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
)

func checkBudgetLines(what string, lines []BudgetLine) error {
	for _, l := range lines {
		if l.Key == "" || l.Period == "" {
			return invalidf("%s: a line has no Key or Period", what)
		}
		if l.LimitMicroUSD < 0 || l.LimitTokens < 0 {
			return invalidf("%s: line %s has a negative limit", what, l.Key)
		}
	}
	return nil
}

// sortedLines is lines in key order: every driver locks budgets in that
// order, so two reservations never wait on each other.
func sortedLines(lines []BudgetLine) []BudgetLine {
	out := slices.Clone(lines)
	slices.SortFunc(out, func(a, b BudgetLine) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Period, b.Period))
	})
	return out
}

func (q checked) BudgetReserve(ctx context.Context, p *BudgetReserveParams) (*BudgetReserveResult, error) {
	switch {
	case p == nil:
		return nil, invalidf("reserving against budgets: params are nil")
	case p.ID == uuid.Nil:
		return nil, invalidf("reserving against budgets: no ID")
	case p.MicroUSD < 0 || p.Tokens < 0:
		return nil, invalidf("reserving against budgets: negative amount")
	case p.TTL <= 0:
		return nil, invalidf("reserving against budgets: TTL must be positive")
	}
	if err := checkBudgetLines("reserving against budgets", p.Lines); err != nil {
		return nil, err
	}
	if len(p.Lines) == 0 {
		return &BudgetReserveResult{OK: true}, nil
	}
	c := *p
	c.Lines = sortedLines(p.Lines)
	c.Now = q.at(c.Now)
	return q.Queries.BudgetReserve(ctx, &c)
}

func (q checked) BudgetRenew(ctx context.Context, id uuid.UUID, until time.Time) (bool, error) {
	if id == uuid.Nil {
		return false, invalidf("renewing a budget reservation: no ID")
	}
	return q.Queries.BudgetRenew(ctx, id, until)
}

func (q checked) BudgetRelease(ctx context.Context, id uuid.UUID) error {
	if id == uuid.Nil {
		return invalidf("releasing a budget reservation: no ID")
	}
	return q.Queries.BudgetRelease(ctx, id)
}

func (q checked) BudgetCharge(ctx context.Context, p *BudgetChargeParams) ([]BudgetLine, error) {
	switch {
	case p == nil:
		return nil, invalidf("charging budgets: params are nil")
	case p.MicroUSD < 0 || p.Tokens < 0:
		return nil, invalidf("charging budgets: negative amount")
	case p.WarnAt < 0 || p.WarnAt > 1:
		return nil, invalidf("charging budgets: WarnAt %v must be within 0 and 1", p.WarnAt)
	}
	if err := checkBudgetLines("charging budgets", p.Lines); err != nil {
		return nil, err
	}
	c := *p
	c.Lines = sortedLines(p.Lines)
	c.Now = q.at(c.Now)
	return q.Queries.BudgetCharge(ctx, &c)
}

func (q checked) BudgetExtend(ctx context.Context, p *BudgetExtendParams) (*BudgetState, error) {
	switch {
	case p == nil:
		return nil, invalidf("extending a budget: params are nil")
	case p.Key == "" || p.Period == "":
		return nil, invalidf("extending a budget: no Key or Period")
	case p.MicroUSD < 0 || p.Tokens < 0 || p.MicroUSD+p.Tokens == 0:
		return nil, invalidf("extending budget %s: the extension must be positive", p.Key)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.BudgetExtend(ctx, &c)
}

func (q checked) BudgetGet(ctx context.Context, p *BudgetGetParams) (*BudgetState, error) {
	if p == nil || p.Key == "" || p.Period == "" {
		return nil, invalidf("reading a budget: no Key or Period")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.BudgetGet(ctx, &c)
}
