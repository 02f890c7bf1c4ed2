package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/connection"
	"github.com/switchboardhq/switchboard/core/connection/github"
	"github.com/switchboardhq/switchboard/core/connection/google"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Connections is the configuration of the GitHub and Google connections:
// each provider is on when its client id is set. The tokens are sealed
// with SWITCHBOARD_SECRET_KEY and the callbacks are under
// SWITCHBOARD_PUBLIC_URL (both from SlackInstall).
type Connections struct {
	GitHubClientID     string // GITHUB_CLIENT_ID
	GitHubClientSecret string // GITHUB_CLIENT_SECRET
	// GitHubOAuthURL and GitHubAPIURL override https://github.com and
	// https://api.github.com (SWITCHBOARD_GITHUB_OAUTH_URL,
	// SWITCHBOARD_GITHUB_API_URL): GitHub Enterprise Server, or tests.
	GitHubOAuthURL string
	GitHubAPIURL   string

	GoogleClientID     string // GOOGLE_CLIENT_ID
	GoogleClientSecret string // GOOGLE_CLIENT_SECRET
	// GoogleOAuthURL overrides the authorize, token and revoke endpoints'
	// base (SWITCHBOARD_GOOGLE_OAUTH_URL: BASE/o/oauth2/v2/auth, BASE/token,
	// BASE/revoke); GoogleAPIURL the APIs' (SWITCHBOARD_GOOGLE_API_URL:
	// BASE/gmail/v1, BASE/calendar/v3, BASE/drive/v3, BASE/oauth2/v2). Tests.
	GoogleOAuthURL string
	GoogleAPIURL   string
}

func (c *Connections) fromEnv(getenv func(string) string) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c.GitHubClientID, c.GitHubClientSecret = get("GITHUB_CLIENT_ID"), get("GITHUB_CLIENT_SECRET")
	c.GitHubOAuthURL, c.GitHubAPIURL = get("SWITCHBOARD_GITHUB_OAUTH_URL"), get("SWITCHBOARD_GITHUB_API_URL")
	c.GoogleClientID, c.GoogleClientSecret = get("GOOGLE_CLIENT_ID"), get("GOOGLE_CLIENT_SECRET")
	c.GoogleOAuthURL, c.GoogleAPIURL = get("SWITCHBOARD_GOOGLE_OAUTH_URL"), get("SWITCHBOARD_GOOGLE_API_URL")
}

// validate checks each provider's pair and overrides; on is whether any
// provider is configured.
func (c *Connections) validate(install *SlackInstall) (on bool, err error) {
	var errs []error
	for _, p := range []struct{ name, id, secret, oauthURL, apiURL, oauthVar, apiVar string }{
		{"GITHUB", c.GitHubClientID, c.GitHubClientSecret, c.GitHubOAuthURL, c.GitHubAPIURL, "SWITCHBOARD_GITHUB_OAUTH_URL", "SWITCHBOARD_GITHUB_API_URL"},
		{"GOOGLE", c.GoogleClientID, c.GoogleClientSecret, c.GoogleOAuthURL, c.GoogleAPIURL, "SWITCHBOARD_GOOGLE_OAUTH_URL", "SWITCHBOARD_GOOGLE_API_URL"},
	} {
		switch {
		case p.id == "" && p.secret != "":
			errs = append(errs, fmt.Errorf("%s_CLIENT_SECRET is set but %s_CLIENT_ID is not", p.name, p.name))
			continue
		case p.id == "":
			continue
		case p.secret == "":
			errs = append(errs, fmt.Errorf("%s_CLIENT_ID is set: set %s_CLIENT_SECRET too", p.name, p.name))
		}
		on = true
		for name, v := range map[string]string{p.oauthVar: p.oauthURL, p.apiVar: p.apiURL} {
			if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "") {
				errs = append(errs, fmt.Errorf("%s: %q is not an http(s) URL", name, v))
			}
		}
	}
	if on {
		if u, err := url.Parse(install.PublicURL); install.PublicURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("SWITCHBOARD_PUBLIC_URL: %q must be the address browsers reach this server at (the GitHub and Google callbacks are under it)", install.PublicURL))
		}
		if !install.Keys.Configured() {
			errs = append(errs, errors.New("GITHUB_CLIENT_ID or GOOGLE_CLIENT_ID is set: set SWITCHBOARD_SECRET_KEY too, the OAuth tokens are stored sealed with it"))
		}
	}
	return on, errors.Join(errs...)
}

