// Package sso signs people in with an OpenID Connect provider (Okta, Entra
// ID, Google, Keycloak, any issuer with discovery): the authorization code
// flow with PKCE, the ID token checked by go-oidc (signature, issuer,
// audience, expiry) and its nonce checked here, and the state kept on the
// server, single use, so a replayed callback is refused on any instance.
//
// A sign-in provisions just in time (Provision): the person is found by
// (issuer, subject), else by a verified email, else made; their roles in
// the workspaces sso.groups names follow their groups at every sign-in, and
// a role a group gave is taken back when the group is gone. Roles given by
// hand are left alone: SSO takes back only what it gave (store.SSOGrant).
//
//	GET /auth/oidc/login ─► Begin: state, nonce, PKCE verifier stored
//	                          └─► 302 to the provider's authorization endpoint
//	provider ─► GET /auth/oidc/callback?code&state ─► Finish
//	   state used once (a replay: ErrConflict) ─► code redeemed with the
//	   verifier ─► ID token verified, nonce compared ─► Identity
//	   ─► Provision (person, roles, audit) ─► console session
//
// What happens on failure: a refused callback (replayed, expired or unknown
// state; a token with another audience, expired, wrongly signed or with
// another nonce) is a *Refusal and creates nothing; a provider that does
// not answer discovery fails the sign-in, not the start, and is tried again
// at the next sign-in.
package sso

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

// The settings that turn single sign-on on.
const (
	EnvIssuer       = "SWITCHBOARD_OIDC_ISSUER"
	EnvClientID     = "SWITCHBOARD_OIDC_CLIENT_ID"
	EnvClientSecret = "SWITCHBOARD_OIDC_CLIENT_SECRET"
	// CallbackPath is where the provider sends the browser back: the
	// redirect URI to register is SWITCHBOARD_PUBLIC_URL + CallbackPath.
	CallbackPath = "/auth/oidc/callback"
	// LoginPath starts a sign-in.
	LoginPath = "/auth/oidc/login"
)

// DefaultStateTTL is how long a sign-in may take at the provider.
const DefaultStateTTL = 10 * time.Minute

// Options configures New.
type Options struct {
	Issuer       string // SWITCHBOARD_OIDC_ISSUER; required
	ClientID     string // SWITCHBOARD_OIDC_CLIENT_ID; required
	ClientSecret string // SWITCHBOARD_OIDC_CLIENT_SECRET; empty for a public client (PKCE alone)
	// PublicURL is SWITCHBOARD_PUBLIC_URL: the redirect URI and the page a
	// logout returns to are built under it. Required.
	PublicURL string
	// Config is the sso: section of switchboard.yaml.
	Config config.SSO
	Store  store.Store // required
	// HTTPClient talks to the provider (default http.DefaultClient with a
	// 15 s timeout).
	HTTPClient *http.Client
	StateTTL   time.Duration // default DefaultStateTTL
	Logger     *slog.Logger
	Now        func() time.Time
}

func (o *Options) validate() error {
	switch {
	case o.Issuer == "":
		return fmt.Errorf("%s is required for single sign-on", EnvIssuer)
	case o.ClientID == "":
		return fmt.Errorf("%s is set (%s) but %s is empty: set the client id the provider gave this app", EnvIssuer, o.Issuer, EnvClientID)
	case o.StateTTL < 0:
		return errors.New("sso: Options.StateTTL must not be negative")
	}
	u, err := url.Parse(o.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s: %q is not an issuer URL; want https://host[/path], such as https://login.microsoftonline.com/TENANT/v2.0", EnvIssuer, o.Issuer)
	}
	if o.PublicURL == "" {
		return fmt.Errorf("%s is set but SWITCHBOARD_PUBLIC_URL is empty: the provider needs the redirect URI SWITCHBOARD_PUBLIC_URL%s", EnvIssuer, CallbackPath)
	}
	p, err := url.Parse(o.PublicURL)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		return fmt.Errorf("SWITCHBOARD_PUBLIC_URL: %q must be the address browsers reach this server at, such as https://switchboard.example.com", o.PublicURL)
	}
	return nil
}

// SSO signs people in with one OpenID provider.
type SSO struct {
	o Options

	mu       sync.Mutex
	provider *oidc.Provider // nil until discovery answered
	endURL   string         // the provider's end_session_endpoint; "" when it has none
}

