package slack

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/core/auth/oauthstate"
)

// The OAuth v2 install flow: GET /slack/install sends the person to Slack's
// authorize page with a signed, expiring, single-use state; Slack sends
// them back to GET /slack/oauth/callback with a code, which is exchanged
// (oauth.v2.access) for the team's bot token, stored through Installations.

// DefaultAuthorizeURL is Slack's authorize page.
const DefaultAuthorizeURL = "https://slack.com/oauth/v2/authorize"

// BotScopes are the bot scopes the install requests: the manifest's
// (slack-app-manifest.yaml, checked by TestManifest).
var BotScopes = []string{
	"app_mentions:read", "assistant:write", "channels:history", "chat:write", "chat:write.customize", "commands",
	"files:read", "files:write", "groups:history", "im:history", "im:write", "mpim:history",
	"reactions:write", "users:read",
}

// Errors of the state check (package oauthstate's).
var (
	ErrStateInvalid = oauthstate.ErrInvalid
	ErrStateExpired = oauthstate.ErrExpired
	ErrStateUsed    = oauthstate.ErrUsed
)

// OAuthOptions configures the install flow.
type OAuthOptions struct {
	ClientID     string // SLACK_CLIENT_ID
	ClientSecret string // SLACK_CLIENT_SECRET
	// RedirectURL is SWITCHBOARD_PUBLIC_URL + /slack/oauth/callback, as listed
	// in the manifest's oauth_config.redirect_urls.
	RedirectURL string
	// StateKey signs the state. Required.
	StateKey []byte
	// StateTTL is how long an install link stays good. Default 10 minutes.
	StateTTL time.Duration
	// ClaimStateFunc spends a state's nonce: false when it was spent before
	// (the link replayed). Required; backed by the store so that any
	// instance may get the callback.
	ClaimStateFunc func(ctx context.Context, nonce string, now time.Time) (bool, error)
	// AuthorizeURL overrides Slack's authorize page (tests).
	AuthorizeURL string
	// RefreshMargin is how long before its expiry a rotating bot token is
	// renewed (token rotation on in the Slack app). Default
	// DefaultRefreshMargin.
	RefreshMargin time.Duration
}

func (o *OAuthOptions) validate() error {
	var errs []error
	if o.ClientID == "" || o.ClientSecret == "" {
		errs = append(errs, errors.New("OAuth.ClientID and OAuth.ClientSecret are required"))
	}
	if u, err := url.Parse(o.RedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("OAuth.RedirectURL %q is not an http(s) URL", o.RedirectURL))
	}
	if len(o.StateKey) < 16 {
		errs = append(errs, errors.New("OAuth.StateKey must be at least 16 bytes"))
	}
	if o.RefreshMargin < 0 {
		errs = append(errs, fmt.Errorf("OAuth.RefreshMargin %s must not be negative", o.RefreshMargin))
	}
	if o.ClaimStateFunc == nil {
		errs = append(errs, errors.New("OAuth.ClaimStateFunc is required"))
	}
	return errors.Join(errs...)
}

// InstallRoutes registers GET /slack/install and GET /slack/oauth/callback
// when the install flow is configured.
func (a *Adapter) InstallRoutes(mux *http.ServeMux) {
	if a.opts.OAuth == nil {
		return
	}
	mux.HandleFunc("GET /slack/install", a.serveInstall)
	mux.HandleFunc("GET /slack/oauth/callback", a.serveCallback)
}

// AuthorizeURL is where GET /slack/install sends the browser: Slack's
// authorize page with the client id, the scopes, the redirect URL and a new
// state.
func (a *Adapter) AuthorizeURL() (string, error) {
	o := a.opts.OAuth
	state, err := o.signer(a.opts.Now).New(nil)
	if err != nil {
		return "", err
	}
	base := o.AuthorizeURL
	if base == "" {
		base = DefaultAuthorizeURL
	}
	q := url.Values{
		"client_id":    {o.ClientID},
		"scope":        {strings.Join(BotScopes, ",")},
		"redirect_uri": {o.RedirectURL},
		"state":        {state},
	}
	return base + "?" + q.Encode(), nil
}

func (o *OAuthOptions) stateTTL() time.Duration {
	if o.StateTTL <= 0 {
		return 10 * time.Minute
	}
	return o.StateTTL
}

func (a *Adapter) serveInstall(w http.ResponseWriter, r *http.Request) {
	u, err := a.AuthorizeURL()
	if err != nil {
		a.log.ErrorContext(r.Context(), "making a slack install link", "err", err)
		http.Error(w, "could not make an install link", http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, u, http.StatusFound)
}

// signer makes and checks the install states. The purpose string is the
// one the states were signed with before package oauthstate existed, so
// links made by an older binary still check.
func (o *OAuthOptions) signer(now func() time.Time) *oauthstate.Signer {
	return &oauthstate.Signer{
		Key: o.StateKey, Purpose: "switchboard slack oauth state", TTL: o.stateTTL(),
		Claim: oauthstate.ClaimFunc(o.ClaimStateFunc), Now: now,
	}
}

// checkState verifies the signature and expiry, then spends the nonce.
func (a *Adapter) checkState(ctx context.Context, state string) error {
	_, err := a.opts.OAuth.signer(a.opts.Now).Check(ctx, state)
	return err
}

func (a *Adapter) serveCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		installPage(w, http.StatusBadRequest, "Switchboard was not installed", "Slack said: "+e)
		return
	}
	if err := a.checkState(ctx, q.Get("state")); err != nil {
		a.log.WarnContext(ctx, "refusing a slack install callback", "err", err)
		status := http.StatusBadRequest
		if !oauthstate.Refused(err) {
			status = http.StatusInternalServerError
		}
		installPage(w, status, "Switchboard was not installed", err.Error())
		return
	}
	in, err := a.Install(ctx, q.Get("code"))
	if err != nil {
		a.log.ErrorContext(ctx, "slack install failed", "err", err)
		installPage(w, http.StatusBadGateway, "Switchboard was not installed", err.Error())
		return
	}
	where := firstOf(in.TeamName, in.TeamID)
	if in.EnterpriseInstall {
		where = "every workspace of " + where
	}
	installPage(w, http.StatusOK, "Switchboard is installed", "Switchboard is now in "+where+". Mention it in a channel or send it a DM.")
}

