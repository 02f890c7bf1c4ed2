package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) LoginCreate(ctx context.Context, p *store.LoginCreateParams) (*store.Login, error) {
	l, err := write(ctx, q, func(t *queries) (*store.Login, error) {
		return oneLogin(t.tx.LoginInsert(ctx, dbsqlc.LoginInsertParams{
			ID: p.ID, Kind: string(p.Kind), SecretHash: p.SecretHash, PersonID: uuidArg(p.PersonID),
			Now: micros(p.Now), ExpiresAt: micros(p.ExpiresAt), Method: string(p.Method), IDToken: p.IDToken,
			LastUsedAt: firstUse(p), Ip: p.IP, UserAgent: p.UserAgent,
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

// firstUse is a session's last use when it is made: its opening.
func firstUse(p *store.LoginCreateParams) sql.NullInt64 {
	if p.Kind != store.LoginSession {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(p.Now), Valid: true}
}

func (q *queries) LoginGet(ctx context.Context, id uuid.UUID) (*store.Login, error) {
	l, err := oneLogin(q.read().LoginByID(ctx, id))
	if err != nil {
		return nil, wrap(err, "getting login %s", id)
	}
	return l, nil
}

func (q *queries) LoginTouch(ctx context.Context, p *store.TouchParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.LoginTouch(ctx, dbsqlc.LoginTouchParams{
			ID: p.ID, Now: micros(p.Now), Ip: p.IP, UserAgent: p.UserAgent, UsedBefore: micros(p.Now.Add(-p.Every)),
		})
	})
	if err != nil {
		return wrap(err, "recording the use of session %s", p.ID)
	}
	return nil
}

func (q *queries) LoginSessions(ctx context.Context, p *store.LoginSessionsParams) ([]*store.Login, error) {
	ids, _ := json.Marshal(p.PersonIDs) // UUIDs always encode
	rows, err := q.read().LoginSessions(ctx, dbsqlc.LoginSessionsParams{
		Now: micros(p.Now), AllSessions: boolInt(p.All), PersonIds: string(ids), Operator: boolInt(p.Operator), Limit: limitArg(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing sessions")
	}
	out := make([]*store.Login, len(rows))
	for i, r := range rows {
		out[i], _ = oneLogin(r, nil)
	}
	return out, nil
}

func (q *queries) LoginEnd(ctx context.Context, p *store.LoginEndParams) (*store.Login, error) {
	l, err := write(ctx, q, func(t *queries) (*store.Login, error) {
		return oneLogin(t.tx.LoginEnd(ctx, dbsqlc.LoginEndParams{ID: p.ID, Now: micros(p.Now)}))
	})
	if err != nil {
		return nil, wrap(err, "ending session %s", p.ID)
	}
	return l, nil
}

func oneLogin(r dbsqlc.WebLogin, err error) (*store.Login, error) {
	if err != nil {
		return nil, err
	}
	return &store.Login{
		ID: r.ID, Kind: store.LoginKind(r.Kind), SecretHash: r.SecretHash, PersonID: nullUUID(r.PersonID),
		CreatedAt: fromMicros(r.CreatedAt), ExpiresAt: fromMicros(r.ExpiresAt), UsedAt: nullMicros(r.UsedAt),
		Method: store.LoginMethod(r.Method), IDToken: r.IDToken, LastUsedAt: nullMicros(r.LastUsedAt),
		LastIP: r.LastIp, LastUserAgent: r.LastUserAgent,
	}, nil
}