// New checks o. The provider is not asked anything until the first
// sign-in (or Check): a provider that is down does not stop the service.
func New(o Options) (*SSO, error) {
	o.Issuer = strings.TrimSpace(o.Issuer)
	o.ClientID = strings.TrimSpace(o.ClientID)
	o.PublicURL = strings.TrimRight(strings.TrimSpace(o.PublicURL), "/")
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Store == nil {
		return nil, errors.New("sso: Options.Store is required")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if o.StateTTL == 0 {
		o.StateTTL = DefaultStateTTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &SSO{o: o}, nil
}

// Issuer is the provider's issuer URL.
func (s *SSO) Issuer() string { return s.o.Issuer }

// Required reports whether SSO is the only way into the console.
func (s *SSO) Required() bool { return s.o.Config.Require }

// RedirectURL is the redirect URI to register at the provider.
func (s *SSO) RedirectURL() string { return s.o.PublicURL + CallbackPath }

func (s *SSO) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, s.o.HTTPClient)
}

// discover returns the provider, asking its discovery document once it
// answers.
func (s *SSO) discover(ctx context.Context) (*oidc.Provider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil {
		return s.provider, nil
	}
	p, err := oidc.NewProvider(s.ctx(context.WithoutCancel(ctx)), s.o.Issuer)
	if err != nil {
		return nil, fmt.Errorf("reading the discovery document of %s (%s/.well-known/openid-configuration): %w", s.o.Issuer, strings.TrimRight(s.o.Issuer, "/"), err)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = p.Claims(&extra)
	s.provider, s.endURL = p, extra.EndSession
	return p, nil
}

// CheckDiscovery checks o's settings (no store needed) and asks the
// issuer's discovery document now, as switchboard doctor does: it says
// what the provider offers (an end-session endpoint or not).
func CheckDiscovery(ctx context.Context, o Options) (string, error) {
	o.Issuer = strings.TrimSpace(o.Issuer)
	o.ClientID = strings.TrimSpace(o.ClientID)
	if err := o.validate(); err != nil {
		return "", err
	}
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, client), o.Issuer)
	if err != nil {
		return "", fmt.Errorf("reading the discovery document of %s: %w", o.Issuer, err)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = p.Claims(&extra)
	logout := "no end_session_endpoint: signing out ends the console session only"
	if extra.EndSession != "" {
		logout = "RP-initiated logout at " + extra.EndSession
	}
	return fmt.Sprintf("%s answers discovery (authorization at %s; %s)", o.Issuer, p.Endpoint().AuthURL, logout), nil
}

func (s *SSO) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: s.o.ClientID, ClientSecret: s.o.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: s.RedirectURL(), Scopes: s.o.Config.ScopesOrDefault(),
	}
}

func random() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading randomness: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// Begin starts a sign-in: it stores the state, nonce and PKCE verifier
// and returns the provider's authorization URL and the state. returnTo is
// a path of this server the browser goes back to (anything else becomes
// "/"). The caller binds the state to the browser (a cookie) and checks
// the binding at the callback, so a callback URL made in another browser
// cannot sign this one in (login CSRF).
func (s *SSO) Begin(ctx context.Context, returnTo string) (authURL, state string, err error) {
	p, err := s.discover(ctx)
	if err != nil {
		return "", "", err
	}
	state, err = random()
	if err != nil {
		return "", "", err
	}
	nonce, err := random()
	if err != nil {
		return "", "", err
	}
	verifier := oauth2.GenerateVerifier()
	now := s.o.Now()
	if _, err := s.o.Store.OIDCStatePrune(ctx, &store.PruneParams{Before: now, Limit: 100}); err != nil {
		return "", "", fmt.Errorf("pruning expired sign-ins: %w", err)
	}
	if _, err := s.o.Store.OIDCStateCreate(ctx, &store.OIDCStateCreateParams{
		StateHash: hash(state), Nonce: nonce, CodeVerifier: verifier, ReturnTo: localPath(returnTo),
		ExpiresAt: now.Add(s.o.StateTTL), Now: now,
	}); err != nil {
		return "", "", fmt.Errorf("storing the sign-in's state: %w", err)
	}
	return s.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), state, nil
}

// StateTTL is how long a sign-in may take at the provider.
func (s *SSO) StateTTL() time.Duration { return s.o.StateTTL }

// localPath keeps a return address on this server: a path, never a URL
// of another host (an open redirect).
func localPath(p string) string {
	if p == "" || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.Contains(p, "\\") {
		return "/"
	}
	return p
}

// Refusal is a callback refused: the message says why, for the person.
type Refusal struct{ Msg string }

func (r *Refusal) Error() string { return r.Msg }

func refuse(format string, args ...any) error { return &Refusal{Msg: fmt.Sprintf(format, args...)} }

// Identity is who the provider says signed in.
type Identity struct {
	Issuer        string
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Groups        []string
	// IDToken is the raw ID token, the hint of an RP-initiated logout.
	IDToken string
	// ReturnTo is the page the sign-in started from.
	ReturnTo string
}

