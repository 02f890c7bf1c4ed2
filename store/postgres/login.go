package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) LoginCreate(ctx context.Context, p *store.LoginCreateParams) (*store.Login, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).LoginCreate, &dbsqlc.LoginCreateParams{
		ID: p.ID, Kind: string(p.Kind), SecretHash: p.SecretHash, PersonID: p.PersonID,
		Now: ts(p.Now), ExpiresAt: ts(p.ExpiresAt), Method: string(p.Method), IDToken: p.IDToken,
		Ip: p.IP, UserAgent: p.UserAgent,
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

func (q *queries) LoginGet(ctx context.Context, id uuid.UUID) (*store.Login, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).LoginGet, id)
	if err != nil {
		return nil, wrap(err, "getting login %s", id)
	}
	return webLogin(&row), nil
}

func (q *queries) LoginTouch(ctx context.Context, p *store.TouchParams) error {
	err := exec(ctx, q, (*dbsqlc.Queries).LoginTouch, &dbsqlc.LoginTouchParams{
		ID: p.ID, Now: ts(p.Now), Ip: p.IP, UserAgent: p.UserAgent, UsedBefore: ts(p.Now.Add(-p.Every)),
	})
	return wrap(err, "recording the use of session %s", p.ID)
}

func (q *queries) LoginSessions(ctx context.Context, p *store.LoginSessionsParams) ([]*store.Login, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).LoginSessions, &dbsqlc.LoginSessionsParams{
		Now: ts(p.Now), AllSessions: p.All, PersonIds: uuidStrings(p.PersonIDs), Operator: p.Operator, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing sessions")
	}
	return each(rows, webLogin), nil
}

func (q *queries) LoginEnd(ctx context.Context, p *store.LoginEndParams) (*store.Login, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).LoginEnd, &dbsqlc.LoginEndParams{ID: p.ID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "ending session %s", p.ID)
	}
	return webLogin(&row), nil
}

func webLogin(r *dbsqlc.WebLogin) *store.Login {
	return &store.Login{
		ID: r.ID, Kind: store.LoginKind(r.Kind), SecretHash: r.SecretHash, PersonID: r.PersonID,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, UsedAt: r.UsedAt,
		Method: store.LoginMethod(r.Method), IDToken: r.IDToken, LastUsedAt: r.LastUsedAt,
		LastIP: r.LastIp, LastUserAgent: r.LastUserAgent,
	}
}
