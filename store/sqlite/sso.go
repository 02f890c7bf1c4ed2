package sqlite

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) OIDCStateCreate(ctx context.Context, p *store.OIDCStateCreateParams) (*store.OIDCState, error) {
	st, err := write(ctx, q, func(t *queries) (*store.OIDCState, error) {
		return oneOIDCState(t.tx.OIDCStateInsert(ctx, dbsqlc.OIDCStateInsertParams{
			StateHash: p.StateHash, Nonce: p.Nonce, CodeVerifier: p.CodeVerifier, ReturnTo: p.ReturnTo,
			Now: micros(p.Now), ExpiresAt: micros(p.ExpiresAt),
		}))
	})
	if err != nil {
		return nil, wrap(err, "creating OIDC state")
	}
	return st, nil
}

func (q *queries) OIDCStateUse(ctx context.Context, p *store.OIDCStateUseParams) (*store.OIDCState, error) {
	st, err := write(ctx, q, func(t *queries) (*store.OIDCState, error) {
		st, err := oneOIDCState(t.tx.OIDCStateMarkUsed(ctx, dbsqlc.OIDCStateMarkUsedParams{StateHash: p.StateHash, Now: micros(p.Now)}))
		if err == nil || !errors.Is(mapErr(err), store.ErrNotFound) {
			return st, err
		}
		// Nothing was updated: no such state, or it was used before.
		if _, ferr := t.tx.OIDCStateByHash(ctx, p.StateHash); ferr == nil {
			return nil, store.ErrConflict
		}
		return nil, err
	})
	if err != nil {
		return nil, wrap(err, "using OIDC state")
	}
	return st, nil
}

func (q *queries) OIDCStatePrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.OIDCStatesPrune(ctx, dbsqlc.OIDCStatesPruneParams{Before: micros(p.Before), Limit: limitArg(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning OIDC states expired before %s", p.Before)
	}
	return int(n), nil
}

func (q *queries) SSOGrantList(ctx context.Context, personID uuid.UUID) ([]*store.SSOGrant, error) {
	rows, err := q.read().SSOGrantsOf(ctx, personID)
	if err != nil {
		return nil, wrap(err, "listing the SSO grants of %s", personID)
	}
	out := make([]*store.SSOGrant, len(rows))
	for i, r := range rows {
		out[i] = ssoGrant(r)
	}
	return out, nil
}

func (q *queries) SSOGrantPut(ctx context.Context, p *store.SSOGrantPutParams) (*store.SSOGrant, error) {
	g, err := write(ctx, q, func(t *queries) (*store.SSOGrant, error) {
		r, err := t.tx.SSOGrantUpsert(ctx, dbsqlc.SSOGrantUpsertParams{
			PersonID: p.PersonID, WorkspaceID: p.WorkspaceID, Role: string(p.Role), Now: micros(p.Now),
		})
		if err != nil {
			return nil, err
		}
		return ssoGrant(r), nil
	})
	if err != nil {
		return nil, wrap(err, "recording the SSO grant of %s in %s", p.PersonID, p.WorkspaceID)
	}
	return g, nil
}

func (q *queries) SSOGrantDelete(ctx context.Context, p *store.SSOGrantDeleteParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.SSOGrantRemove(ctx, dbsqlc.SSOGrantRemoveParams{PersonID: p.PersonID, WorkspaceID: p.WorkspaceID})
	})
	if err != nil {
		return wrap(err, "deleting the SSO grant of %s in %s", p.PersonID, p.WorkspaceID)
	}
	return nil
}

func oneOIDCState(r dbsqlc.OidcState, err error) (*store.OIDCState, error) {
	if err != nil {
		return nil, err
	}
	return &store.OIDCState{
		StateHash: r.StateHash, Nonce: r.Nonce, CodeVerifier: r.CodeVerifier, ReturnTo: r.ReturnTo,
		CreatedAt: fromMicros(r.CreatedAt), ExpiresAt: fromMicros(r.ExpiresAt), UsedAt: nullMicros(r.UsedAt),
	}, nil
}

func ssoGrant(r dbsqlc.SsoGrant) *store.SSOGrant {
	return &store.SSOGrant{
		PersonID: r.PersonID, WorkspaceID: r.WorkspaceID, Role: store.Role(r.Role),
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}
