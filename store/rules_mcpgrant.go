package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

func checkMCPGrantKey(k *MCPGrantKey) error {
	if k == nil || strings.TrimSpace(k.Server) == "" {
		return invalidf("empty Server")
	}
	return nil
}

func (q checked) MCPGrantGet(ctx context.Context, k *MCPGrantKey) (*MCPGrant, error) {
	if err := checkMCPGrantKey(k); err != nil {
		return nil, fmt.Errorf("reading an MCP OAuth grant: %w", err)
	}
	return q.Queries.MCPGrantGet(ctx, k)
}

func (q checked) checkMCPGrantPut(p *MCPGrantPutParams) (*MCPGrantPutParams, error) {
	if p == nil {
		return nil, invalidf("no params")
	}
	if err := checkMCPGrantKey(&p.MCPGrantKey); err != nil {
		return nil, err
	}
	if err := checkSealed("SealedGrant", p.SealedGrant); err != nil {
		return nil, fmt.Errorf("the grant of MCP server %s: %w", p.MCPGrantKey, err)
	}
	c := *p
	c.Now = q.at(c.Now)
	return &c, nil
}

func (q checked) MCPGrantPut(ctx context.Context, p *MCPGrantPutParams) (*MCPGrant, error) {
	c, err := q.checkMCPGrantPut(p)
	if err != nil {
		return nil, fmt.Errorf("storing an MCP OAuth grant: %w", err)
	}
	return q.Queries.MCPGrantPut(ctx, c)
}

func (q checked) MCPGrantCreate(ctx context.Context, p *MCPGrantPutParams) (*MCPGrant, error) {
	c, err := q.checkMCPGrantPut(p)
	if err != nil {
		return nil, fmt.Errorf("creating an MCP OAuth grant: %w", err)
	}
	return q.Queries.MCPGrantCreate(ctx, c)
}

func (q checked) MCPGrantSwap(ctx context.Context, p *MCPGrantSwapParams) (*MCPGrant, error) {
	if p == nil {
		return nil, fmt.Errorf("replacing an MCP OAuth grant: %w", invalidf("no params"))
	}
	if err := checkMCPGrantKey(&p.MCPGrantKey); err != nil {
		return nil, fmt.Errorf("replacing an MCP OAuth grant: %w", err)
	}
	what := "replacing the OAuth grant of MCP server " + p.MCPGrantKey.String()
	if p.Expect <= 0 {
		return nil, fmt.Errorf("%s: %w", what, invalidf("Expect %d must be a version read before (1 or more)", p.Expect))
	}
	if err := checkSealed("SealedGrant", p.SealedGrant); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	c := *p
	c.Now = q.at(c.Now)
	out, err := q.Queries.MCPGrantSwap(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		// No row back: the grant is gone (ErrNotFound), or another
		// instance replaced it since the caller read it.
		if _, gerr := q.Queries.MCPGrantGet(ctx, &p.MCPGrantKey); gerr == nil {
			return nil, fmt.Errorf("%s: %w: it changed since it was read (version %d)", what, ErrConflict, p.Expect)
		}
	}
	return out, err
}

func (q checked) MCPGrantDelete(ctx context.Context, k *MCPGrantKey) error {
	if err := checkMCPGrantKey(k); err != nil {
		return fmt.Errorf("removing an MCP OAuth grant: %w", err)
	}
	return q.Queries.MCPGrantDelete(ctx, k)
}
