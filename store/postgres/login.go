package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) LoginCreate(ctx context.Context, p *store.LoginCreateParams) (*store.Login, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).LoginCreate, &dbsqlc.LoginCreateParams{
		ID: p.ID, Kind: string(p.Kind), SecretHash: p.SecretHash, PersonID: p.PersonID,
		Now: ts(p.Now), ExpiresAt: ts(p.ExpiresAt),
	})
	if err != nil {
		return nil, wrap(err, "creating %s", p.Kind)
	}
	return webLogin(&row), nil
}

func (q *queries) LoginFind(ctx context.Context, secretHash []byte) (*store.Login, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).LoginFind, secretHash)
	if err != nil {
		return nil, wrap(err, "finding login")
	}
	return webLogin(&row), nil
}

func (q *queries) LoginUse(ctx context.Context, p *store.LoginUseParams) (*store.Login, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).LoginUse, &dbsqlc.LoginUseParams{SecretHash: p.SecretHash, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "using login")
	}
	return webLogin(&row), nil
}

func (q *queries) LoginPrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).LoginPrune, &dbsqlc.LoginPruneParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	return int(n), wrap(err, "pruning logins expired before %s", p.Before)
}

func webLogin(r *dbsqlc.WebLogin) *store.Login {
	return &store.Login{
		ID: r.ID, Kind: store.LoginKind(r.Kind), SecretHash: r.SecretHash, PersonID: r.PersonID,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, UsedAt: r.UsedAt,
	}
}
