package store

import (
	"context"
	"fmt"
	"regexp"

	"github.com/google/uuid"
)

// argsHashRE is a hex SHA-256, the only shape GrantCreateParams.ArgsHash and
// GrantFindParams.ArgsHash take besides "".
var argsHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (q checked) GrantCreate(ctx context.Context, p *GrantCreateParams) (*Grant, error) {
	switch {
	case p == nil:
		return nil, invalidf("creating grant: params are nil")
	case p.Agent == "" || p.Tool == "":
		return nil, invalidf("creating grant: Agent and Tool are required")
	case p.GrantedBy == "":
		return nil, fmt.Errorf("creating grant of %s to %s: %w", p.Tool, p.Agent, invalidf("empty GrantedBy"))
	case p.ArgsHash != "" && !argsHashRE.MatchString(p.ArgsHash):
		return nil, fmt.Errorf("creating grant of %s to %s: %w", p.Tool, p.Agent, invalidf("ArgsHash must be a hex SHA-256"))
	}
	c := *p
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	c.Now = q.at(c.Now)
	return q.Queries.GrantCreate(ctx, &c)
}

func (q checked) GrantFind(ctx context.Context, p *GrantFindParams) (*Grant, error) {
	switch {
	case p == nil || p.Agent == "" || p.Tool == "":
		return nil, invalidf("finding grant: Agent and Tool are required")
	case p.ArgsHash != "" && !argsHashRE.MatchString(p.ArgsHash):
		return nil, invalidf("finding grant: ArgsHash must be a hex SHA-256")
	}
	return q.Queries.GrantFind(ctx, p)
}

func (q checked) GrantList(ctx context.Context, p *GrantListParams) ([]*Grant, error) {
	c := GrantListParams{}
	if p != nil {
		c = *p
	}
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	return q.Queries.GrantList(ctx, &c)
}

func (q checked) GrantRevoke(ctx context.Context, p *GrantRevokeParams) (*Grant, error) {
	if p == nil {
		return nil, invalidf("revoking grant: params are nil")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.GrantRevoke(ctx, &c)
}
