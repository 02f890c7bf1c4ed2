package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/compare"
)

// POST /api/compare: one prompt on several models side by side.

// CompareRequest is the body of POST /api/compare.
type CompareRequest struct {
	// Models are provider:model specs, 1 to compare.MaxModels.
	Models    []string `json:"models"`
	Prompt    string   `json:"prompt"`
	System    string   `json:"system,omitempty"`
	MaxTokens int      `json:"max_tokens,omitempty"`
}

// CompareResponse is its answer: one row per model, in the order asked.
type CompareResponse struct {
	Results []compare.Result `json:"results"`
}

// CompareFunc runs a comparison with the service's keys and endpoints.
type CompareFunc func(ctx context.Context, req *CompareRequest) ([]compare.Result, error)

func (a *API) compare(w http.ResponseWriter, r *http.Request) error {
	// Every model asked is paid for with the service's keys.
	if err := operatorOnly(PrincipalFrom(r.Context()), "compare models"); err != nil {
		return err
	}
	var body CompareRequest
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	rows, err := a.opts.Compare(r.Context(), &body)
	if err != nil {
		return fmt.Errorf("%w: %w", core.ErrInvalid, err)
	}
	writeJSON(w, http.StatusOK, CompareResponse{Results: rows})
	return nil
}
