package web

import (
	"context"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
)

// Spending budgets (switchboard.yaml's budgets): GET /api/budgets shows
// each budget's spend today and this month against its limits; POST
// /api/budgets/extend grants a one-off extension of a budget's current day
// or month, recorded in the audit. Both are the operator's.

// BudgetUses reads and extends budgets (core/budgets.go).
type BudgetUses interface {
	Budgets(ctx context.Context) ([]core.BudgetStatus, error)
	ExtendBudget(ctx context.Context, e core.BudgetExtension) (*core.BudgetStatus, error)
}

// BudgetList is the answer of GET /api/budgets.
type BudgetList struct {
	// Budgets are each declared budget's current day and month, in the
	// order switchboard.yaml declares them.
	Budgets []core.BudgetStatus `json:"budgets"`
}

func (a *API) budgets(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(PrincipalFrom(r.Context()), "read the budgets"); err != nil {
		return err
	}
	bs, err := a.svc.Budgets(r.Context())
	if err != nil {
		return err
	}
	if bs == nil {
		bs = []core.BudgetStatus{}
	}
	writeJSON(w, http.StatusOK, BudgetList{Budgets: bs})
	return nil
}

func (a *API) budgetExtend(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(PrincipalFrom(r.Context()), "extend a budget"); err != nil {
		return err
	}
	var body core.BudgetExtension
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	body.By = caller(r)
	st, err := a.svc.ExtendBudget(r.Context(), body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// BudgetExtendRequest is the body of POST /api/budgets/extend: the budget's
// key ("agent:atlas"), its month (default its day), and usd or tokens.
type BudgetExtendRequest = core.BudgetExtension

// BudgetStatus is one budget's period.
type BudgetStatus = core.BudgetStatus
