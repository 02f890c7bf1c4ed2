package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/redact"
)

// Grant is what is kept of a server's authorization: the token and what
// refreshes it (the token endpoint and the client, registered dynamically
// or not), so that a restart, or another instance, refreshes rather than
// asks a person again.
type Grant struct {
	Token        *oauth2.Token    `json:"token"`
	TokenURL     string           `json:"token_url,omitempty"`
	ClientID     string           `json:"client_id,omitempty"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`

	// Version is the store's count of writes of this grant when it was
	// read (TokenStore.Load); Swap replaces the grant only at it.
	Version int64 `json:"-"`
}

func (g *Grant) config() *oauth2.Config {
	return &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret, Endpoint: oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: g.AuthStyle}}
}

// GrantKey names a server's grant: its name in mcp-servers.json and its
// "workspace" ("" when the entry names none).
type GrantKey struct {
	Server    string
	Workspace string
}

func (k GrantKey) String() string {
	if k.Workspace == "" {
		return k.Server
	}
	return k.Server + " (workspace " + k.Workspace + ")"
}

// ErrGrantChanged: TokenStore.Swap found the stored grant no longer at the
// version read (another instance refreshed it, or a person signed in).
var ErrGrantChanged = errors.New("mcpclient: the stored OAuth grant changed since it was read")

// TokenStore keeps the servers' grants between runs and shares them
// between the instances that use it. Implementations must keep them
// encrypted at rest (StoreTokens).
type TokenStore interface {
	// Load returns the stored grant with its Version, or nil when there is
	// none.
	Load(ctx context.Context, k GrantKey) (*Grant, error)
	// Save stores the grant of a new authorization in place of any, and
	// returns its version.
	Save(ctx context.Context, k GrantKey, g *Grant) (int64, error)
	// Swap replaces the grant stored at version expect with g (a refresh)
	// and returns the new version; ErrGrantChanged when the stored grant
	// is no longer at expect, and is left as it is.
	Swap(ctx context.Context, k GrantKey, expect int64, g *Grant) (int64, error)
}

// sharedHandler is a server's OAuth handler. Its token source is the grant
// in the token store (sharedSource). Before it asks a person to sign in
// (signIn, the SDK's authorization code handler) it looks in the store for
// a grant other than the one refused, and while a person is asked it keeps
// watching the store: a grant another instance obtained ends the wait, and
// this instance uses it.
type sharedHandler struct {
	signIn *auth.AuthorizationCodeHandler
	src    *sharedSource
	poll   time.Duration
}

var _ auth.OAuthHandler = (*sharedHandler)(nil)

// errAuthorizedElsewhere ends a wait for a person once another instance
// stored a grant.
var errAuthorizedElsewhere = errors.New("another instance obtained a grant")

func (h *sharedHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if !h.src.has() {
		return nil, nil // the first request gets its 401, then Authorize
	}
	return h.src, nil
}

func (h *sharedHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	refused, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if resp.StatusCode == http.StatusUnauthorized {
		if ok, err := h.src.recover(ctx, refused); ok || err != nil {
			resp.Body.Close()
			return err
		}
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go h.watch(actx, cancel)
	err := h.signIn.Authorize(actx, req, resp)
	if err != nil && errors.Is(context.Cause(actx), errAuthorizedElsewhere) && ctx.Err() == nil {
		if ok, rerr := h.src.recover(ctx, refused); ok {
			h.src.log.InfoContext(ctx, "MCP server authorized on another instance: using its grant")
			return nil
		} else if rerr != nil {
			return rerr
		}
	}
	return err
}

// watch cancels a sign-in once the store holds a grant this instance did
// not obtain or hold.
func (h *sharedHandler) watch(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(h.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g, err := h.src.tokens.Load(ctx, h.src.key)
		if err != nil || g == nil || g.Token == nil || h.src.holds(g.Version) {
			continue
		}
		cancel(errAuthorizedElsewhere)
		return
	}
}

// sharedSource hands out the token of the grant in the store. A refresh
// reads the store first (another instance may have refreshed already) and
// then replaces the grant only at the version it read: of two instances
// refreshing at once one wins, and the other takes the winner's grant, so
// neither keeps a token or refresh token the other made stale.
type sharedSource struct {
	key    GrantKey
	tokens TokenStore
	hctx   context.Context // carries the HTTP client for the token endpoint
	log    *slog.Logger
	wait   time.Duration // see OAuthOptions.RefreshWait

	mu  sync.Mutex
	cur *Grant // nil until a grant is stored or read
}

func (s *sharedSource) has() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil
}

