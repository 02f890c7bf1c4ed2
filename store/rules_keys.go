package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// The rules of the credentials (see keys.go).

func (q checked) KeyCreate(ctx context.Context, p *KeyCreateParams) (*Key, error) {
	if p == nil {
		return nil, invalidf("creating key: params are nil")
	}
	k := *p
	if err := keyCheck(&k); err != nil {
		return nil, fmt.Errorf("creating %s key: %w", k.Kind, err)
	}
	if k.ID == uuid.Nil {
		k.ID = newID()
	}
	k.Now = q.at(k.Now)
	if k.Agents == nil {
		k.Agents = []string{}
	}
	if k.Workspaces == nil {
		k.Workspaces = []uuid.UUID{}
	}
	return q.Queries.KeyCreate(ctx, &k)
}

func keyCheck(k *KeyCreateParams) error {
	switch {
	case !k.Kind.Valid():
		return invalidf("unknown kind %q", k.Kind)
	case k.Lookup == "":
		return invalidf("empty Lookup")
	case len(k.SecretHash) != 32:
		return invalidf("SecretHash must be a SHA-256 (32 bytes), got %d", len(k.SecretHash))
	case slices.Contains(k.Agents, ""):
		return invalidf("empty agent name in Agents")
	case slices.Contains(k.Workspaces, uuid.Nil):
		return invalidf("nil workspace id in Workspaces")
	}
	switch k.Kind {
	case KeyAgent, KeySession:
		if len(k.Agents) != 1 {
			return invalidf("a %s key names exactly one agent, got %d", k.Kind, len(k.Agents))
		}
	case KeyHost:
		if len(k.Agents) == 0 {
			return invalidf("a host token names at least one agent")
		}
	case KeyPersonal:
		if k.PersonID == nil || *k.PersonID == uuid.Nil {
			return invalidf("a personal token needs PersonID")
		}
	}
	if k.Kind == KeySession && (k.ParentID == nil || k.ExpiresAt == nil) {
		return invalidf("a session needs ParentID and ExpiresAt")
	}
	if k.Kind != KeySession && k.ParentID != nil {
		return invalidf("only a session has a ParentID")
	}
	return nil
}

func (q checked) KeyFind(ctx context.Context, lookup string) (*Key, error) {
	if lookup == "" {
		return nil, invalidf("finding key: empty lookup")
	}
	return q.Queries.KeyFind(ctx, lookup)
}

func (q checked) KeyList(ctx context.Context, p *KeyListParams) ([]*Key, error) {
	var l KeyListParams
	if p != nil {
		l = *p
	}
	if l.Kind != "" && (!l.Kind.Valid() || l.Kind == KeySession) {
		return nil, invalidf("listing keys: kind %q cannot be listed", l.Kind)
	}
	l.Limit = limitOr(l.Limit, DefaultListLimit)
	return q.Queries.KeyList(ctx, &l)
}

func (q checked) KeyRevoke(ctx context.Context, p *KeyRevokeParams) (*Key, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("revoking key: no id")
	}
	r := *p
	r.Now = q.at(r.Now)
	return q.Queries.KeyRevoke(ctx, &r)
}

func (q checked) KeyPruneSessions(ctx context.Context, p *PruneParams) (int, error) {
	c, err := q.prune("expired sessions", p)
	if err != nil {
		return 0, err
	}
	return q.Queries.KeyPruneSessions(ctx, c)
}
