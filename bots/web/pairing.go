package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Pairings is what the API needs of the access gate (access.Gate): the
// pairing codes strangers were handed and their approval.
type Pairings interface {
	Approve(ctx context.Context, code, by string) (*core.Pairing, error)
	Pending(ctx context.Context) ([]*core.Pairing, error)
}

// pairingJSON is a pairing as the API shows it.
type pairingJSON struct {
	Platform   string     `json:"platform"`
	UserID     string     `json:"user_id"`
	UserName   string     `json:"user_name,omitempty"`
	Workspace  string     `json:"workspace,omitempty"`
	Code       string     `json:"code"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	ApprovedAt *time.Time `json:"approved_at,omitempty"`
	ApprovedBy string     `json:"approved_by,omitempty"`
}

func toPairingJSON(p *core.Pairing) pairingJSON {
	return pairingJSON{
		Platform: p.Platform, UserID: p.UserID, UserName: p.UserName, Workspace: p.Workspace, Code: p.Code,
		Status: string(p.Status), CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt, ApprovedAt: p.ApprovedAt, ApprovedBy: p.ApprovedBy,
	}
}

// PairingList is GET /api/pairing.
type PairingList struct {
	Pending []pairingJSON `json:"pending"`
}

func (a *API) pairingList(w http.ResponseWriter, r *http.Request) error {
	ps, err := a.opts.Pairings.Pending(r.Context())
	if err != nil {
		return err
	}
	out := make([]pairingJSON, len(ps))
	for i, p := range ps {
		out[i] = toPairingJSON(p)
	}
	writeJSON(w, http.StatusOK, PairingList{Pending: out})
	return nil
}

func (a *API) pairingApprove(w http.ResponseWriter, r *http.Request) error {
	code := r.PathValue("code")
	p, err := a.opts.Pairings.Approve(r.Context(), code, "api:"+caller(r))
	if errors.Is(err, core.ErrNotFound) {
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("no pending pairing has the code %s (unknown, expired or approved already)", core.NormalizePairingCode(code))}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toPairingJSON(p))
	return nil
}
