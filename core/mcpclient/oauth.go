package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
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
	// Poll is how often a server waiting for a person looks in Tokens for
	// a grant another instance obtained meanwhile (default 2s).
	Poll time.Duration
	// RefreshWait bounds how long a refresh that the authorization server
	// refused waits for the grant of another instance that refreshed with
	// the same refresh token first (default 10s).
	RefreshWait time.Duration
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
	case o.Poll < 0:
		return fmt.Errorf("mcpclient: Options.OAuth.Poll %s must not be negative", o.Poll)
	case o.RefreshWait < 0:
		return fmt.Errorf("mcpclient: Options.OAuth.RefreshWait %s must not be negative", o.RefreshWait)
	}
	if u, err := url.Parse(o.RedirectURL); err != nil || u.Host == "" {
		return fmt.Errorf("mcpclient: Options.OAuth.RedirectURL %q must be an absolute URL", o.RedirectURL)
	}
	return nil
}

// oauthHandler builds the handler of s's OAuth: the SDK's authorization
// code handler for a sign-in, behind the grant shared through
// Options.OAuth.Tokens (see sharedHandler).
func (s *server) oauthHandler(ctx context.Context) (auth.OAuthHandler, error) {
	o := s.m.opts.OAuth
	if o == nil {
		return nil, fmt.Errorf("MCP server %s: %w", s.cfg.Name, ErrNoOAuth)
	}
	name := s.cfg.Name
	hctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, s.m.opts.HTTPClient)
	src := &sharedSource{key: s.grantKey(), tokens: o.Tokens, hctx: hctx, log: s.log, wait: o.RefreshWait}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              o.RedirectURL,
		AuthorizationCodeFetcher: s.authorize,
		RequestRefreshToken:      true,
		Client:                   s.m.opts.HTTPClient,
		// A person signed in: the grant replaces whatever is stored, for
		// this instance and the others.
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			g := &Grant{Token: tok, TokenURL: c.Endpoint.TokenURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthStyle: c.Endpoint.AuthStyle}
			if err := src.signedIn(ctx, g); err != nil {
				return nil, err
			}
			return src, nil
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
	g, err := o.Tokens.Load(ctx, src.key)
	if err != nil {
		return nil, fmt.Errorf("loading the OAuth token of MCP server %s: %w", name, err)
	}
	if g != nil && g.Token != nil {
		// The stored grant refreshes itself; if the server still answers
		// 401 (a revoked grant), a new authorization starts.
		src.adopt(g)
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: oauth: %w", name, err)
	}
	return &sharedHandler{signIn: h, src: src, poll: o.Poll}, nil
}

// grantKey names s's grant in the token store.
func (s *server) grantKey() GrantKey { return GrantKey{Server: s.cfg.Name, Workspace: s.cfg.Workspace} }

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
