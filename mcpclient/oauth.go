package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/secret"
)

// OAuth is a server's "oauth" entry: the server is reached with OAuth 2.1
// access tokens (authorization code with PKCE). The authorization server
// is discovered from the server's 401 (protected resource metadata, then
// authorization server metadata). The client is, in order: the client id
// metadata document of Options.OAuth.ClientMetadataURL when the
// authorization server supports it, the pre-registered ClientID, or one
// registered dynamically.
type OAuth struct {
	// ClientID and ClientSecret of a client registered with the server's
	// authorization server beforehand (optional; ${VAR} is expanded).
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// Scopes, when set, are the scopes requested instead of the ones the
	// server names in its challenge or metadata.
	Scopes []string `json:"scopes,omitempty"`
}

// AuthorizeFunc takes a person (or, in the conformance harness, the
// authorization server's immediate redirect) through the server's
// authorization URL and returns the code and state the redirect URL
// received. It calls req.Waiting once it is ready for the redirect: the
// Manager then shows the URL in the status. Callbacks.Authorize is the
// service's.
type AuthorizeFunc func(ctx context.Context, req AuthorizeRequest) (*auth.AuthorizationResult, error)

// AuthorizeRequest is one authorization to obtain.
type AuthorizeRequest struct {
	Server  string // the server's name in mcp-servers.json
	URL     string // the authorization URL to open
	Waiting func() // call once the redirect can be received
}