// holds reports whether the grant in use is at version v.
func (s *sharedSource) holds(v int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil && s.cur.Version == v
}

func (s *sharedSource) adopt(g *Grant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adoptLocked(g)
}

func (s *sharedSource) adoptLocked(g *Grant) {
	redact.AddSecrets(g.Token.AccessToken, g.Token.RefreshToken, g.ClientSecret)
	s.cur = g
}

// signedIn stores the grant a person just gave, in place of any.
func (s *sharedSource) signedIn(ctx context.Context, g *Grant) error {
	redact.AddSecrets(g.Token.AccessToken, g.Token.RefreshToken, g.ClientSecret)
	v, err := s.tokens.Save(ctx, s.key, g)
	if err != nil {
		return fmt.Errorf("saving the OAuth token of MCP server %s: %w", s.key, err)
	}
	c := *g
	c.Version = v
	s.adopt(&c)
	return nil
}

// Token is the access token, refreshed once it expired.
func (s *sharedSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil, fmt.Errorf("MCP server %s has no OAuth grant", s.key)
	}
	if s.cur.Token.Valid() {
		return s.cur.Token, nil
	}
	ctx, cancel := context.WithTimeout(s.hctx, s.wait+time.Minute)
	defer cancel()
	return s.renewLocked(ctx, s.cur.Token.AccessToken)
}

// recover finds a token other than refused, which the server turned
// down, without a person: the store's, when another instance signed in or
// refreshed meanwhile (a refresh may retire the access token it replaced).
// False when the store holds none other: a person must sign in.
func (s *sharedSource) recover(ctx context.Context, refused string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.tokens.Load(ctx, s.key)
	if err != nil {
		return false, fmt.Errorf("loading the OAuth token of MCP server %s: %w", s.key, err)
	}
	if g == nil || g.Token == nil || g.Token.AccessToken == refused {
		return false, nil
	}
	s.adoptLocked(g)
	return true, nil
}

// renewLocked replaces the grant whose access token stale no longer
// serves: with the store's when another instance replaced it, else with a
// refresh stored at the version read.
func (s *sharedSource) renewLocked(ctx context.Context, stale string) (*oauth2.Token, error) {
	g, err := s.tokens.Load(ctx, s.key)
	if err != nil {
		return nil, fmt.Errorf("loading the OAuth token of MCP server %s: %w", s.key, err)
	}
	if g != nil && g.Token != nil {
		if g.Token.AccessToken != stale && g.Token.Valid() {
			s.adoptLocked(g)
			return g.Token, nil
		}
		s.adoptLocked(g) // the newest version, for the swap below
	}
	cur := s.cur
	if cur.Token.RefreshToken == "" {
		return nil, fmt.Errorf("the OAuth token of MCP server %s expired and there is no refresh token", s.key)
	}
	tok, err := cur.config().TokenSource(ctx, &oauth2.Token{RefreshToken: cur.Token.RefreshToken}).Token()
	if err != nil {
		// Another instance may have refreshed with the same refresh token
		// a moment before: the authorization server turns this one down
		// and the winner's grant reaches the store as it commits.
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			if g := s.awaitNewer(ctx, cur.Version); g != nil {
				s.adoptLocked(g)
				return g.Token, nil
			}
		}
		return nil, fmt.Errorf("refreshing the OAuth token of MCP server %s: %w", s.key, err)
	}
	redact.AddSecrets(tok.AccessToken, tok.RefreshToken)
	next := *cur
	next.Token = tok
	v, err := s.tokens.Swap(ctx, s.key, cur.Version, &next)
	if errors.Is(err, ErrGrantChanged) {
		// Lost the race: the winner's grant is the one every instance uses.
		g, lerr := s.tokens.Load(ctx, s.key)
		if lerr == nil && g != nil && g.Token != nil {
			s.log.InfoContext(ctx, "another instance refreshed the MCP server's OAuth token at the same time: using its token")
			s.adoptLocked(g)
			return g.Token, nil
		}
		if lerr != nil {
			err = lerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("saving the refreshed OAuth token of MCP server %s: %w", s.key, err)
	}
	next.Version = v
	s.cur = &next
	return tok, nil
}

// awaitNewer polls the store for a grant past version, for up to s.wait.
func (s *sharedSource) awaitNewer(ctx context.Context, version int64) *Grant {
	ctx, cancel := context.WithTimeout(ctx, s.wait)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		g, err := s.tokens.Load(ctx, s.key)
		if err == nil && g != nil && g.Token != nil && g.Version != version {
			return g
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
