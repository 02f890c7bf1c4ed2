// Package oauthtest is a local OAuth 2.0 provider for tests, in GitHub's or
// Google's flavour: the authorize page (a person already signed in consents
// at once), the token endpoint (authorization code and refresh token
// grants, client authentication, expiring access tokens, rotated refresh
// tokens) and revocation. Fake APIs ask it whose a bearer token is
// (AccountOf), so an expired or revoked token is refused there as the real
// API would.
package oauthtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Flavor is which provider's endpoints and token shapes the server imitates.
type Flavor string

const (
	GitHub Flavor = "github"
	Google Flavor = "google"
)

// Account is a person signed in at the provider.
type Account struct {
	ID    string
	Login string // GitHub login
	Email string // Google email
}

// Options configures a Server.
type Options struct {
	Flavor       Flavor
	ClientID     string
	ClientSecret string
	// TokenTTL is how long access tokens live; 0: they never expire (GitHub
	// OAuth apps). A TTL also brings refresh tokens on GitHub (GitHub Apps'
	// expiring user tokens); Google always sends one on offline access.
	TokenTTL time.Duration
}

type token struct {
	account Account
	expires time.Time // zero: never
	revoked bool
}

type grant struct {
	account     Account
	redirectURI string
	used        bool
}

// Server is the fake provider.
type Server struct {
	tb   testing.TB
	o    Options
	srv  *httptest.Server
	mu   sync.Mutex
	skew time.Duration // the provider's clock ahead of the wall clock
	user *Account
	// codes, access and refresh tokens by value.
	codes     map[string]*grant
	access    map[string]*token
	refresh   map[string]*token
	refreshes int
	revokes   []string
}

// New starts a fake provider; tb's cleanup stops it.
func New(tb testing.TB, o Options) *Server {
	s := &Server{tb: tb, o: o, codes: map[string]*grant{}, access: map[string]*token{}, refresh: map[string]*token{}}
	mux := http.NewServeMux()
	switch o.Flavor {
	case GitHub:
		mux.HandleFunc("GET /login/oauth/authorize", s.authorize)
		mux.HandleFunc("POST /login/oauth/access_token", s.token)
	case Google:
		mux.HandleFunc("GET /o/oauth2/v2/auth", s.authorize)
		mux.HandleFunc("POST /token", s.token)
		mux.HandleFunc("POST /revoke", s.googleRevoke)
	default:
		tb.Fatalf("oauthtest: unknown flavor %q", o.Flavor)
	}
	s.srv = httptest.NewServer(mux)
	tb.Cleanup(s.srv.Close)
	return s
}

// URL is the server's base URL (SWITCHBOARD_GITHUB_OAUTH_URL or
// SWITCHBOARD_GOOGLE_OAUTH_URL).
func (s *Server) URL() string { return s.srv.URL }

// SignIn makes a the person signed in at the provider: the next authorize
// consents as them.
func (s *Server) SignIn(a Account) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user = &a
}

// SetTokenTTL changes the lifetime of access tokens issued from now on.
func (s *Server) SetTokenTTL(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.o.TokenTTL = d
}

// Advance moves the provider's clock forward: tokens expire by it.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skew += d
}

func (s *Server) clock() time.Time { return time.Now().Add(s.skew) }

// Authorize plays the browser at the authorize page: it GETs authURL and
// returns where the provider redirects it (the callback with a code).
func (s *Server) Authorize(authURL string) (*url.URL, error) {
	if !strings.HasPrefix(authURL, s.srv.URL+"/") {
		return nil, fmt.Errorf("oauthtest: %q is not this provider's authorize page (%s)", authURL, s.srv.URL)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("oauthtest: authorize answered %s", resp.Status)
	}
	return url.Parse(resp.Header.Get("Location"))
}

// AccountOf returns the account a bearer token acts as, if it is a live
// access token (issued, not expired, not revoked).
func (s *Server) AccountOf(tok string) (Account, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.access[tok]
	if !ok || t.revoked || (!t.expires.IsZero() && !s.clock().Before(t.expires)) {
		return Account{}, false
	}
	return t.account, true
}

// Bearer reads a request's "Authorization: Bearer" token and the account
// it acts as (ok false when the token is not a live access token).
func (s *Server) Bearer(r *http.Request) (tok string, acct Account, ok bool) {
	tok, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	acct, ok = s.AccountOf(tok)
	return tok, acct, ok
}

// Refreshes counts the refresh-token grants served.
func (s *Server) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}

// Revocations lists the tokens revoked, in order.
func (s *Server) Revocations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.revokes)
}

