package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) LoginCreate(ctx context.Context, p *store.LoginCreateParams) (*store.Login, error) {
	l, err := write(ctx, q, func(t *queries) (*store.Login, error) {
		return oneLogin(t.tx.LoginInsert(ctx, dbsqlc.LoginInsertParams{
			ID: p.ID, Kind: string(p.Kind), SecretHash: p.SecretHash, PersonID: uuidArg(p.PersonID),
			Now: micros(p.Now), ExpiresAt: micros(p.ExpiresAt),
		}))
	})
	if err != nil {
		return nil, wrap(err, "creating %s", p.Kind)
	}
	return l, nil
}

func (q *queries) LoginFind(ctx context.Context, secretHash []byte) (*store.Login, error) {
	l, err := oneLogin(q.read().LoginByHash(ctx, secretHash))
	if err != nil {
		return nil, wrap(err, "finding login")
	}
	return l, nil
}

func (q *queries) LoginUse(ctx context.Context, p *store.LoginUseParams) (*store.Login, error) {
	l, err := write(ctx, q, func(t *queries) (*store.Login, error) {
		return oneLogin(t.tx.LoginMarkUsed(ctx, dbsqlc.LoginMarkUsedParams{SecretHash: p.SecretHash, Now: micros(p.Now)}))
	})
	if err != nil {
		return nil, wrap(err, "using login")
	}
	return l, nil
}

func (q *queries) LoginPrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.LoginsPrune(ctx, dbsqlc.LoginsPruneParams{Before: micros(p.Before), Limit: limitArg(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning logins expired before %s", p.Before)
	}
	return int(n), nil
}

func oneLogin(r dbsqlc.WebLogin, err error) (*store.Login, error) {
	if err != nil {
		return nil, err
	}
	return &store.Login{
		ID: r.ID, Kind: store.LoginKind(r.Kind), SecretHash: r.SecretHash, PersonID: nullUUID(r.PersonID),
		CreatedAt: fromMicros(r.CreatedAt), ExpiresAt: fromMicros(r.ExpiresAt), UsedAt: nullMicros(r.UsedAt),
	}, nil
}
