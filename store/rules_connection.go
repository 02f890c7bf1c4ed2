package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
)

func checkConnectionKey(p ConnectionProvider, o ConnectionOwner) error {
	if !p.Valid() {
		return invalidf("Provider %q must be github or google", p)
	}
	if !o.Valid() {
		return invalidf("Owner must name exactly one of a person and a workspace")
	}
	if (o.PersonID != nil && *o.PersonID == uuid.Nil) || (o.WorkspaceID != nil && *o.WorkspaceID == uuid.Nil) {
		return invalidf("Owner names the nil id")
	}
	return nil
}

func (q checked) ConnectionSave(ctx context.Context, p *ConnectionSaveParams) (*Connection, error) {
	if p == nil {
		return nil, fmt.Errorf("saving a connection: %w", invalidf("no params"))
	}
	if err := checkConnectionKey(p.Provider, p.Owner); err != nil {
		return nil, fmt.Errorf("saving a connection: %w", err)
	}
	what := fmt.Sprintf("saving the %s connection of %s", p.Provider, p.Owner)
	switch {
	case strings.TrimSpace(p.Account) == "":
		return nil, fmt.Errorf("%s: %w", what, invalidf("empty Account"))
	case p.ConnectedBy == uuid.Nil:
		return nil, fmt.Errorf("%s: %w", what, invalidf("empty ConnectedBy"))
	}
	if err := checkSealed("AccessToken", p.AccessToken); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if p.RefreshToken != "" {
		if err := checkSealed("RefreshToken", p.RefreshToken); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	c := *p
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	c.Scopes = slices.DeleteFunc(slices.Clone(c.Scopes), func(s string) bool { return strings.TrimSpace(s) == "" })
	if c.Scopes == nil {
		c.Scopes = []string{}
	}
	c.Now = q.at(c.Now)
	return q.Queries.ConnectionSave(ctx, &c)
}

func (q checked) ConnectionGet(ctx context.Context, id uuid.UUID) (*Connection, error) {
	if id == uuid.Nil {
		return nil, fmt.Errorf("reading a connection: %w", invalidf("empty id"))
	}
	return q.Queries.ConnectionGet(ctx, id)
}

func (q checked) ConnectionFind(ctx context.Context, p *ConnectionFindParams) (*Connection, error) {
	if p == nil {
		return nil, fmt.Errorf("finding a connection: %w", invalidf("no params"))
	}
	if err := checkConnectionKey(p.Provider, p.Owner); err != nil {
		return nil, fmt.Errorf("finding a connection: %w", err)
	}
	return q.Queries.ConnectionFind(ctx, p)
}

func (q checked) ConnectionList(ctx context.Context, p *ConnectionListParams) ([]*Connection, error) {
	var c ConnectionListParams
	if p != nil {
		c = *p
	}
	if c.Limit < 0 {
		return nil, fmt.Errorf("listing connections: %w", invalidf("negative Limit"))
	}
	if c.Owner != nil && !c.Owner.Valid() {
		return nil, fmt.Errorf("listing connections: %w", invalidf("Owner must name exactly one of a person and a workspace"))
	}
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	return q.Queries.ConnectionList(ctx, &c)
}

func (q checked) ConnectionSetTokens(ctx context.Context, p *ConnectionTokenParams) (*Connection, error) {
	if p == nil || p.ID == uuid.Nil {
		return nil, fmt.Errorf("replacing a connection's tokens: %w", invalidf("empty ID"))
	}
	for field, v := range map[string]string{"Expect": p.Expect, "AccessToken": p.AccessToken} {
		if err := checkSealed(field, v); err != nil {
			return nil, fmt.Errorf("replacing the tokens of connection %s: %w", p.ID, err)
		}
	}
	if p.RefreshToken != "" {
		if err := checkSealed("RefreshToken", p.RefreshToken); err != nil {
			return nil, fmt.Errorf("replacing the tokens of connection %s: %w", p.ID, err)
		}
	}
	c := *p
	c.Now = q.at(c.Now)
	out, err := q.Queries.ConnectionSetTokens(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		// No row back: the connection is gone (ErrNotFound), or its token
		// changed since the caller read it.
		if _, gerr := q.Queries.ConnectionGet(ctx, p.ID); gerr == nil {
			return nil, fmt.Errorf("replacing the tokens of connection %s: %w: the token changed since it was read", p.ID, ErrConflict)
		}
	}
	return out, err
}

func (q checked) ConnectionDelete(ctx context.Context, id uuid.UUID) error {
	if id == uuid.Nil {
		return fmt.Errorf("removing a connection: %w", invalidf("empty id"))
	}
	return q.Queries.ConnectionDelete(ctx, id)
}
