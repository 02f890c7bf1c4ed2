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

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

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
// authorization server's immediate redirect) through the authorization
// URL and returns the code and state the redirect URL received.
type AuthorizeFunc = auth.AuthorizationCodeFetcher

// TokenStore keeps a server's OAuth token between runs. Implementations
// must keep it encrypted at rest (SealedTokens).
type TokenStore interface {
	// Load returns the stored token, or nil when there is none.
	Load(ctx context.Context, server string) (*oauth2.Token, error)
	Save(ctx context.Context, server string, tok *oauth2.Token) error
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
	// id metadata document, used where the authorization server accepts
	// one (optional).
	ClientMetadataURL string
}

func (o *OAuthOptions) validate() error {
	switch {
	case o.RedirectURL == "":
		return errors.New("mcpclient: Options.OAuth.RedirectURL is required")
	case o.Authorize == nil:
		return errors.New("mcpclient: Options.OAuth.Authorize is required")
	case o.Tokens == nil:
		return errors.New("mcpclient: Options.OAuth.Tokens is required")
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
		return nil, fmt.Errorf("MCP server %s has oauth but Switchboard has no OAuth callback configured (SWITCHBOARD_PUBLIC_URL)", s.cfg.Name)
	}
	name := s.cfg.Name
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              o.RedirectURL,
		AuthorizationCodeFetcher: o.Authorize,
		RequestRefreshToken:      true,
		Client:                   s.m.opts.HTTPClient,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			if err := o.Tokens.Save(ctx, name, tok); err != nil {
				return nil, fmt.Errorf("saving the OAuth token of MCP server %s: %w", name, err)
			}
			return &savingSource{base: c.TokenSource(context.WithoutCancel(ctx), tok), tokens: o.Tokens, server: name, last: tok.AccessToken}, nil
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
	tok, err := o.Tokens.Load(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("loading the OAuth token of MCP server %s: %w", name, err)
	}
	if tok != nil {
		// The token endpoint is not known before discovery, so a stored
		// token is served as it is: once it expires the server's 401
		// starts a new authorization.
		cfg.InitialTokenSource = oauth2.StaticTokenSource(tok)
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: oauth: %w", name, err)
	}
	return h, nil
}

// savingSource saves every new token its base source hands out (a
// refresh), so a restart starts from the newest one.
type savingSource struct {
	base   oauth2.TokenSource
	tokens TokenStore
	server string

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
		if err := s.tokens.Save(context.Background(), s.server, tok); err != nil {
			return nil, fmt.Errorf("saving the refreshed OAuth token of MCP server %s: %w", s.server, err)
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

// Load opens the server's token; nil when none is stored.
func (t *SealedTokens) Load(_ context.Context, server string) (*oauth2.Token, error) {
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
	var tok oauth2.Token
	if err := json.Unmarshal(plain, &tok); err != nil {
		return nil, fmt.Errorf("decoding the OAuth token of %s: %w", server, err)
	}
	return &tok, nil
}

// Save seals and writes the server's token (atomically).
func (t *SealedTokens) Save(_ context.Context, server string, tok *oauth2.Token) error {
	plain, err := json.Marshal(tok)
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