// claims are the ID token's and userinfo's claims this package reads.
type claims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified any    `json:"email_verified"` // a bool, or "true" from some providers
	Name          string `json:"name"`
	PreferredName string `json:"preferred_username"`
}

func verified(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x == "true"
	}
	return false
}

// groupsOf reads the groups claim: a list of strings, or one string.
func groupsOf(raw map[string]any, claim string) ([]string, bool) {
	v, ok := raw[claim]
	if !ok {
		return nil, false
	}
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, g := range x {
			if s, ok := g.(string); ok {
				out = append(out, s)
			}
		}
		return out, true
	}
	return nil, true
}

// Finish takes the provider's callback: it spends the state, redeems the
// code with the PKCE verifier and checks the ID token and its nonce. A
// *Refusal says why a callback was refused; nothing is written but the
// state's use.
func (s *SSO) Finish(ctx context.Context, state, code string) (*Identity, error) {
	if state == "" || code == "" {
		return nil, refuse("the sign-in came back without a code or state; start again")
	}
	now := s.o.Now()
	st, err := s.o.Store.OIDCStateUse(ctx, &store.OIDCStateUseParams{StateHash: hash(state), Now: now})
	switch {
	case errors.Is(err, store.ErrConflict):
		return nil, refuse("this sign-in was already used (a replayed state); start again")
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrInvalid):
		return nil, refuse("this sign-in is not one this server started; start again")
	case err != nil:
		return nil, err
	case !now.Before(st.ExpiresAt):
		return nil, refuse("this sign-in took longer than %s at the identity provider; start again", s.o.StateTTL)
	}
	p, err := s.discover(ctx)
	if err != nil {
		return nil, err
	}
	hctx := s.ctx(ctx)
	tok, err := s.oauth(p).Exchange(hctx, code, oauth2.VerifierOption(st.CodeVerifier))
	if err != nil {
		return nil, refuse("the identity provider refused the sign-in's code: %v", err)
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		return nil, refuse("the identity provider sent no ID token (is openid among sso.scopes?)")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: s.o.ClientID, Now: s.o.Now}).Verify(hctx, rawID)
	if err != nil {
		return nil, refuse("the identity provider's ID token was refused: %v", err)
	}
	if idt.Nonce != st.Nonce {
		return nil, refuse("the ID token's nonce is not this sign-in's; start again")
	}
	var c claims
	var raw map[string]any
	if err := idt.Claims(&c); err != nil {
		return nil, refuse("reading the ID token's claims: %v", err)
	}
	_ = idt.Claims(&raw)
	id := &Identity{
		Issuer: idt.Issuer, Subject: idt.Subject, Email: c.Email, EmailVerified: verified(c.EmailVerified),
		Name: c.Name, IDToken: rawID, ReturnTo: st.ReturnTo,
	}
	if id.Name == "" {
		id.Name = c.PreferredName
	}
	groups, haveGroups := groupsOf(raw, s.o.Config.GroupsClaimOrDefault())
	id.Groups = groups
	// Many providers keep the profile and the groups out of the ID token
	// when an access token comes with it: userinfo has them.
	if (id.Email == "" || !haveGroups || id.Name == "") && p.UserInfoEndpoint() != "" {
		ui, err := p.UserInfo(hctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			s.o.Logger.WarnContext(ctx, "reading userinfo after sign-in", "issuer", s.o.Issuer, "error", err)
		} else if ui.Subject != id.Subject {
			return nil, refuse("the identity provider's userinfo is for another subject than its ID token")
		} else {
			var uc claims
			var uraw map[string]any
			_ = ui.Claims(&uc)
			_ = ui.Claims(&uraw)
			if id.Email == "" {
				id.Email, id.EmailVerified = uc.Email, verified(uc.EmailVerified)
			}
			if id.Name == "" {
				id.Name = cmpOr(uc.Name, uc.PreferredName)
			}
			if !haveGroups {
				id.Groups, _ = groupsOf(uraw, s.o.Config.GroupsClaimOrDefault())
			}
		}
	}
	return id, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// EndSessionURL is where the browser goes to sign out at the provider too
// (RP-initiated logout), or "" when the provider's discovery offers no
// end_session_endpoint.
func (s *SSO) EndSessionURL(ctx context.Context, idToken string) string {
	if _, err := s.discover(ctx); err != nil {
		return ""
	}
	s.mu.Lock()
	end := s.endURL
	s.mu.Unlock()
	if end == "" {
		return ""
	}
	u, err := url.Parse(end)
	if err != nil {
		return ""
	}
	q := u.Query()
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	q.Set("client_id", s.o.ClientID)
	q.Set("post_logout_redirect_uri", s.o.PublicURL+"/")
	u.RawQuery = q.Encode()
	return u.String()
}

// Detail is a JSON detail for the audit.
func Detail(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