// Install exchanges an authorization code for the team's bot token
// (oauth.v2.access), stores the installation, binds the team to a
// workspace when a Binder is set, and starts answering the team.
func (a *Adapter) Install(ctx context.Context, code string) (*Installation, error) {
	o := a.opts.OAuth
	if code == "" {
		return nil, errors.New("slack sent no code")
	}
	resp, err := slack.GetOAuthV2ResponseContext(ctx, a.opts.HTTPClient, o.ClientID, o.ClientSecret, code, o.RedirectURL,
		slack.OAuthOptionAPIURL(a.opts.APIURL))
	if err != nil {
		return nil, fmt.Errorf("exchanging the code with slack (oauth.v2.access): %w", err)
	}
	in, err := installationOf(resp, a.opts.Now())
	if err != nil {
		return nil, err
	}
	if err := a.opts.Installations.InstallationSave(ctx, in); err != nil {
		return nil, fmt.Errorf("storing the installation of slack team %s: %w", in.TeamID, err)
	}
	a.teams.mu.Lock()
	for team, w := range a.teams.byID {
		if team == in.TeamID || w.key == in.TeamID {
			delete(a.teams.byID, team) // a reinstall brings a new token
		}
	}
	a.teams.mu.Unlock()
	if _, err := a.remember(ctx, in.TeamID, in); err != nil {
		return nil, err
	}
	if in.EnterpriseInstall {
		// No team to bind yet: each team of the organisation is bound to
		// a workspace as its first message arrives, as a team installed
		// before workspaces existed is.
		a.log.InfoContext(ctx, "slack app installed organisation-wide", "enterprise_id", in.EnterpriseID, "enterprise", in.EnterpriseName,
			"installed_by", in.InstalledBy, "rotating", in.RefreshToken != "")
		return in, nil
	}
	if a.opts.Binder != nil {
		if err := a.opts.Binder.BindWorkspace(ctx, PlatformName, in.TeamID, in.TeamName, in.InstalledBy); err != nil {
			return nil, fmt.Errorf("binding slack team %s to a workspace: %w", in.TeamID, err)
		}
	}
	a.log.InfoContext(ctx, "slack app installed", "team_id", in.TeamID, "team", in.TeamName, "installed_by", in.InstalledBy, "rotating", in.RefreshToken != "")
	return in, nil
}

// installationOf reads oauth.v2.access's answer: a bot token for a team,
// or for an organisation-wide install (is_enterprise_install) for the
// enterprise; with token rotation on, an expiring xoxe.xoxb- token with
// its refresh token and expires_in.
func installationOf(resp *slack.OAuthV2Response, now time.Time) (*Installation, error) {
	rotating := resp.RefreshToken != "" || resp.ExpiresIn > 0
	switch {
	case resp.TokenType != "bot":
		return nil, fmt.Errorf("slack answered oauth.v2.access without a bot token (token_type %q)", resp.TokenType)
	case rotating && (!strings.HasPrefix(resp.AccessToken, "xoxe.xoxb-") || resp.RefreshToken == "" || resp.ExpiresIn <= 0):
		return nil, errors.New("slack answered oauth.v2.access with token rotation but without an xoxe.xoxb- token, a refresh token and expires_in")
	case !rotating && !strings.HasPrefix(resp.AccessToken, "xoxb-"):
		return nil, errors.New("slack answered oauth.v2.access without an xoxb- bot token")
	case resp.IsEnterpriseInstall && resp.Enterprise.ID == "":
		return nil, errors.New("slack answered oauth.v2.access for an organisation-wide install without its enterprise")
	case !resp.IsEnterpriseInstall && resp.Team.ID == "":
		return nil, errors.New("slack answered oauth.v2.access without the team it was installed in")
	}
	in := &Installation{
		TeamID: resp.Team.ID, TeamName: resp.Team.Name, BotUserID: resp.BotUserID, AppID: resp.AppID,
		Scope: resp.Scope, InstalledBy: resp.AuthedUser.ID, BotToken: resp.AccessToken,
		EnterpriseID: resp.Enterprise.ID, EnterpriseName: resp.Enterprise.Name, EnterpriseInstall: resp.IsEnterpriseInstall,
	}
	if in.EnterpriseInstall {
		in.TeamID, in.TeamName = resp.Enterprise.ID, resp.Enterprise.Name
	}
	if rotating {
		in.RefreshToken = resp.RefreshToken
		in.TokenExpiresAt = now.Add(time.Duration(resp.ExpiresIn) * time.Second)
	}
	return in, nil
}

func installPage(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p>\n", html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}
