package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) KeyCreate(ctx context.Context, p *store.KeyCreateParams) (*store.Key, error) {
	agents, _ := json.Marshal(p.Agents)         // strings always encode
	workspaces, _ := json.Marshal(p.Workspaces) // so do UUIDs
	k, err := write(ctx, q, func(t *queries) (*store.Key, error) {
		return oneKey(t.tx.KeyInsert(ctx, dbsqlc.KeyInsertParams{
			ID: p.ID, Kind: string(p.Kind), Lookup: p.Lookup, SecretHash: p.SecretHash,
			Agents: string(agents), PersonID: uuidArg(p.PersonID), WorkspaceIds: string(workspaces),
			ParentID: uuidArg(p.ParentID), Label: p.Label, Now: micros(p.Now), ExpiresAt: microsArg(p.ExpiresAt),
		}))
	})
	if err != nil {
		return nil, wrap(err, "creating %s key", p.Kind)
	}
	return k, nil
}

func (q *queries) KeyFind(ctx context.Context, lookup string) (*store.Key, error) {
	k, err := oneKey(q.read().KeyByLookup(ctx, lookup))
	if err != nil {
		return nil, wrap(err, "finding key %s", lookup)
	}
	return k, nil
}

func (q *queries) KeyGet(ctx context.Context, id uuid.UUID) (*store.Key, error) {
	k, err := oneKey(q.read().KeyByID(ctx, id))
	if err != nil {
		return nil, wrap(err, "getting key %s", id)
	}
	return k, nil
}

func (q *queries) KeyList(ctx context.Context, p *store.KeyListParams) ([]*store.Key, error) {
	var revoked int64
	if p.IncludeRevoked {
		revoked = 1
	}
	people := []byte("[]")
	if len(p.PersonIDs) > 0 {
		people, _ = json.Marshal(p.PersonIDs) // UUIDs always encode
	}
	rows, err := q.read().KeyListed(ctx, dbsqlc.KeyListedParams{Kind: string(p.Kind), IncludeRevoked: revoked, PersonIds: string(people), Limit: limitArg(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing keys")
	}
	return keys(rows)
}

func (q *queries) KeyRevoke(ctx context.Context, p *store.KeyRevokeParams) (*store.Key, error) {
	rows, err := write(ctx, q, func(t *queries) ([]dbsqlc.ApiKey, error) {
		return t.tx.KeyRevokeWithSessions(ctx, dbsqlc.KeyRevokeWithSessionsParams{ID: p.ID, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "revoking key %s", p.ID)
	}
	for _, r := range rows {
		if r.ID == p.ID {
			return apiKey(r)
		}
	}
	return nil, wrap(sql.ErrNoRows, "revoking key %s", p.ID)
}

func (q *queries) KeyPruneSessions(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.KeySessionsPrune(ctx, dbsqlc.KeySessionsPruneParams{Before: micros(p.Before), Limit: limitArg(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning sessions expired before %s", p.Before)
	}
	return int(n), nil
}

func (q *queries) KeyTouch(ctx context.Context, p *store.TouchParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.KeyTouch(ctx, dbsqlc.KeyTouchParams{
			ID: p.ID, Now: micros(p.Now), Ip: p.IP, UserAgent: p.UserAgent, UsedBefore: micros(p.Now.Add(-p.Every)),
		})
	})
	if err != nil {
		return wrap(err, "recording the use of key %s", p.ID)
	}
	return nil
}

func oneKey(r dbsqlc.ApiKey, err error) (*store.Key, error) {
	if err != nil {
		return nil, err
	}
	return apiKey(r)
}

func keys(rows []dbsqlc.ApiKey) ([]*store.Key, error) {
	out := make([]*store.Key, len(rows))
	for i, r := range rows {
		k, err := apiKey(r)
		if err != nil {
			return nil, err
		}
		out[i] = k
	}
	return out, nil
}

// apiKey converts a row, decoding its JSON lists and the person's TEXT id.
func apiKey(r dbsqlc.ApiKey) (*store.Key, error) {
	k := &store.Key{
		ID: r.ID, Kind: store.KeyKind(r.Kind), Lookup: r.Lookup, SecretHash: r.SecretHash,
		ParentID: nullUUID(r.ParentID), Label: r.Label, CreatedAt: fromMicros(r.CreatedAt),
		ExpiresAt: nullMicros(r.ExpiresAt), RevokedAt: nullMicros(r.RevokedAt),
		LastUsedAt: nullMicros(r.LastUsedAt), LastIP: r.LastIp, LastUserAgent: r.LastUserAgent,
	}
	if err := json.Unmarshal([]byte(r.Agents), &k.Agents); err != nil {
		return nil, fmt.Errorf("decoding agents of key %s: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.WorkspaceIds), &k.Workspaces); err != nil {
		return nil, fmt.Errorf("decoding workspaces of key %s: %w", r.ID, err)
	}
	if r.PersonID.Valid {
		id := r.PersonID.UUID
		k.PersonID = &id
	}
	return k, nil
}
