package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func connection(r *dbsqlc.Connection) *store.Connection {
	return &store.Connection{
		ID: r.ID, Provider: store.ConnectionProvider(r.Provider), Owner: store.OwnerFromColumns(r.OwnerKind, r.OwnerID),
		Account: r.Account, AccountID: r.AccountID, Scopes: r.Scopes,
		AccessToken: r.AccessToken, RefreshToken: r.RefreshToken, TokenType: r.TokenType, Expiry: r.Expiry,
		ConnectedBy: r.ConnectedBy, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

func (q *queries) ConnectionSave(ctx context.Context, p *store.ConnectionSaveParams) (*store.Connection, error) {
	kind, owner := p.Owner.Columns()
	row, err := call(ctx, q, (*dbsqlc.Queries).ConnectionSave, &dbsqlc.ConnectionSaveParams{
		ID: p.ID, Provider: string(p.Provider), OwnerKind: kind, OwnerID: owner, Account: p.Account, AccountID: p.AccountID,
		Scopes: p.Scopes, AccessToken: p.AccessToken, RefreshToken: p.RefreshToken, TokenType: p.TokenType,
		Expiry: tsPtr(p.Expiry), ConnectedBy: p.ConnectedBy, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "saving the %s connection of %s", p.Provider, p.Owner)
	}
	return connection(&row), nil
}

func (q *queries) ConnectionGet(ctx context.Context, id uuid.UUID) (*store.Connection, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ConnectionGet, id)
	if err != nil {
		return nil, wrap(err, "reading connection %s", id)
	}
	return connection(&row), nil
}

func (q *queries) ConnectionFind(ctx context.Context, p *store.ConnectionFindParams) (*store.Connection, error) {
	kind, owner := p.Owner.Columns()
	row, err := call(ctx, q, (*dbsqlc.Queries).ConnectionFind, &dbsqlc.ConnectionFindParams{Provider: string(p.Provider), OwnerKind: kind, OwnerID: owner})
	if err != nil {
		return nil, wrap(err, "finding the %s connection of %s", p.Provider, p.Owner)
	}
	return connection(&row), nil
}

func (q *queries) ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]*store.Connection, error) {
	arg := &dbsqlc.ConnectionListParams{AfterID: p.AfterID, MaxRows: int32(p.Limit)}
	if p.Owner != nil {
		arg.OwnerKind, arg.OwnerID = p.Owner.Columns()
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).ConnectionList, arg)
	if err != nil {
		return nil, wrap(err, "listing connections")
	}
	return each(rows, connection), nil
}

func (q *queries) ConnectionSetTokens(ctx context.Context, p *store.ConnectionTokenParams) (*store.Connection, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ConnectionSetTokens, &dbsqlc.ConnectionSetTokensParams{
		AccessToken: p.AccessToken, RefreshToken: p.RefreshToken, Expiry: tsPtr(p.Expiry), Now: ts(p.Now), ID: p.ID, Expect: p.Expect,
	})
	if err != nil {
		return nil, wrap(err, "replacing the tokens of connection %s", p.ID)
	}
	return connection(&row), nil
}

func (q *queries) ConnectionDelete(ctx context.Context, id uuid.UUID) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).ConnectionDelete, id)
	if err == nil && n == 0 {
		err = errNoRow
	}
	return wrap(err, "removing connection %s", id)
}
