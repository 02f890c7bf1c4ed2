package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/mcptest"
	"github.com/switchboardhq/switchboard/secret"
)

func testKeys(t *testing.T) *secret.Keyring {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	keys, err := secret.ParseKeys(base64.StdEncoding.EncodeToString(k))
	require.NoError(t, err)
	return keys
}

// TestOAuthServer: a server with "oauth": {} answers 401; the manager
// discovers its authorization server, registers, shows the authorization
// URL in its status and waits; the person (here an HTTP client following
// the URL) is sent back to Switchboard's callback, the code is exchanged
// with PKCE, and the tools are offered. The grant is stored sealed: a new
// manager (a restart) connects without asking anyone, and once the access
// token no longer works it is refreshed, not re-authorized.
func TestOAuthServer(t *testing.T) {
	f := mcptest.NewOAuthServer(t)
	cb := NewCallbacks()
	callback := httptest.NewServer(cb)
	t.Cleanup(callback.Close)
	dir := t.TempDir()
	store := &SealedTokens{Dir: dir, Keys: testKeys(t)}
	cfg := &Config{Servers: map[string]*Server{"prot": {Name: "prot", URL: f.MCPURL(), OAuth: &OAuth{}, Risk: Risk{Default: tool.RiskLow}}}}
	newManager := func(reg *tool.Registry) *Manager {
		m, err := New(Options{
			Config: cfg, Registry: reg, Logger: slog.New(slog.DiscardHandler), ConnectTimeout: 10 * time.Second, MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
			OAuth: &OAuthOptions{RedirectURL: callback.URL + "/mcp/oauth/callback", Authorize: cb.Authorize, Tokens: store},
		})
		require.NoError(t, err)
		return m
	}
	ctx := t.Context()

	reg := tool.NewRegistry()
	m := newManager(reg)
	start := time.Now()
	require.NoError(t, m.Start(ctx))
	require.Less(t, time.Since(start), 5*time.Second, "Start does not wait for a person")
	var authURL string
	require.Eventually(t, func() bool {
		st := m.Status()[0]
		authURL = st.AuthorizeURL
		return st.State == StateAuthorizing && authURL != ""
	}, 10*time.Second, 10*time.Millisecond, "the status shows where to authorize")
	require.Empty(t, reg.List(), "no tool before the authorization")
	resp, err := http.Get(authURL) // the person's browser, through to the callback
	require.NoError(t, err)
	page := readAll(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	require.Contains(t, page, "Switchboard can now reach MCP server prot")
	waitConnected(t, m)
	out := callTool(t, reg, "prot__whoami")
	require.Contains(t, out, "caller person-1")
	registered, codes, _ := f.Counts()
	require.Equal(t, 1, registered, "registered dynamically once")
	require.Equal(t, 1, codes)

	raw, err := os.ReadFile(filepath.Join(dir, "mcp-oauth-prot.sealed"))
	require.NoError(t, err)
	require.NotContains(t, string(raw), "access-1", "the token is sealed at rest")
	require.NotContains(t, string(raw), "refresh-1")
	g, err := store.Load(ctx, "prot")
	require.NoError(t, err)
	require.Equal(t, "access-1", g.Token.AccessToken)
	require.Equal(t, f.URL()+"/token", g.TokenURL)
	require.NoError(t, m.Stop(ctx))

	// A restart: the stored grant is used, nobody is asked.
	reg2 := tool.NewRegistry()
	m2 := newManager(reg2)
	require.NoError(t, m2.Start(ctx))
	waitConnected(t, m2)
	require.Contains(t, callTool(t, reg2, "prot__whoami"), "caller person-1")
	require.NoError(t, m2.Stop(ctx))

	// The access token stops working and is past its expiry: the next
	// start refreshes it with the stored refresh token.
	f.Expire()
	g.Token.Expiry = time.Now().Add(-time.Minute)
	require.NoError(t, store.Save(ctx, "prot", g))
	reg3 := tool.NewRegistry()
	m3 := newManager(reg3)
	require.NoError(t, m3.Start(ctx))
	waitConnected(t, m3)
	require.Contains(t, callTool(t, reg3, "prot__whoami"), "caller person-1")
	registered, codes, refreshes := f.Counts()
	require.Equal(t, []int{1, 1, 1}, []int{registered, codes, refreshes}, "refreshed, not registered or authorized again")
	g3, err := store.Load(ctx, "prot")
	require.NoError(t, err)
	require.Equal(t, "access-2", g3.Token.AccessToken, "the refreshed token is stored")
	require.NoError(t, m3.Stop(ctx))
}

func waitConnected(t *testing.T, m *Manager) {
	t.Helper()
	require.Eventually(t, func() bool { return m.Status()[0].State == StateConnected }, 15*time.Second, 10*time.Millisecond, "connected: %+v", m.Status())
}

func callTool(t *testing.T, reg *tool.Registry, name string) string {
	t.Helper()
	tl, ok := reg.Get(name)
	require.True(t, ok, "tool %s offered", name)
	res := tl.Call(t.Context(), &tool.Request{Agent: "a"}, json.RawMessage(`{}`))
	require.False(t, res.IsError, "%s", res.Output)
	return strings.TrimSpace(string(res.Output))
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestOAuthCallbackRefusals: an unknown state is refused, and an
// authorization server's error ends the waiting attempt with that error.
func TestOAuthCallbackRefusals(t *testing.T) {
	cb := NewCallbacks()
	srv := httptest.NewServer(cb)
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "?code=x&state=nobody")
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, readAll(t, resp), "No MCP server is waiting")

	errc := make(chan error, 1)
	go func() {
		_, err := cb.Authorize(t.Context(), AuthorizeRequest{Server: "prot", URL: "https://as.example/authorize?state=s1"})
		errc <- err
	}()
	require.Eventually(t, func() bool { cb.mu.Lock(); defer cb.mu.Unlock(); return len(cb.pending) == 1 }, 5*time.Second, 5*time.Millisecond)
	resp, err = http.Get(srv.URL + "?state=s1&error=access_denied&error_description=no")
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.ErrorContains(t, <-errc, "access_denied")

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = cb.Authorize(ctx, AuthorizeRequest{Server: "prot", URL: "https://as.example/authorize?state=s2"})
	require.ErrorContains(t, err, "nobody authorized MCP server prot in time")
}