// connectionStateClaim is the inbound dedupe namespace the connection
// states and start links are spent in.
const connectionStateClaim = "connection_oauth_state"

// buildConnections makes the connection manager and registers the GitHub
// and Google tools when a provider is configured; a.Connections stays nil
// otherwise. personOf authenticates GET /connections/{provider}/start with
// a personal token (the API's).
func (a *App) buildConnections(personOf func() *web.API) error {
	cfg := a.cfg
	on, err := cfg.Connections.validate(&cfg.SlackInstall)
	if err != nil || !on {
		return err
	}
	c := cfg.Connections
	redact.AddSecrets(c.GitHubClientSecret, c.GoogleClientSecret)
	var providers []*connection.Provider
	if c.GitHubClientID != "" {
		providers = append(providers, connection.GitHub(connection.ProviderOptions{
			ClientID: c.GitHubClientID, ClientSecret: c.GitHubClientSecret, OAuthURL: c.GitHubOAuthURL, APIURL: c.GitHubAPIURL,
		}))
	}
	if c.GoogleClientID != "" {
		providers = append(providers, connection.Google(connection.ProviderOptions{
			ClientID: c.GoogleClientID, ClientSecret: c.GoogleClientSecret, OAuthURL: c.GoogleOAuthURL, APIURL: c.GoogleAPIURL,
		}))
	}
	key := sha256.Sum256([]byte("switchboard connection state\x00" + c.GitHubClientSecret + "\x00" + c.GoogleClientSecret))
	a.Connections, err = connection.New(connection.Options{
		Store: a.Store, Keys: cfg.Keys, Providers: providers, PublicURL: cfg.PublicURL, StateKey: key[:],
		Claim: func(ctx context.Context, nonce string, now time.Time) (bool, error) {
			return a.Store.InboundRecord(ctx, &store.InboundRecordParams{Platform: connectionStateClaim, EventID: nonce, Now: now})
		},
		AuthenticateFunc: func(r *http.Request) (connection.Viewer, error) { return personOf().PersonViewer(r) },
		Now:              cfg.Now, Logger: a.log.With("part", "connections"),
	})
	if err != nil {
		return err
	}
	if c.GitHubClientID != "" {
		if err := github.Register(a.Registry, a.Connections); err != nil {
			return fmt.Errorf("registering the github tools: %w", err)
		}
	}
	if c.GoogleClientID != "" {
		if err := google.Register(a.Registry, a.Connections); err != nil {
			return fmt.Errorf("registering the google tools: %w", err)
		}
	}
	a.Connections.Routes(a.Mux)
	return nil
}

// connectionCommands answers !connections for a platform user: the person
// behind them, and the workspace their team is bound to.
type connectionCommands struct{ a *App }

func (c connectionCommands) AnswerConnections(ctx context.Context, platform, team, userID string, isDM bool, args []string) (string, error) {
	p, err := c.a.People.Ensure(ctx, platform, team, userID, "")
	if err != nil {
		return "", fmt.Errorf("finding the person behind %s user %s: %w", platform, userID, err)
	}
	ws, err := workspace.Bound(ctx, c.a.Store, platform, team)
	if err != nil {
		return "", err
	}
	return c.a.Connections.Answer(ctx, connection.Chat{PersonID: p.ID, Workspace: ws, IsDM: isDM}, args)
}

// connectionCommands is !connections, or nil (no command) without
// connections.
func (a *App) connectionCommands() command.Connections {
	if a.Connections == nil {
		return nil
	}
	return connectionCommands{a: a}
}

// webConnections is the API's connections, or nil (no routes) without any.
func (a *App) webConnections() web.Connections {
	if a.Connections == nil {
		return nil
	}
	return a.Connections
}
