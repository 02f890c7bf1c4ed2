// Package connection connects people's and workspaces' accounts at GitHub
// and Google through the providers' OAuth flows, keeps their tokens sealed
// in the store and refreshed, and hands a tool the account it must act
// with.
//
// The flow: GET /connections/{provider}/start, by a signed-in person (a
// personal API token, or a signed single-use link made for them by
// StartLink), sends the browser to the provider's authorize page with a
// signed, expiring, single-use state naming the person and the owner (the
// person, or a workspace they manage). The provider sends the browser back
// to GET /connections/{provider}/callback with a code, which is exchanged
// for tokens; the account they belong to is read from the provider, and the
// connection is saved, one per provider and owner.
//
// Which account a tool call uses is decided from the conversation it runs
// in (Resolve): the speaking person's own connection, else the
// conversation's workspace's. The agent plays no part: the same agent in
// two workspaces acts with each workspace's account.
//
// What happens on failure: a refresh that fails (revoked at the provider)
// is a tool error asking to connect again; two instances refreshing at once
// both succeed at the provider, the first to write wins and the second
// takes the stored token (compare-and-swap on the sealed access token); a
// revocation that fails at Disconnect stops the delete, so a token is never
// forgotten while it still works.
package connection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/auth/oauthstate"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/store"
)

// Errors.
var (
	// ErrNotConnected: neither the person nor the workspace connected an
	// account at the provider. Its text says where to connect.
	ErrNotConnected = errors.New("no account connected")
	// ErrForbidden: the person may not connect, see or disconnect it.
	ErrForbidden = errors.New("not allowed")
	// ErrUnknownProvider: the provider is not configured.
	ErrUnknownProvider = errors.New("provider not configured")
)

// RefreshEarly is how long before its expiry an access token is refreshed.
const RefreshEarly = 2 * time.Minute

// Options configures a Manager.
type Options struct {
	// Store keeps the connections. Required.
	Store store.Store
	// Keys seal the tokens (SWITCHBOARD_SECRET_KEY). Required.
	Keys *secret.Keyring
	// Providers are the configured providers; at least one.
	Providers []*Provider
	// PublicURL is where browsers reach this server
	// (SWITCHBOARD_PUBLIC_URL); the callbacks are under it.
	PublicURL string
	// StateKey signs states and start links; at least 16 bytes. Required.
	StateKey []byte
	// Claim spends the nonces of states and start links. Required.
	Claim oauthstate.ClaimFunc
	// AuthenticateFunc names the person a start request authenticated as
	// with a bearer token (a personal API token), with the token's
	// workspace scope; nil: start links only. Its error (any caller that
	// is not a person) is a 401.
	AuthenticateFunc func(r *http.Request) (Viewer, error)
	// HTTPClient calls the providers (default: one with a 30s timeout).
	HTTPClient *http.Client
	Now        func() time.Time
	Logger     *slog.Logger
}

func (o *Options) validate() error {
	var errs []error
	if o.Store == nil {
		errs = append(errs, errors.New("connection: Options.Store is required"))
	}
	if !o.Keys.Configured() {
		errs = append(errs, fmt.Errorf("connection: tokens cannot be stored: %w", secret.ErrNoKey))
	}
	if len(o.Providers) == 0 {
		errs = append(errs, errors.New("connection: Options.Providers is empty"))
	}
	for _, p := range o.Providers {
		if p.OAuth.ClientID == "" || p.OAuth.ClientSecret == "" {
			errs = append(errs, fmt.Errorf("connection: provider %s needs a client id and secret", p.Name))
		}
	}
	if u, err := url.Parse(o.PublicURL); o.PublicURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("connection: Options.PublicURL %q must be the http(s) address browsers reach this server at", o.PublicURL))
	}
	if len(o.StateKey) < 16 {
		errs = append(errs, errors.New("connection: Options.StateKey must be at least 16 bytes"))
	}
	if o.Claim == nil {
		errs = append(errs, errors.New("connection: Options.Claim is required"))
	}
	return errors.Join(errs...)
}

// Manager runs the flow and hands out accounts.
type Manager struct {
	o         Options
	providers map[store.ConnectionProvider]*Provider
	states    *oauthstate.Signer // provider round trips
	links     *oauthstate.Signer // start links
	log       *slog.Logger
}