// Grant is what is kept of a server's authorization: the token and what
// refreshes it (the token endpoint and the client), so that a restart
// refreshes rather than asks a person again.
type Grant struct {
	Token        *oauth2.Token    `json:"token"`
	TokenURL     string           `json:"token_url,omitempty"`
	ClientID     string           `json:"client_id,omitempty"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
}

// TokenStore keeps a server's grant between runs. Implementations must
// keep it encrypted at rest (SealedTokens).
type TokenStore interface {
	// Load returns the stored grant, or nil when there is none.
	Load(ctx context.Context, server string) (*Grant, error)
	Save(ctx context.Context, server string, g *Grant) error
}

// OAuthOptions is how the Manager authorizes servers that have an "oauth"
// entry.
type OAuthOptions struct {
	// RedirectURL is where the authorization server sends the person back
	// (Switchboard's callback); required.
	RedirectURL string
	// Authorize follows the authorization URL; required.
	Authorize AuthorizeFunc
	// Tokens keeps the tokens (refreshed ones included); required.
	Tokens TokenStore
	// ClientMetadataURL is an https URL serving Switchboard's OAuth client
	// id metadata document (ClientMetadataHandler), used where the
	// authorization server accepts one (optional).
	ClientMetadataURL string
	// Wait bounds how long a connection attempt waits for a person to
	// authorize (default 15m).
	Wait time.Duration
}

// ErrNoOAuth: a server has "oauth" but the Manager has no OAuthOptions, so
// it cannot be authorized (the attempt fails with this error).
var ErrNoOAuth = errors.New("it has oauth, which needs Switchboard's OAuth callback: set SWITCHBOARD_PUBLIC_URL and SWITCHBOARD_SECRET_KEY")

// NeedsOAuth lists the enabled servers with an "oauth" entry.
func (c *Config) NeedsOAuth() []string {
	var out []string
	for _, name := range c.Names() {
		if s := c.Servers[name]; s.OAuth != nil && !s.Disabled {
			out = append(out, name)
		}
	}
	return out
}

func (o *OAuthOptions) validate() error {
	switch {
	case o.RedirectURL == "":
		return errors.New("mcpclient: Options.OAuth.RedirectURL is required")
	case o.Authorize == nil:
		return errors.New("mcpclient: Options.OAuth.Authorize is required")
	case o.Tokens == nil:
		return errors.New("mcpclient: Options.OAuth.Tokens is required")
	case o.Wait < 0:
		return fmt.Errorf("mcpclient: Options.OAuth.Wait %s must not be negative", o.Wait)
	}
	if u, err := url.Parse(o.RedirectURL); err != nil || u.Host == "" {
		return fmt.Errorf("mcpclient: Options.OAuth.RedirectURL %q must be an absolute URL", o.RedirectURL)
	}
	return nil
}

// oauthHandler builds the SDK's authorization code handler for s, starting
// from the stored token; every token it obtains or refreshes is saved.
func (s *server) oauthHandler(ctx context.Context) (auth.OAuthHandler, error) {
	o := s.m.opts.OAuth
	if o == nil {
		return nil, fmt.Errorf("MCP server %s: %w", s.cfg.Name, ErrNoOAuth)
	}
	name := s.cfg.Name
	save := func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) error {
		g := &Grant{Token: tok, TokenURL: c.Endpoint.TokenURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthStyle: c.Endpoint.AuthStyle}
		if err := o.Tokens.Save(ctx, name, g); err != nil {
			return fmt.Errorf("saving the OAuth token of MCP server %s: %w", name, err)
		}
		return nil
	}
	hctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, s.m.opts.HTTPClient)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              o.RedirectURL,
		AuthorizationCodeFetcher: s.authorize,
		RequestRefreshToken:      true,
		Client:                   s.m.opts.HTTPClient,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			if err := save(ctx, c, tok); err != nil {
				return nil, err
			}
			return &savingSource{base: c.TokenSource(hctx, tok), save: save, cfg: c, last: tok.AccessToken}, nil
		},
	}
	oc := s.cfg.OAuth
	if oc.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: oc.ClientID}
		if oc.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: oc.ClientSecret}
		}
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:   "Switchboard",
			RedirectURIs: []string{o.RedirectURL},
			GrantTypes:   []string{"authorization_code", "refresh_token"},
		}}
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if len(oc.Scopes) > 0 {
		scopes := slices.Clone(oc.Scopes)
		cfg.ScopeFilter = func([]string) []string { return slices.Clone(scopes) }
	}
	g, err := o.Tokens.Load(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("loading the OAuth token of MCP server %s: %w", name, err)
	}
	if g != nil && g.Token != nil {
		// The stored grant refreshes itself; if the server still answers
		// 401 (a revoked grant), a new authorization starts.
		c := &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret, Endpoint: oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: g.AuthStyle}}
		cfg.InitialTokenSource = &savingSource{base: c.TokenSource(hctx, g.Token), save: save, cfg: c, last: g.Token.AccessToken}
		redact.AddSecrets(g.Token.AccessToken, g.Token.RefreshToken, g.ClientSecret)
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: oauth: %w", name, err)
	}
	return h, nil
}

// authorize is the handler's code fetcher: once Options.OAuth.Authorize
// waits for the redirect, it shows the authorization URL in the status and
// lets Start go on.
func (s *server) authorize(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	var once sync.Once
	waiting := func() {
		once.Do(func() {
			s.mu.Lock()
			s.state, s.authURL, s.err, s.since = StateAuthorizing, args.URL, "", s.m.opts.Now()
			done := s.firstDone
			s.mu.Unlock()
			s.log.WarnContext(ctx, "MCP server needs OAuth authorization: open the URL", "authorize_url", args.URL)
			if done != nil {
				done()
			}
		})
	}
	defer func() {
		s.mu.Lock()
		s.authURL = ""
		s.mu.Unlock()
	}()
	return s.m.opts.OAuth.Authorize(ctx, AuthorizeRequest{Server: s.cfg.Name, URL: args.URL, Waiting: waiting})
}

// savingSource saves every new token its base source hands out (a
// refresh), so a restart starts from the newest one.
type savingSource struct {
	base oauth2.TokenSource
	save func(context.Context, *oauth2.Config, *oauth2.Token) error
	cfg  *oauth2.Config

	mu   sync.Mutex
	last string
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	tok, err := s.base.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.last {
		redact.AddSecrets(tok.AccessToken, tok.RefreshToken)
		if err := s.save(context.Background(), s.cfg, tok); err != nil {
			return nil, err
		}
		s.last = tok.AccessToken
	}
	return tok, nil
}

// SealedTokens keeps each server's token in a file of Dir, sealed with the
// secret keyring (bound to the server's name, so a file copied onto another
// server does not open): neither the disk nor a backup holds a token in
// clear text.
type SealedTokens struct {
	Dir  string
	Keys *secret.Keyring

	mu sync.Mutex
}

func (t *SealedTokens) path(server string) string {
	return filepath.Join(t.Dir, "mcp-oauth-"+server+".sealed")
}

func tokenAAD(server string) string { return "mcp_oauth_token:" + server }

// Load opens the server's grant; nil when none is stored.
func (t *SealedTokens) Load(_ context.Context, server string) (*Grant, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, err := os.ReadFile(t.path(server))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the OAuth token: %w", err)
	}
	plain, err := t.Keys.Open(secret.Sealed(b), tokenAAD(server))
	if err != nil {
		return nil, fmt.Errorf("opening the OAuth token of %s: %w", server, err)
	}
	var g Grant
	if err := json.Unmarshal(plain, &g); err != nil {
		return nil, fmt.Errorf("decoding the OAuth token of %s: %w", server, err)
	}
	return &g, nil
}

// Save seals and writes the server's grant (atomically).
func (t *SealedTokens) Save(_ context.Context, server string, g *Grant) error {
	plain, err := json.Marshal(g)
	if err != nil {
		return err
	}
	sealed, err := t.Keys.Seal(plain, tokenAAD(server))
	if err != nil {
		return fmt.Errorf("refusing to store the OAuth token of MCP server %s: %w", server, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := os.MkdirAll(t.Dir, 0o700); err != nil {
		return fmt.Errorf("storing the OAuth token: %w", err)
	}
	tmp := t.path(server) + ".tmp"
	if err := os.WriteFile(tmp, []byte(sealed), 0o600); err != nil {
		return fmt.Errorf("storing the OAuth token: %w", err)
	}
	if err := os.Rename(tmp, t.path(server)); err != nil {
		return fmt.Errorf("storing the OAuth token: %w", err)
	}
	return nil
}

// The answers to a server's elicitation requests (Server.Elicitation).
const (
	// ElicitDecline declares no elicitation capability: nobody is there to
	// fill in a form, so the server is not offered one.
	ElicitDecline = "decline"
	// ElicitDefaults accepts a form whose every required field has a
	// default, with the defaults (the SDK fills them in); any other form,
	// and every URL elicitation, is declined.
	ElicitDefaults = "defaults"
)

// elicitHandler is the session's elicitation handler, nil (no capability)
// unless the server's entry asks for defaults.
func (s *server) elicitHandler() func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if s.cfg.Elicitation != ElicitDefaults {
		return nil
	}
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		content, ok := formDefaults(req.Params.RequestedSchema)
		if req.Params.Mode == "url" || !ok {
			s.log.InfoContext(ctx, "MCP elicitation declined: a required field has no default", "message", req.Params.Message)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		s.log.InfoContext(ctx, "MCP elicitation accepted with its defaults", "message", req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
}

// formDefaults is the content of an elicitation form filled with the
// defaults its schema declares; false when a required field has none.
func formDefaults(schema any) (map[string]any, bool) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, false
	}
	var sc struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		return nil, false
	}
	out := map[string]any{}
	for name, p := range sc.Properties {
		if p.Default != nil {
			out[name] = p.Default
		}
	}
	for _, r := range sc.Required {
		if _, ok := out[r]; !ok {
			return nil, false
		}
	}
	return out, true
}
