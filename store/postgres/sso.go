package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) OIDCStateCreate(ctx context.Context, p *store.OIDCStateCreateParams) (*store.OIDCState, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).OIDCStateCreate, &dbsqlc.OIDCStateCreateParams{
		StateHash: p.StateHash, Nonce: p.Nonce, CodeVerifier: p.CodeVerifier, ReturnTo: p.ReturnTo,
		Now: ts(p.Now), ExpiresAt: ts(p.ExpiresAt),
	})
	if err != nil {
		return nil, wrap(err, "creating OIDC state")
	}
	return oidcState(&row), nil
}

func (q *queries) OIDCStateUse(ctx context.Context, p *store.OIDCStateUseParams) (*store.OIDCState, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).OIDCStateUse, &dbsqlc.OIDCStateUseParams{StateHash: p.StateHash, Now: ts(p.Now)})
	if errors.Is(err, errNoRow) {
		// Nothing was updated: no such state, or it was used before (the
		// UPDATE's row lock made a concurrent use wait and then miss).
		if _, ferr := call(ctx, q, (*dbsqlc.Queries).OIDCStateFind, p.StateHash); ferr == nil {
			return nil, wrap(store.ErrConflict, "using OIDC state")
		}
	}
	if err != nil {
		return nil, wrap(err, "using OIDC state")
	}
	return oidcState(&row), nil
}

func (q *queries) OIDCStatePrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).OIDCStatePrune, &dbsqlc.OIDCStatePruneParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	return int(n), wrap(err, "pruning OIDC states expired before %s", p.Before)
}

func (q *queries) SSOGrantList(ctx context.Context, personID uuid.UUID) ([]*store.SSOGrant, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SSOGrantList, personID)
	if err != nil {
		return nil, wrap(err, "listing the SSO grants of %s", personID)
	}
	return each(rows, ssoGrant), nil
}

func (q *queries) SSOGrantPut(ctx context.Context, p *store.SSOGrantPutParams) (*store.SSOGrant, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SSOGrantPut, &dbsqlc.SSOGrantPutParams{
		PersonID: p.PersonID, WorkspaceID: p.WorkspaceID, Role: string(p.Role), Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "recording the SSO grant of %s in %s", p.PersonID, p.WorkspaceID)
	}
	return ssoGrant(&row), nil
}

func (q *queries) SSOGrantDelete(ctx context.Context, p *store.SSOGrantDeleteParams) error {
	err := exec(ctx, q, (*dbsqlc.Queries).SSOGrantDelete, &dbsqlc.SSOGrantDeleteParams{PersonID: p.PersonID, WorkspaceID: p.WorkspaceID})
	return wrap(err, "deleting the SSO grant of %s in %s", p.PersonID, p.WorkspaceID)
}

func oidcState(r *dbsqlc.OidcState) *store.OIDCState {
	return &store.OIDCState{
		StateHash: r.StateHash, Nonce: r.Nonce, CodeVerifier: r.CodeVerifier, ReturnTo: r.ReturnTo,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, UsedAt: r.UsedAt,
	}
}

func ssoGrant(r *dbsqlc.SsoGrant) *store.SSOGrant {
	return &store.SSOGrant{
		PersonID: r.PersonID, WorkspaceID: r.WorkspaceID, Role: store.Role(r.Role),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}