// TestSealedTokens: a grant opens only for its own server and only with
// the key.
func TestSealedTokens(t *testing.T) {
	dir := t.TempDir()
	keys := testKeys(t)
	st := &SealedTokens{Dir: dir, Keys: keys}
	ctx := t.Context()
	g, err := st.Load(ctx, "a")
	require.NoError(t, err)
	require.Nil(t, g)
	require.NoError(t, st.Save(ctx, "a", &Grant{Token: &oauth2.Token{AccessToken: "tok-a", RefreshToken: "ref-a"}, ClientSecret: "cs-a"}))
	raw, err := os.ReadFile(filepath.Join(dir, "mcp-oauth-a.sealed"))
	require.NoError(t, err)
	for _, s := range []string{"tok-a", "ref-a", "cs-a"} {
		require.NotContains(t, string(raw), s)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mcp-oauth-b.sealed"), raw, 0o600))
	_, err = st.Load(ctx, "b")
	require.ErrorIs(t, err, secret.ErrOpen, "a grant copied to another server does not open")
	_, err = (&SealedTokens{Dir: dir, Keys: testKeys(t)}).Load(ctx, "a")
	require.ErrorIs(t, err, secret.ErrOpen, "another key does not open it")
	require.ErrorIs(t, (&SealedTokens{Dir: dir}).Save(ctx, "a", &Grant{Token: &oauth2.Token{AccessToken: "x"}}), secret.ErrNoKey)
}

// TestElicitDefaults: "elicitation": "defaults" fills a form with its
// defaults and declines one with a required field without a default.
func TestElicitDefaults(t *testing.T) {
	got, ok := formDefaults(map[string]any{"type": "object", "properties": map[string]any{
		"name": map[string]any{"type": "string", "default": "John"}, "age": map[string]any{"type": "integer", "default": 30}, "note": map[string]any{"type": "string"},
	}, "required": []string{"name"}})
	require.True(t, ok)
	require.Equal(t, map[string]any{"name": "John", "age": float64(30)}, got)
	_, ok = formDefaults(map[string]any{"type": "object", "properties": map[string]any{"note": map[string]any{"type": "string"}}, "required": []string{"note"}})
	require.False(t, ok)
}

// TestOAuthConfig: the oauth entry is read with ${VAR} expanded and its
// secret redacted; without Switchboard's callback (as in `switchboard
// doctor`) the server fails to connect with an error naming the settings.
func TestOAuthConfig(t *testing.T) {
	env := func(k string) string { return map[string]string{"CS": "client-secret-value"}[k] }
	c, err := Parse([]byte(`{"mcpServers": {"remote": {"url": "https://mcp.example.com/mcp",
		"oauth": {"client_id": "sb", "client_secret": "${CS}", "scopes": ["read", "write"]}}}}`), env)
	require.NoError(t, err)
	o := c.Servers["remote"].OAuth
	require.Equal(t, &OAuth{ClientID: "sb", ClientSecret: "client-secret-value", Scopes: []string{"read", "write"}}, o)
	require.Contains(t, c.Secrets(), "client-secret-value")
	require.Equal(t, []string{"remote"}, c.NeedsOAuth())
	m, err := New(Options{Config: c, Registry: tool.NewRegistry(), ConnectTimeout: time.Second, MinBackoff: time.Hour, MaxBackoff: time.Hour})
	require.NoError(t, err)
	require.NoError(t, m.Start(t.Context()))
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	st := m.Status()[0]
	require.Equal(t, StateDisconnected, st.State, "without OAuth options the server cannot connect")
	require.Contains(t, st.Error, "MCP server remote: it has oauth, which needs Switchboard's OAuth callback: set SWITCHBOARD_PUBLIC_URL and SWITCHBOARD_SECRET_KEY")
	_, err = New(Options{Config: c, Registry: tool.NewRegistry(), OAuth: &OAuthOptions{RedirectURL: "/cb", Authorize: NewCallbacks().Authorize, Tokens: &SealedTokens{}}})
	require.ErrorContains(t, err, "Options.OAuth.RedirectURL \"/cb\" must be an absolute URL")
}
