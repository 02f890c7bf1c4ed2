package connection

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	gh "github.com/google/go-github/v84/github"
	"golang.org/x/oauth2"
	googleoauth "google.golang.org/api/oauth2/v2"
	"google.golang.org/api/option"

	"github.com/switchboardhq/switchboard/store"
)

// Account is who a token belongs to at the provider.
type Account struct {
	ID    string // the provider's stable id
	Login string // a GitHub login or a Google email
}

// Provider is one outside service: its OAuth app, its endpoints, and how
// to tell whose a token is and to revoke one.
type Provider struct {
	Name store.ConnectionProvider
	// Title is how people read the provider's name ("GitHub").
	Title string
	// OAuth is the app (client id and secret, endpoints, scopes); the
	// manager sets RedirectURL.
	OAuth oauth2.Config
	// AuthParams are extra parameters of the authorize URL (Google's
	// access_type=offline, which brings a refresh token).
	AuthParams []oauth2.AuthCodeOption
	// APIURL is the provider's API base URL ("" for the real one).
	APIURL string
	// AccountFunc reads whose a token is, through a client that sends it.
	AccountFunc func(ctx context.Context, c *http.Client) (Account, error)
	// RevokeFunc revokes a token at the provider (hc sends no token of
	// its own); nil when the provider has no revocation.
	RevokeFunc func(ctx context.Context, hc *http.Client, tok *oauth2.Token) error
}

// ProviderOptions configure one provider's OAuth app.
type ProviderOptions struct {
	ClientID     string
	ClientSecret string
	// OAuthURL overrides the base of the provider's authorize and token
	// endpoints (tests); "" for the real ones.
	OAuthURL string
	// APIURL overrides the provider's API base URL (tests); "" for the real
	// one.
	APIURL string
	// Scopes replace the default scopes when set.
	Scopes []string
}

// GitHubScopes are what the GitHub tools need: repositories (contents,
// branches, pull requests, comments) and the user's profile.
var GitHubScopes = []string{"repo", "read:user"}

// GoogleScopes are what the Google tools need: the account's email, Gmail
// read and compose (drafts and sending), Calendar events and Drive reads.
var GoogleScopes = []string{
	"openid",
	"https://www.googleapis.com/auth/userinfo.email",
	"https://www.googleapis.com/auth/gmail.readonly",
	"https://www.googleapis.com/auth/gmail.compose",
	"https://www.googleapis.com/auth/calendar.events",
	"https://www.googleapis.com/auth/drive.readonly",
}

// GitHub is the GitHub provider for an OAuth app (or a GitHub App's user
// tokens, which expire and come with a refresh token).
func GitHub(o ProviderOptions) *Provider {
	base := strings.TrimRight(o.OAuthURL, "/")
	if base == "" {
		base = "https://github.com"
	}
	scopes := o.Scopes
	if len(scopes) == 0 {
		scopes = GitHubScopes
	}
	p := &Provider{
		Name: store.ProviderGitHub, Title: "GitHub", APIURL: o.APIURL,
		OAuth: oauth2.Config{
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: scopes,
			Endpoint: oauth2.Endpoint{
				AuthURL: base + "/login/oauth/authorize", TokenURL: base + "/login/oauth/access_token",
				AuthStyle: oauth2.AuthStyleInParams,
			},
		},
	}
	p.AccountFunc = func(ctx context.Context, c *http.Client) (Account, error) {
		client, err := GitHubClient(c, p.APIURL)
		if err != nil {
			return Account{}, err
		}
		u, _, err := client.Users.Get(ctx, "")
		if err != nil {
			return Account{}, fmt.Errorf("reading the github user: %w", err)
		}
		return Account{ID: fmt.Sprint(u.GetID()), Login: u.GetLogin()}, nil
	}
	p.RevokeFunc = func(ctx context.Context, hc *http.Client, tok *oauth2.Token) error {
		// DELETE /applications/{client_id}/grant: the app's authorization
		// and every token of it for that user, authenticated as the app.
		basic := &gh.BasicAuthTransport{Username: o.ClientID, Password: o.ClientSecret, Transport: hc.Transport}
		client, err := GitHubClient(&http.Client{Transport: basic, Timeout: hc.Timeout}, p.APIURL)
		if err != nil {
			return err
		}
		resp, err := client.Authorizations.DeleteGrant(ctx, o.ClientID, tok.AccessToken)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil // revoked already
		}
		return err
	}
	return p
}

// GitHubClient is a go-github client on c, at apiURL when set.
func GitHubClient(c *http.Client, apiURL string) (*gh.Client, error) {
	client := gh.NewClient(c)
	if apiURL == "" {
		return client, nil
	}
	u, err := url.Parse(strings.TrimRight(apiURL, "/") + "/")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("the github API URL %q is not an http(s) URL", apiURL)
	}
	client.BaseURL = u
	return client, nil
}

// Google is the Google provider: offline access, so a refresh token comes
// with the first consent.
func Google(o ProviderOptions) *Provider {
	base := strings.TrimRight(o.OAuthURL, "/")
	auth, token, revoke := "https://accounts.google.com/o/oauth2/v2/auth", "https://oauth2.googleapis.com/token", "https://oauth2.googleapis.com/revoke"
	if base != "" {
		auth, token, revoke = base+"/o/oauth2/v2/auth", base+"/token", base+"/revoke"
	}
	scopes := o.Scopes
	if len(scopes) == 0 {
		scopes = GoogleScopes
	}
	p := &Provider{
		Name: store.ProviderGoogle, Title: "Google", APIURL: o.APIURL,
		OAuth: oauth2.Config{
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: scopes,
			Endpoint: oauth2.Endpoint{AuthURL: auth, TokenURL: token, AuthStyle: oauth2.AuthStyleInParams},
		},
		AuthParams: []oauth2.AuthCodeOption{oauth2.AccessTypeOffline, oauth2.SetAuthURLParam("prompt", "consent")},
	}
	p.AccountFunc = func(ctx context.Context, c *http.Client) (Account, error) {
		opts := []option.ClientOption{option.WithHTTPClient(c)}
		if p.APIURL != "" {
			opts = append(opts, option.WithEndpoint(strings.TrimRight(p.APIURL, "/")+"/"))
		}
		svc, err := googleoauth.NewService(ctx, opts...)
		if err != nil {
			return Account{}, fmt.Errorf("making the google userinfo client: %w", err)
		}
		info, err := svc.Userinfo.Get().Context(ctx).Do()
		if err != nil {
			return Account{}, fmt.Errorf("reading the google account: %w", err)
		}
		if info.Email == "" {
			return Account{}, errors.New("google named no email for the account (is the userinfo.email scope granted?)")
		}
		return Account{ID: info.Id, Login: info.Email}, nil
	}
	p.RevokeFunc = func(ctx context.Context, hc *http.Client, tok *oauth2.Token) error {
		// Revoking the refresh token revokes the grant and its access
		// tokens (Google's OAuth 2.0 for web server apps, "Revoking a token").
		t := tok.RefreshToken
		if t == "" {
			t = tok.AccessToken
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, revoke, strings.NewReader(url.Values{"token": {t}}.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("revoking the google token: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest {
			// 400 invalid_token: revoked or expired already.
			return fmt.Errorf("revoking the google token: %s", resp.Status)
		}
		return nil
	}
	return p
}