// New validates opts.
func New(opts Options) (*Manager, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	m := &Manager{o: opts, providers: map[store.ConnectionProvider]*Provider{}, log: opts.Logger}
	for _, p := range opts.Providers {
		if _, dup := m.providers[p.Name]; dup {
			return nil, fmt.Errorf("connection: provider %s listed twice", p.Name)
		}
		cp := *p
		cp.OAuth.RedirectURL = m.CallbackURL(p.Name)
		m.providers[p.Name] = &cp
	}
	m.states = &oauthstate.Signer{Key: opts.StateKey, Purpose: "switchboard connection state", Claim: opts.Claim, Now: opts.Now}
	m.links = &oauthstate.Signer{Key: opts.StateKey, Purpose: "switchboard connection start link", TTL: 15 * time.Minute, Claim: opts.Claim, Now: opts.Now}
	return m, nil
}

// Provider returns a configured provider.
func (m *Manager) Provider(name store.ConnectionProvider) (*Provider, bool) {
	p, ok := m.providers[name]
	return p, ok
}

// Providers lists the configured providers' names.
func (m *Manager) Providers() []store.ConnectionProvider {
	out := make([]store.ConnectionProvider, 0, len(m.providers))
	for n := range m.providers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// CallbackURL is the redirect URL to register in the provider's OAuth app.
func (m *Manager) CallbackURL(p store.ConnectionProvider) string {
	return m.o.PublicURL + "/connections/" + string(p) + "/callback"
}

// flow is what a start link and a state carry: who connects, for whom.
type flow struct {
	Provider  store.ConnectionProvider `json:"p"`
	By        uuid.UUID                `json:"by"`
	Workspace *uuid.UUID               `json:"ws,omitempty"`
}

func (f flow) owner() store.ConnectionOwner {
	if f.Workspace != nil {
		return store.WorkspaceOwner(*f.Workspace)
	}
	return store.PersonOwner(f.By)
}

// StartLink is a link that starts the flow for person in a browser: signed,
// single use, good for 15 minutes. With ws set, the connection is the
// workspace's, which takes the right to manage its connections (checked now
// and again when the provider answers).
func (m *Manager) StartLink(ctx context.Context, provider store.ConnectionProvider, person uuid.UUID, ws *uuid.UUID) (string, error) {
	f := flow{Provider: provider, By: person, Workspace: ws}
	if err := m.mayConnect(ctx, f); err != nil {
		return "", err
	}
	payload, _ := json.Marshal(f) // ids and a name always encode
	ticket, err := m.links.New(payload)
	if err != nil {
		return "", err
	}
	return m.o.PublicURL + "/connections/" + string(provider) + "/start?" + url.Values{"ticket": {ticket}}.Encode(), nil
}

// mayConnect checks the provider and, for a workspace's connection, the
// person's right to manage its connections.
func (m *Manager) mayConnect(ctx context.Context, f flow) error {
	if _, ok := m.providers[f.Provider]; !ok {
		return fmt.Errorf("%w: %q (configured: %v)", ErrUnknownProvider, f.Provider, m.Providers())
	}
	if f.Workspace == nil {
		return nil
	}
	if _, err := workspace.Check(ctx, m.o.Store, *f.Workspace, f.By, workspace.ManageConnections); err != nil {
		if errors.Is(err, workspace.ErrForbidden) {
			return fmt.Errorf("%w: connecting an account for workspace %s: %w", ErrForbidden, *f.Workspace, err)
		}
		return err
	}
	return nil
}

// Routes registers GET /connections/{provider}/start and
// GET /connections/{provider}/callback.
func (m *Manager) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /connections/{provider}/start", m.serveStart)
	mux.HandleFunc("GET /connections/{provider}/callback", m.serveCallback)
}

func (m *Manager) serveStart(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, status, err := m.startFlow(r)
	if err == nil {
		err = m.mayConnect(ctx, f)
		if errors.Is(err, ErrForbidden) {
			status = http.StatusForbidden
		}
	}
	if err != nil {
		if status == 0 {
			status = http.StatusInternalServerError
			m.log.ErrorContext(ctx, "starting a connection", "error", err)
		}
		page(w, status, "Not connected", err.Error())
		return
	}
	payload, _ := json.Marshal(f)
	state, err := m.states.New(payload)
	if err != nil {
		page(w, http.StatusInternalServerError, "Not connected", err.Error())
		return
	}
	p := m.providers[f.Provider]
	http.Redirect(w, r, p.OAuth.AuthCodeURL(state, p.AuthParams...), http.StatusFound)
}

