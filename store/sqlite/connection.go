package sqlite

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func connection(r dbsqlc.Connection) (*store.Connection, error) {
	var scopes []string
	if err := json.Unmarshal([]byte(r.Scopes), &scopes); err != nil {
		return nil, err
	}
	if scopes == nil {
		scopes = []string{}
	}
	return &store.Connection{
		ID: r.ID, Provider: store.ConnectionProvider(r.Provider), Owner: store.OwnerFromColumns(r.OwnerKind, r.OwnerID),
		Account: r.Account, AccountID: r.AccountID, Scopes: scopes,
		AccessToken: r.AccessToken, RefreshToken: r.RefreshToken, TokenType: r.TokenType, Expiry: nullMicros(r.Expiry),
		ConnectedBy: r.ConnectedBy, CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}, nil
}

func (q *queries) ConnectionSave(ctx context.Context, p *store.ConnectionSaveParams) (*store.Connection, error) {
	kind, owner := p.Owner.Columns()
	scopes, _ := json.Marshal(p.Scopes) // strings always encode
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Connection, error) {
		return t.tx.ConnectionSave(ctx, dbsqlc.ConnectionSaveParams{
			ID: p.ID, Provider: string(p.Provider), OwnerKind: kind, OwnerID: owner, Account: p.Account, AccountID: p.AccountID,
			Scopes: string(scopes), AccessToken: p.AccessToken, RefreshToken: p.RefreshToken, TokenType: p.TokenType,
			Expiry: microsArg(p.Expiry), ConnectedBy: p.ConnectedBy, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "saving the %s connection of %s", p.Provider, p.Owner)
	}
	return connection(r)
}

func (q *queries) ConnectionGet(ctx context.Context, id uuid.UUID) (*store.Connection, error) {
	r, err := q.read().ConnectionGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading connection %s", id)
	}
	return connection(r)
}

func (q *queries) ConnectionFind(ctx context.Context, p *store.ConnectionFindParams) (*store.Connection, error) {
	kind, owner := p.Owner.Columns()
	r, err := q.read().ConnectionFind(ctx, dbsqlc.ConnectionFindParams{Provider: string(p.Provider), OwnerKind: kind, OwnerID: owner})
	if err != nil {
		return nil, wrap(err, "finding the %s connection of %s", p.Provider, p.Owner)
	}
	return connection(r)
}

func (q *queries) ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]*store.Connection, error) {
	arg := dbsqlc.ConnectionListParams{AfterID: p.AfterID, MaxRows: int64(p.Limit)}
	if p.Owner != nil {
		arg.OwnerKind, arg.OwnerID = p.Owner.Columns()
	}
	rs, err := q.read().ConnectionList(ctx, arg)
	if err != nil {
		return nil, wrap(err, "listing connections")
	}
	out := make([]*store.Connection, 0, len(rs))
	for _, r := range rs {
		c, err := connection(r)
		if err != nil {
			return nil, wrap(err, "listing connections")
		}
		out = append(out, c)
	}
	return out, nil
}

func (q *queries) ConnectionSetTokens(ctx context.Context, p *store.ConnectionTokenParams) (*store.Connection, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Connection, error) {
		return t.tx.ConnectionSetTokens(ctx, dbsqlc.ConnectionSetTokensParams{
			AccessToken: p.AccessToken, RefreshToken: p.RefreshToken, Expiry: microsArg(p.Expiry), Now: micros(p.Now), ID: p.ID, Expect: p.Expect,
		})
	})
	if err != nil {
		return nil, wrap(err, "replacing the tokens of connection %s", p.ID)
	}
	return connection(r)
}

func (q *queries) ConnectionDelete(ctx context.Context, id uuid.UUID) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		n, err := t.tx.ConnectionDelete(ctx, id)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return struct{}{}, err
	})
	if err != nil {
		return wrap(err, "removing connection %s", id)
	}
	return nil
}
