package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) KeyCreate(ctx context.Context, p *store.KeyCreateParams) (*store.Key, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).KeyCreate, &dbsqlc.KeyCreateParams{
		ID: p.ID, Kind: string(p.Kind), Lookup: p.Lookup, SecretHash: p.SecretHash,
		Agents: p.Agents, PersonID: p.PersonID, WorkspaceIds: uuidStrings(p.Workspaces), ParentID: p.ParentID,
		Label: p.Label, Now: ts(p.Now), ExpiresAt: tsPtr(p.ExpiresAt),
	})
	if err != nil {
		return nil, wrap(err, "creating %s key", p.Kind)
	}
	return apiKey(&row), nil
}

func (q *queries) KeyFind(ctx context.Context, lookup string) (*store.Key, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).KeyFind, lookup)
	if err != nil {
		return nil, wrap(err, "finding key %s", lookup)
	}
	return apiKey(&row), nil
}

func (q *queries) KeyGet(ctx context.Context, id uuid.UUID) (*store.Key, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).KeyGet, id)
	if err != nil {
		return nil, wrap(err, "getting key %s", id)
	}
	return apiKey(&row), nil
}

func (q *queries) KeyList(ctx context.Context, p *store.KeyListParams) ([]*store.Key, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).KeyList, &dbsqlc.KeyListParams{
		Kind: string(p.Kind), IncludeRevoked: p.IncludeRevoked, PersonIds: uuidStrings(p.PersonIDs), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing keys")
	}
	return each(rows, apiKey), nil
}

func (q *queries) KeyRevoke(ctx context.Context, p *store.KeyRevokeParams) (*store.Key, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).KeyRevoke, &dbsqlc.KeyRevokeParams{ID: p.ID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "revoking key %s", p.ID)
	}
	for i := range rows {
		if rows[i].ID == p.ID {
			return apiKey(&rows[i]), nil
		}
	}
	return nil, wrap(errNoRow, "revoking key %s", p.ID)
}

func (q *queries) KeyPruneSessions(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).KeyPruneSessions, &dbsqlc.KeyPruneSessionsParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	return int(n), wrap(err, "pruning sessions expired before %s", p.Before)
}

func (q *queries) KeyTouch(ctx context.Context, p *store.TouchParams) error {
	err := exec(ctx, q, (*dbsqlc.Queries).KeyTouch, &dbsqlc.KeyTouchParams{
		ID: p.ID, Now: ts(p.Now), Ip: p.IP, UserAgent: p.UserAgent, UsedBefore: ts(p.Now.Add(-p.Every)),
	})
	return wrap(err, "recording the use of key %s", p.ID)
}

func apiKey(r *dbsqlc.ApiKey) *store.Key {
	return &store.Key{
		ID:         r.ID,
		Kind:       store.KeyKind(r.Kind),
		Lookup:     r.Lookup,
		SecretHash: r.SecretHash,
		Agents:     r.Agents,
		PersonID:   r.PersonID,
		Workspaces: r.WorkspaceIds,
		ParentID:   r.ParentID,
		Label:      r.Label,
		CreatedAt:  r.CreatedAt,
		ExpiresAt:  r.ExpiresAt,
		RevokedAt:  r.RevokedAt,

		LastUsedAt:    r.LastUsedAt,
		LastIP:        r.LastIp,
		LastUserAgent: r.LastUserAgent,
	}
}

// uuidStrings passes ids as text[]: pgx has no plan for a slice of
// uuid.UUID under the simple protocol.
func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}