// startFlow reads who starts the flow, for whom: a start link's ticket, or
// a bearer token with ?scope=workspace&workspace=ID for a workspace's
// connection. status is the HTTP status of a refusal.
func (m *Manager) startFlow(r *http.Request) (flow, int, error) {
	provider := store.ConnectionProvider(r.PathValue("provider"))
	if _, ok := m.providers[provider]; !ok {
		return flow{}, http.StatusNotFound, fmt.Errorf("%w: %q", ErrUnknownProvider, provider)
	}
	q := r.URL.Query()
	if t := q.Get("ticket"); t != "" {
		payload, err := m.links.Check(r.Context(), t)
		if oauthstate.Refused(err) {
			return flow{}, http.StatusBadRequest, fmt.Errorf("this connect link: %w", err)
		}
		if err != nil {
			return flow{}, 0, err
		}
		var f flow
		if err := json.Unmarshal(payload, &f); err != nil || f.Provider != provider {
			return flow{}, http.StatusBadRequest, fmt.Errorf("this connect link is for another provider")
		}
		return f, 0, nil
	}
	if m.o.AuthenticateFunc == nil || r.Header.Get("Authorization") == "" {
		return flow{}, http.StatusUnauthorized, errors.New("sign in: open the link the bot gave you (`!connections connect " + string(provider) + "`), or send a personal API token as Authorization: Bearer")
	}
	who, err := m.o.AuthenticateFunc(r)
	if err != nil {
		return flow{}, http.StatusUnauthorized, err
	}
	f := flow{Provider: provider, By: who.PersonID}
	switch q.Get("scope") {
	case "", "person":
	case "workspace":
		ws, err := uuid.Parse(q.Get("workspace"))
		if err != nil {
			return flow{}, http.StatusBadRequest, fmt.Errorf("scope=workspace needs workspace=ID, a workspace id (got %q)", q.Get("workspace"))
		}
		if len(who.Workspaces) > 0 && !slices.Contains(who.Workspaces, ws) {
			return flow{}, http.StatusForbidden, fmt.Errorf("%w: this token is not scoped to workspace %s", ErrForbidden, ws)
		}
		f.Workspace = &ws
	default:
		return flow{}, http.StatusBadRequest, fmt.Errorf("scope %q must be person or workspace", q.Get("scope"))
	}
	return f, 0, nil
}

func (m *Manager) serveCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	provider := store.ConnectionProvider(r.PathValue("provider"))
	p, ok := m.providers[provider]
	if !ok {
		page(w, http.StatusNotFound, "Not connected", fmt.Sprintf("%v: %q", ErrUnknownProvider, provider))
		return
	}
	if e := q.Get("error"); e != "" {
		page(w, http.StatusBadRequest, "Not connected", p.Title+" said: "+e)
		return
	}
	payload, err := m.states.Check(ctx, q.Get("state"))
	if err != nil {
		status := http.StatusBadRequest
		if !oauthstate.Refused(err) {
			status = http.StatusInternalServerError
		}
		m.log.WarnContext(ctx, "refusing a connection callback", "provider", provider, "error", err)
		page(w, status, "Not connected", err.Error())
		return
	}
	var f flow
	if err := json.Unmarshal(payload, &f); err != nil || f.Provider != provider {
		page(w, http.StatusBadRequest, "Not connected", "the state was made for another provider")
		return
	}
	conn, err := m.Connect(ctx, f, q.Get("code"))
	switch {
	case errors.Is(err, ErrForbidden):
		page(w, http.StatusForbidden, "Not connected", err.Error())
		return
	case err != nil:
		m.log.ErrorContext(ctx, "connecting an account", "provider", provider, "error", redact.String(err.Error()))
		page(w, http.StatusBadGateway, "Not connected", redact.String(err.Error()))
		return
	}
	whose := "your own"
	if conn.Owner.WorkspaceID != nil {
		whose = "the workspace's"
	}
	page(w, http.StatusOK, p.Title+" connected", fmt.Sprintf("%s account %s is connected as %s. Agents act with it in your conversations; `!connections` lists it.", p.Title, conn.Account, whose))
}

