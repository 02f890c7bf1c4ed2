package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// The rules of web sign-in (see login.go).

func (q checked) LoginCreate(ctx context.Context, p *LoginCreateParams) (*Login, error) {
	if p == nil {
		return nil, invalidf("creating login: params are nil")
	}
	l := *p
	switch {
	case !l.Kind.Valid():
		return nil, invalidf("creating login: unknown kind %q", l.Kind)
	case len(l.SecretHash) != 32:
		return nil, invalidf("creating %s: SecretHash must be a SHA-256 (32 bytes), got %d", l.Kind, len(l.SecretHash))
	case l.Kind == LoginLink && (l.PersonID == nil || *l.PersonID == uuid.Nil):
		return nil, invalidf("creating link: a login link needs PersonID")
	case l.ExpiresAt.IsZero():
		return nil, invalidf("creating %s: ExpiresAt is required", l.Kind)
	}
	if l.ID == uuid.Nil {
		l.ID = newID()
	}
	l.Now = q.at(l.Now)
	return q.Queries.LoginCreate(ctx, &l)
}

func (q checked) LoginFind(ctx context.Context, secretHash []byte) (*Login, error) {
	if len(secretHash) != 32 {
		return nil, invalidf("finding login: the hash must be 32 bytes, got %d", len(secretHash))
	}
	return q.Queries.LoginFind(ctx, secretHash)
}

func (q checked) LoginUse(ctx context.Context, p *LoginUseParams) (*Login, error) {
	if p == nil || len(p.SecretHash) != 32 {
		return nil, invalidf("using login: SecretHash must be 32 bytes")
	}
	u := *p
	u.Now = q.at(u.Now)
	l, err := q.Queries.LoginUse(ctx, &u)
	if !errors.Is(err, ErrNotFound) {
		return l, err
	}
	// Nothing was updated: either no such row, or it was used before.
	if _, ferr := q.Queries.LoginFind(ctx, u.SecretHash); ferr == nil {
		return nil, fmt.Errorf("using login: already used: %w", ErrConflict)
	}
	return nil, err
}

func (q checked) LoginPrune(ctx context.Context, p *PruneParams) (int, error) {
	c, err := q.prune("expired logins", p)
	if err != nil {
		return 0, err
	}
	return q.Queries.LoginPrune(ctx, c)
}
