package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// The rules of single sign-on's rows (see sso.go) and of the sessions'
// and tokens' last use.

func (q checked) OIDCStateCreate(ctx context.Context, p *OIDCStateCreateParams) (*OIDCState, error) {
	switch {
	case p == nil:
		return nil, invalidf("creating OIDC state: params are nil")
	case len(p.StateHash) != 32:
		return nil, invalidf("creating OIDC state: StateHash must be a SHA-256 (32 bytes), got %d", len(p.StateHash))
	case p.Nonce == "" || p.CodeVerifier == "":
		return nil, invalidf("creating OIDC state: Nonce and CodeVerifier are required")
	case p.ExpiresAt.IsZero():
		return nil, invalidf("creating OIDC state: ExpiresAt is required")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.OIDCStateCreate(ctx, &c)
}

func (q checked) OIDCStateUse(ctx context.Context, p *OIDCStateUseParams) (*OIDCState, error) {
	if p == nil || len(p.StateHash) != 32 {
		return nil, invalidf("using OIDC state: StateHash must be 32 bytes")
	}
	c := *p
	c.Now = q.at(c.Now)
	st, err := q.Queries.OIDCStateUse(ctx, &c)
	if !errors.Is(err, ErrConflict) {
		return st, err
	}
	return nil, fmt.Errorf("using OIDC state: already used: %w", err)
}

func (q checked) OIDCStatePrune(ctx context.Context, p *PruneParams) (int, error) {
	c, err := q.prune("expired OIDC states", p)
	if err != nil {
		return 0, err
	}
	return q.Queries.OIDCStatePrune(ctx, c)
}

func (q checked) SSOGrantList(ctx context.Context, personID uuid.UUID) ([]*SSOGrant, error) {
	if personID == uuid.Nil {
		return nil, invalidf("listing SSO grants: no person")
	}
	return q.Queries.SSOGrantList(ctx, personID)
}

func (q checked) SSOGrantPut(ctx context.Context, p *SSOGrantPutParams) (*SSOGrant, error) {
	switch {
	case p == nil || p.PersonID == uuid.Nil || p.WorkspaceID == uuid.Nil:
		return nil, invalidf("recording SSO grant: PersonID and WorkspaceID are required")
	case !p.Role.Valid():
		return nil, invalidf("recording SSO grant: unknown role %q", p.Role)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.SSOGrantPut(ctx, &c)
}

func (q checked) SSOGrantDelete(ctx context.Context, p *SSOGrantDeleteParams) error {
	if p == nil || p.PersonID == uuid.Nil || p.WorkspaceID == uuid.Nil {
		return invalidf("deleting SSO grant: PersonID and WorkspaceID are required")
	}
	return q.Queries.SSOGrantDelete(ctx, p)
}

func (t *TouchParams) check(what string) (*TouchParams, error) {
	if t == nil || t.ID == uuid.Nil {
		return nil, invalidf("recording the use of a %s: no id", what)
	}
	if t.Every < 0 {
		return nil, invalidf("recording the use of %s %s: Every is negative", what, t.ID)
	}
	c := *t
	// What a client sends is bounded before it is stored.
	c.IP, c.UserAgent = clip(c.IP, 64), clip(c.UserAgent, 256)
	return &c, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func (q checked) LoginTouch(ctx context.Context, p *TouchParams) error {
	c, err := p.check("session")
	if err != nil {
		return err
	}
	c.Now = q.at(c.Now)
	return q.Queries.LoginTouch(ctx, c)
}

func (q checked) KeyTouch(ctx context.Context, p *TouchParams) error {
	c, err := p.check("key")
	if err != nil {
		return err
	}
	c.Now = q.at(c.Now)
	return q.Queries.KeyTouch(ctx, c)
}

func (q checked) LoginGet(ctx context.Context, id uuid.UUID) (*Login, error) {
	if id == uuid.Nil {
		return nil, invalidf("getting login: no id")
	}
	return q.Queries.LoginGet(ctx, id)
}

func (q checked) LoginSessions(ctx context.Context, p *LoginSessionsParams) ([]*Login, error) {
	if p == nil {
		return nil, invalidf("listing sessions: params are nil")
	}
	c := *p
	if len(c.PersonIDs) == 0 && !c.Operator && !c.All {
		return nil, invalidf("listing sessions: name PersonIDs, Operator or All")
	}
	if c.All && (len(c.PersonIDs) > 0 || c.Operator) {
		return nil, invalidf("listing sessions: All lists every session; it takes no PersonIDs or Operator")
	}
	if c.PersonIDs == nil {
		c.PersonIDs = []uuid.UUID{}
	}
	c.Now = q.at(c.Now)
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	return q.Queries.LoginSessions(ctx, &c)
}

func (q checked) LoginEnd(ctx context.Context, p *LoginEndParams) (*Login, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, invalidf("ending session: no id")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.LoginEnd(ctx, &c)
}