// Connect exchanges an authorization code for tokens, reads whose they
// are and saves the connection (replacing the owner's earlier one).
func (m *Manager) Connect(ctx context.Context, f flow, code string) (*store.Connection, error) {
	if err := m.mayConnect(ctx, f); err != nil {
		return nil, err
	}
	p := m.providers[f.Provider]
	if code == "" {
		return nil, fmt.Errorf("%s sent no code", p.Title)
	}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, m.o.HTTPClient)
	tok, err := p.OAuth.Exchange(hctx, code)
	if err != nil {
		return nil, fmt.Errorf("exchanging the code with %s: %w", p.Title, err)
	}
	redact.AddSecrets(tok.AccessToken, tok.RefreshToken)
	acct, err := p.AccountFunc(ctx, oauth2.NewClient(hctx, oauth2.StaticTokenSource(tok)))
	if err != nil {
		return nil, err
	}
	owner := f.owner()
	access, refresh, err := m.seal(f.Provider, owner, tok)
	if err != nil {
		return nil, err
	}
	conn, err := m.o.Store.ConnectionSave(ctx, &store.ConnectionSaveParams{
		Provider: f.Provider, Owner: owner, Account: acct.Login, AccountID: acct.ID, Scopes: grantedScopes(tok, p),
		AccessToken: access, RefreshToken: refresh, TokenType: tok.TokenType, Expiry: expiry(tok),
		ConnectedBy: f.By, Now: m.o.Now(),
	})
	if err != nil {
		return nil, fmt.Errorf("saving the %s connection of %s: %w", f.Provider, owner, err)
	}
	m.log.InfoContext(ctx, "account connected", "provider", f.Provider, "owner", owner.String(), "account", acct.Login, "connection_id", conn.ID)
	return conn, nil
}

// grantedScopes are the scopes the token response names (GitHub: "scope",
// comma-separated; Google: "scope", space-separated), else those asked for.
func grantedScopes(tok *oauth2.Token, p *Provider) []string {
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	}
	return p.OAuth.Scopes
}

func expiry(tok *oauth2.Token) *time.Time {
	if tok.Expiry.IsZero() {
		return nil
	}
	t := tok.Expiry.UTC()
	return &t
}

func (m *Manager) seal(p store.ConnectionProvider, o store.ConnectionOwner, tok *oauth2.Token) (access, refresh string, err error) {
	a, err := m.o.Keys.Seal([]byte(tok.AccessToken), store.ConnectionAAD(p, o, "access"))
	if err != nil {
		return "", "", fmt.Errorf("refusing to store the %s token: %w", p, err)
	}
	if tok.RefreshToken == "" {
		return string(a), "", nil
	}
	r, err := m.o.Keys.Seal([]byte(tok.RefreshToken), store.ConnectionAAD(p, o, "refresh"))
	if err != nil {
		return "", "", fmt.Errorf("refusing to store the %s refresh token: %w", p, err)
	}
	return string(a), string(r), nil
}

// open reads a connection's tokens.
func (m *Manager) open(c *store.Connection) (*oauth2.Token, error) {
	a, err := m.o.Keys.Open(secret.Sealed(c.AccessToken), store.ConnectionAAD(c.Provider, c.Owner, "access"))
	if err != nil {
		return nil, fmt.Errorf("opening the token of connection %s: %w", c.ID, err)
	}
	tok := &oauth2.Token{AccessToken: string(a), TokenType: c.TokenType}
	if c.RefreshToken != "" {
		r, err := m.o.Keys.Open(secret.Sealed(c.RefreshToken), store.ConnectionAAD(c.Provider, c.Owner, "refresh"))
		if err != nil {
			return nil, fmt.Errorf("opening the refresh token of connection %s: %w", c.ID, err)
		}
		tok.RefreshToken = string(r)
	}
	if c.Expiry != nil {
		tok.Expiry = *c.Expiry
	}
	redact.AddSecrets(tok.AccessToken, tok.RefreshToken)
	return tok, nil
}

func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p>\n", html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}
