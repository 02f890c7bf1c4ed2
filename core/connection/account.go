package connection

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Accounts hands a tool call the account it acts with: an HTTP client
// sending its token, and the provider's API base URL ("" for the real
// one). *Manager implements it; the tool packages take it.
type Accounts interface {
	ClientFor(ctx context.Context, provider store.ConnectionProvider, req *tool.Request) (*http.Client, *store.Connection, error)
	APIURL(provider store.ConnectionProvider) string
}

var _ Accounts = (*Manager)(nil)

// Resolve finds the account a tool call acts with at provider: the
// speaking person's own connection, else the conversation's workspace's.
// The agent plays no part. When there is neither, the error wraps
// ErrNotConnected and says how to connect.
func (m *Manager) Resolve(ctx context.Context, provider store.ConnectionProvider, req *tool.Request) (*store.Connection, error) {
	p, ok := m.providers[provider]
	if !ok {
		return nil, fmt.Errorf("%w: %s is not set up on this server (the operator sets its client id and secret)", ErrUnknownProvider, provider)
	}
	var owners []store.ConnectionOwner
	if req.Speaker != nil {
		owners = append(owners, store.PersonOwner(*req.Speaker))
	}
	if req.WorkspaceID != nil {
		owners = append(owners, store.WorkspaceOwner(*req.WorkspaceID))
	}
	for _, o := range owners {
		c, err := m.o.Store.ConnectionFind(ctx, &store.ConnectionFindParams{Provider: provider, Owner: o})
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	return nil, m.notConnected(p)
}

// notConnected says how to connect. It holds no start link: the model may
// post it in a channel, where someone else could open a link made for the
// speaker first and put their own account in the speaker's place. Links
// are given in a direct message (!connections connect).
func (m *Manager) notConnected(p *Provider) error {
	return fmt.Errorf("%w: no %s account is connected for the person speaking or for this workspace. "+
		"To connect theirs, the person sends me `!connections connect %s` in a direct message and opens the link it gives "+
		"(the flow starts at %s/connections/%s/start); a workspace admin connects one for the whole workspace with `!connections connect %s workspace`",
		ErrNotConnected, p.Title, p.Name, m.o.PublicURL, p.Name, p.Name)
}

// Client is an HTTP client that sends the connection's access token,
// refreshing it (and storing the new one) when it is within RefreshEarly
// of its expiry.
func (m *Manager) Client(ctx context.Context, c *store.Connection) (*http.Client, error) {
	p, ok := m.providers[c.Provider]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownProvider, c.Provider)
	}
	tok, err := m.open(c)
	if err != nil {
		return nil, err
	}
	hctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, m.o.HTTPClient)
	// The base source holds only the refresh token, so it refreshes
	// whenever asked: the reuse source around it decides when (early).
	base := p.OAuth.TokenSource(hctx, &oauth2.Token{RefreshToken: tok.RefreshToken})
	src := &savingSource{m: m, conn: c, last: tok.AccessToken, base: base}
	client := oauth2.NewClient(hctx, oauth2.ReuseTokenSourceWithExpiry(tok, src, RefreshEarly))
	client.Timeout = m.o.HTTPClient.Timeout
	return client, nil
}

// ClientFor resolves the account of a call (Resolve) and returns a client
// acting as it.
func (m *Manager) ClientFor(ctx context.Context, provider store.ConnectionProvider, req *tool.Request) (*http.Client, *store.Connection, error) {
	c, err := m.Resolve(ctx, provider, req)
	if err != nil {
		return nil, nil, err
	}
	client, err := m.Client(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return client, c, nil
}

// APIURL is a provider's API base URL override ("" for the real one).
func (m *Manager) APIURL(provider store.ConnectionProvider) string {
	if p, ok := m.providers[provider]; ok {
		return p.APIURL
	}
	return ""
}

// savingSource stores each token its base source refreshes: sealed, and
// only over the token it replaced, so of two instances refreshing at once
// the first write wins and the other takes the stored token.
type savingSource struct {
	m    *Manager
	base oauth2.TokenSource

	mu   sync.Mutex
	conn *store.Connection
	last string // the access token conn holds
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	tok, err := s.base.Token()
	if err != nil {
		return nil, fmt.Errorf("refreshing the %s token of %s (connect again if it was revoked): %w", s.conn.Provider, s.conn.Account, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken == s.last {
		return tok, nil
	}
	ctx := context.Background()
	if tok.RefreshToken == "" {
		// A provider that does not rotate refresh tokens sends none back.
		if old, err := s.m.open(s.conn); err == nil {
			tok.RefreshToken = old.RefreshToken
		}
	}
	access, refresh, err := s.m.seal(s.conn.Provider, s.conn.Owner, tok)
	if err != nil {
		return nil, err
	}
	saved, err := s.m.o.Store.ConnectionSetTokens(ctx, &store.ConnectionTokenParams{
		ID: s.conn.ID, Expect: s.conn.AccessToken, AccessToken: access, RefreshToken: refresh, Expiry: expiry(tok), Now: s.m.o.Now(),
	})
	if errors.Is(err, store.ErrConflict) {
		// Refreshed elsewhere first: use what was stored.
		cur, gerr := s.m.o.Store.ConnectionGet(ctx, s.conn.ID)
		if gerr != nil {
			return nil, gerr
		}
		stored, oerr := s.m.open(cur)
		if oerr != nil {
			return nil, oerr
		}
		s.conn, s.last = cur, stored.AccessToken
		return stored, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storing the refreshed %s token of %s: %w", s.conn.Provider, s.conn.Account, err)
	}
	s.m.log.InfoContext(ctx, "token refreshed", "provider", s.conn.Provider, "connection_id", s.conn.ID)
	s.conn, s.last = saved, tok.AccessToken
	return tok, nil
}