// Issued lists every access and refresh token issued so far.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for t := range s.access {
		out = append(out, t)
	}
	for t := range s.refresh {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

func random(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("client_id") != s.o.ClientID:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case err != nil || redirect.Scheme == "" || redirect.Host == "":
		http.Error(w, "redirect_uri must be an absolute URL", http.StatusBadRequest)
		return
	case q.Get("state") == "":
		http.Error(w, "state is required by this fake (the client must send one)", http.StatusBadRequest)
		return
	case s.o.Flavor == Google && (q.Get("response_type") != "code" || q.Get("access_type") != "offline" || q.Get("scope") == ""):
		http.Error(w, "google: response_type=code, access_type=offline and a scope are required", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	user := s.user
	code := random("code-")
	if user != nil {
		s.codes[code] = &grant{account: *user, redirectURI: redirect.String()}
	}
	s.mu.Unlock()
	if user == nil {
		http.Error(w, "oauthtest: nobody is signed in (call SignIn)", http.StatusUnauthorized)
		return
	}
	v := redirect.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	redirect.RawQuery = v.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// clientOK checks the client's credentials, in the body or as basic auth.
func (s *Server) clientOK(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	return id == s.o.ClientID && secret == s.o.ClientSecret
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.tokenError(w, r, "invalid_request", err.Error())
		return
	}
	if !s.clientOK(r) {
		s.tokenError(w, r, "invalid_client", "the client id or secret is wrong")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var acct Account
	var withRefresh bool
	switch r.PostForm.Get("grant_type") {
	case "authorization_code", "":
		g, ok := s.codes[r.PostForm.Get("code")]
		if !ok || g.used {
			s.tokenError(w, r, "bad_verification_code", "the code is wrong, used or expired")
			return
		}
		if ru := r.PostForm.Get("redirect_uri"); ru != "" && ru != g.redirectURI {
			s.tokenError(w, r, "redirect_uri_mismatch", "redirect_uri differs from the authorize request's")
			return
		}
		g.used = true
		acct = g.account
		withRefresh = s.o.Flavor == Google || s.o.TokenTTL > 0
	case "refresh_token":
		old, ok := s.refresh[r.PostForm.Get("refresh_token")]
		if !ok || old.revoked {
			s.tokenError(w, r, "invalid_grant", "the refresh token is wrong or revoked")
			return
		}
		s.refreshes++
		acct = old.account
		// GitHub rotates refresh tokens; Google keeps the one it gave.
		if s.o.Flavor == GitHub {
			old.revoked = true
			withRefresh = true
		}
	default:
		s.tokenError(w, r, "unsupported_grant_type", r.PostForm.Get("grant_type"))
		return
	}
	resp := map[string]any{}
	access := s.newToken(acct)
	resp["access_token"] = access
	if s.o.TokenTTL > 0 {
		resp["expires_in"] = int(s.o.TokenTTL.Seconds())
	}
	if withRefresh {
		rt := random(map[Flavor]string{GitHub: "ghr_", Google: "1//"}[s.o.Flavor])
		s.refresh[rt] = &token{account: acct}
		resp["refresh_token"] = rt
	}
	switch s.o.Flavor {
	case GitHub:
		resp["token_type"], resp["scope"] = "bearer", "repo,read:user"
	case Google:
		resp["token_type"], resp["scope"] = "Bearer", "openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/gmail.readonly"
	}
	s.answer(w, r, http.StatusOK, resp)
}

func (s *Server) newToken(a Account) string {
	t := random(map[Flavor]string{GitHub: "gho_", Google: "ya29."}[s.o.Flavor])
	tk := &token{account: a}
	if s.o.TokenTTL > 0 {
		tk.expires = s.clock().Add(s.o.TokenTTL)
	}
	s.access[t] = tk
	return t
}

// answer writes a token response: JSON, or for GitHub without an Accept of
// JSON, form-encoded as GitHub does.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, status int, v map[string]any) {
	if s.o.Flavor == GitHub && !strings.Contains(r.Header.Get("Accept"), "json") {
		f := url.Values{}
		for k, x := range v {
			f.Set(k, fmt.Sprint(x))
		}
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(f.Encode()))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) tokenError(w http.ResponseWriter, r *http.Request, code, desc string) {
	status := http.StatusBadRequest
	if s.o.Flavor == GitHub {
		status = http.StatusOK // GitHub answers errors with 200 and an error field
	}
	s.answer(w, r, status, map[string]any{"error": code, "error_description": desc})
}

// RevokeGrant revokes every token of the account that token belongs to, as
// GitHub's DELETE /applications/{client_id}/grant does; false when the
// token is unknown. Fake APIs call it after checking the app's basic auth.
func (s *Server) RevokeGrant(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.access[tok]
	if !ok {
		return false
	}
	s.revokeAccount(t.account)
	s.revokes = append(s.revokes, tok)
	return true
}

// ClientOK checks an app's credentials (for a fake API's basic auth).
func (s *Server) ClientOK(id, secret string) bool {
	return id == s.o.ClientID && secret == s.o.ClientSecret
}

func (s *Server) revokeAccount(a Account) {
	for _, m := range []map[string]*token{s.access, s.refresh} {
		for _, t := range m {
			if t.account.ID == a.ID {
				t.revoked = true
			}
		}
	}
}

func (s *Server) googleRevoke(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	tok := r.Form.Get("token")
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refresh[tok]
	if !ok {
		t, ok = s.access[tok]
	}
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_token","error_description":"Token expired or revoked"}`))
		return
	}
	s.revokeAccount(t.account)
	s.revokes = append(s.revokes, tok)
	w.WriteHeader(http.StatusOK)
}
