package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/store"
)

// StoreTokens keeps the grants in the database (store.MCPGrantQueries),
// one row per server and workspace, sealed with the secret keyring and
// bound to the server and the workspace: no table or backup holds a token
// in clear text, and every instance on the database shares the grants.
type StoreTokens struct {
	Store store.MCPGrantQueries
	Keys  *secret.Keyring
	// Now is the clock of the rows' times (default time.Now).
	Now func() time.Time
}

var _ TokenStore = (*StoreTokens)(nil)

func (t *StoreTokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func storeKey(k GrantKey) store.MCPGrantKey {
	return store.MCPGrantKey{Server: k.Server, Workspace: k.Workspace}
}

// Load opens the grant; nil when none is stored.
func (t *StoreTokens) Load(ctx context.Context, k GrantKey) (*Grant, error) {
	sk := storeKey(k)
	row, err := t.Store.MCPGrantGet(ctx, &sk)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	plain, err := t.Keys.Open(secret.Sealed(row.SealedGrant), store.MCPGrantAAD(sk))
	if err != nil {
		return nil, fmt.Errorf("opening the OAuth grant of MCP server %s: %w", k, err)
	}
	var g Grant
	if err := json.Unmarshal(plain, &g); err != nil {
		return nil, fmt.Errorf("decoding the OAuth grant of MCP server %s: %w", k, err)
	}
	g.Version = row.Version
	return &g, nil
}

func (t *StoreTokens) seal(k GrantKey, g *Grant) (string, error) {
	plain, err := json.Marshal(g)
	if err != nil {
		return "", err
	}
	sealed, err := t.Keys.Seal(plain, store.MCPGrantAAD(storeKey(k)))
	if err != nil {
		return "", fmt.Errorf("refusing to store the OAuth grant of MCP server %s: %w", k, err)
	}
	return string(sealed), nil
}

// Save seals and stores the grant of a new authorization.
func (t *StoreTokens) Save(ctx context.Context, k GrantKey, g *Grant) (int64, error) {
	sealed, err := t.seal(k, g)
	if err != nil {
		return 0, err
	}
	row, err := t.Store.MCPGrantPut(ctx, &store.MCPGrantPutParams{MCPGrantKey: storeKey(k), SealedGrant: sealed, Now: t.now()})
	if err != nil {
		return 0, err
	}
	return row.Version, nil
}

// Swap seals g and stores it in place of the grant at version expect.
func (t *StoreTokens) Swap(ctx context.Context, k GrantKey, expect int64, g *Grant) (int64, error) {
	sealed, err := t.seal(k, g)
	if err != nil {
		return 0, err
	}
	row, err := t.Store.MCPGrantSwap(ctx, &store.MCPGrantSwapParams{MCPGrantKey: storeKey(k), Expect: expect, SealedGrant: sealed, Now: t.now()})
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("%w: %w", ErrGrantChanged, err)
	}
	if err != nil {
		return 0, err
	}
	return row.Version, nil
}

// Before the database kept them, grants were files in
// SWITCHBOARD_MCP_TOKEN_DIR, one per server, sealed under this additional
// data (the server's name alone).
func legacyTokenFile(dir, server string) string {
	return filepath.Join(dir, "mcp-oauth-"+server+".sealed")
}

func legacyTokenAAD(server string) string { return "mcp_oauth_token:" + server }

// ImportFiles moves the grants of the servers in keys from the sealed
// files that earlier versions kept in dir into the store, once: a file is
// imported only where the store holds no grant for the server, so a grant
// obtained or refreshed since is never replaced by an older file, and
// instances importing at once store it once. The files are left in place.
// It returns the servers imported; a file it cannot read or open is
// skipped and reported in the error (errors.Join), the others imported.
func (t *StoreTokens) ImportFiles(ctx context.Context, dir string, keys []GrantKey, log *slog.Logger) ([]GrantKey, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var done []GrantKey
	var errs []error
	for _, k := range keys {
		ok, err := t.importFile(ctx, dir, k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			log.InfoContext(ctx, "imported the MCP server's OAuth token file into the database; the file is no longer read and may be deleted",
				"server", k.Server, "workspace", k.Workspace, "file", legacyTokenFile(dir, k.Server))
			done = append(done, k)
		}
	}
	return done, errors.Join(errs...)
}

func (t *StoreTokens) importFile(ctx context.Context, dir string, k GrantKey) (bool, error) {
	path := legacyTokenFile(dir, k.Server)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the OAuth token file of MCP server %s: %w", k, err)
	}
	if g, err := t.Load(ctx, k); err != nil {
		return false, err
	} else if g != nil {
		return false, nil // the database's grant is the current one
	}
	plain, err := t.Keys.Open(secret.Sealed(b), legacyTokenAAD(k.Server))
	if err != nil {
		return false, fmt.Errorf("opening the OAuth token file %s of MCP server %s: %w", path, k, err)
	}
	var g Grant
	if err := json.Unmarshal(plain, &g); err != nil {
		return false, fmt.Errorf("decoding the OAuth token file %s of MCP server %s: %w", path, k, err)
	}
	sealed, err := t.seal(k, &g)
	if err != nil {
		return false, err
	}
	_, err = t.Store.MCPGrantCreate(ctx, &store.MCPGrantPutParams{MCPGrantKey: storeKey(k), SealedGrant: sealed, Now: t.now()})
	if errors.Is(err, store.ErrConflict) {
		return false, nil // another instance imported it, or a person signed in, meanwhile
	}
	return err == nil, err
}
