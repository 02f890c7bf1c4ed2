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
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/mcptest"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func testKeys(t *testing.T) *secret.Keyring {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	keys, err := secret.ParseKeys(base64.StdEncoding.EncodeToString(k))
	require.NoError(t, err)
	return keys
}

// sharedStores runs f on SQLite and on Postgres with two handles on one
// database, as two instances have (SQLite: one store, as it serves one
// instance).
func sharedStores(t *testing.T, f func(t *testing.T, a, b store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		s := testenv.SQLite(t)
		f(t, s, s)
	})
	t.Run("postgres", func(t *testing.T) {
		schema := testenv.PostgresSchema(t)
		f(t, testenv.Postgres(t, schema), testenv.Postgres(t, schema))
	})
}

// oauthRig is one OAuth-protected MCP server and what an instance needs to
// reach it: the callback, the keys, the config.
type oauthRig struct {
	f    *mcptest.OAuthServer
	cb   *Callbacks
	url  string // the callback's
	keys *secret.Keyring
	cfg  *Config
}

func newOAuthRig(t *testing.T) *oauthRig {
	r := &oauthRig{f: mcptest.NewOAuthServer(t), cb: NewCallbacks(), keys: testKeys(t)}
	callback := httptest.NewServer(r.cb)
	t.Cleanup(callback.Close)
	r.url = callback.URL + "/mcp/oauth/callback"
	r.cfg = &Config{Servers: map[string]*Server{"prot": {Name: "prot", URL: r.f.MCPURL(), OAuth: &OAuth{}, Risk: Risk{Default: tool.RiskLow}}}}
	return r
}

// manager is an instance's MCP client on st.
func (r *oauthRig) manager(t *testing.T, st store.Store, reg *tool.Registry) *Manager {
	m, err := New(Options{
		Config: r.cfg, Registry: reg, Logger: testenv.Logger(t), ConnectTimeout: 10 * time.Second, MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		OAuth: &OAuthOptions{RedirectURL: r.url, Authorize: r.cb.Authorize, Tokens: &StoreTokens{Store: st, Keys: r.keys}, Poll: 50 * time.Millisecond},
	})
	require.NoError(t, err)
	return m
}

// signIn waits for m to show its authorization URL and follows it as the
// person's browser does, through to the callback.
func signIn(t *testing.T, m *Manager) {
	t.Helper()
	var authURL string
	require.Eventually(t, func() bool {
		st := m.Status()[0]
		authURL = st.AuthorizeURL
		return st.State == StateAuthorizing && authURL != ""
	}, 10*time.Second, 10*time.Millisecond, "the status shows where to authorize")
	resp, err := http.Get(authURL)
	require.NoError(t, err)
	page := readAll(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	require.Contains(t, page, "Switchboard can now reach MCP server prot")
}

// TestOAuthServer: a server with "oauth": {} answers 401; the manager
// discovers its authorization server, registers, shows the authorization
// URL in its status and waits; the person (here an HTTP client following
// the URL) is sent back to Switchboard's callback, the code is exchanged
// with PKCE, and the tools are offered. The grant is stored sealed in the
// database: a new manager (a restart) connects without asking anyone, and
// once the access token no longer works it is refreshed, not
// re-authorized. On SQLite and on Postgres.
func TestOAuthServer(t *testing.T) {
	t.Parallel()
	sharedStores(t, func(t *testing.T, st, _ store.Store) {
		r := newOAuthRig(t)
		f := r.f
		tokens := &StoreTokens{Store: st, Keys: r.keys}
		ctx := t.Context()

		reg := tool.NewRegistry()
		m := r.manager(t, st, reg)
		start := time.Now()
		require.NoError(t, m.Start(ctx))
		require.Less(t, time.Since(start), 5*time.Second, "Start does not wait for a person")
		require.Eventually(t, func() bool { return m.Status()[0].State == StateAuthorizing }, 10*time.Second, 10*time.Millisecond)
		require.Empty(t, reg.List(), "no tool before the authorization")
		signIn(t, m)
		waitConnected(t, m)
		require.Contains(t, callTool(t, reg, "prot__whoami"), "caller person-1")
		registered, codes, _ := f.Counts()
		require.Equal(t, 1, registered, "registered dynamically once")
		require.Equal(t, 1, codes)

		g, err := tokens.Load(ctx, GrantKey{Server: "prot"})
		require.NoError(t, err)
		require.Equal(t, "access-1", g.Token.AccessToken)
		require.Equal(t, f.URL()+"/token", g.TokenURL)
		require.Equal(t, "client-1", g.ClientID, "the dynamic registration is kept with the token")
		require.NoError(t, m.Stop(ctx))

		// A restart: the stored grant is used, nobody is asked.
		reg2 := tool.NewRegistry()
		m2 := r.manager(t, st, reg2)
		require.NoError(t, m2.Start(ctx))
		waitConnected(t, m2)
		require.Contains(t, callTool(t, reg2, "prot__whoami"), "caller person-1")
		require.NoError(t, m2.Stop(ctx))

		// The access token stops working and is past its expiry: the next
		// start refreshes it with the stored refresh token.
		f.Expire()
		g.Token.Expiry = time.Now().Add(-time.Minute)
		_, err = tokens.Swap(ctx, GrantKey{Server: "prot"}, g.Version, g)
		require.NoError(t, err)
		reg3 := tool.NewRegistry()
		m3 := r.manager(t, st, reg3)
		require.NoError(t, m3.Start(ctx))
		waitConnected(t, m3)
		require.Contains(t, callTool(t, reg3, "prot__whoami"), "caller person-1")
		registered, codes, refreshes := f.Counts()
		require.Equal(t, []int{1, 1, 1}, []int{registered, codes, refreshes}, "refreshed, not registered or authorized again")
		g3, err := tokens.Load(ctx, GrantKey{Server: "prot"})
		require.NoError(t, err)
		require.Equal(t, "access-2", g3.Token.AccessToken, "the refreshed token is stored")
		require.NoError(t, m3.Stop(ctx))
	})
}

// TestOAuthSharedInstances: two instances on one database both wait for a
// person; the person signs in on instance A only, and instance B connects
// with A's grant without anyone signing in again. An instance started
// later connects at once. When A's token is retired (as a refresh elsewhere
// does), A takes the stored one instead of asking a person.
func TestOAuthSharedInstances(t *testing.T) {
	t.Parallel()
	sharedStores(t, func(t *testing.T, a, b store.Store) {
		r := newOAuthRig(t)
		ctx := t.Context()
		regA, regB := tool.NewRegistry(), tool.NewRegistry()
		mA, mB := r.manager(t, a, regA), r.manager(t, b, regB)
		require.NoError(t, mA.Start(ctx))
		t.Cleanup(func() { _ = mA.Stop(context.Background()) })
		require.NoError(t, mB.Start(ctx))
		t.Cleanup(func() { _ = mB.Stop(context.Background()) })
		require.Eventually(t, func() bool { return mB.Status()[0].State == StateAuthorizing }, 10*time.Second, 10*time.Millisecond, "B waits for a person too")

		signIn(t, mA)
		waitConnected(t, mA)
		waitConnected(t, mB)
		require.Contains(t, callTool(t, regA, "prot__whoami"), "caller person-1")
		require.Contains(t, callTool(t, regB, "prot__whoami"), "caller person-1", "B uses A's grant")
		_, codes, _ := r.f.Counts()
		require.Equal(t, 1, codes, "one person signed in once")

		regC := tool.NewRegistry()
		mC := r.manager(t, b, regC)
		require.NoError(t, mC.Start(ctx))
		t.Cleanup(func() { _ = mC.Stop(context.Background()) })
		waitConnected(t, mC)
		require.Contains(t, callTool(t, regC, "prot__whoami"), "caller person-1")

		// Another instance refreshed: the token A holds no longer works,
		// the stored one does.
		tokens := &StoreTokens{Store: b, Keys: r.keys}
		g, err := tokens.Load(ctx, GrantKey{Server: "prot"})
		require.NoError(t, err)
		r.f.Expire()
		fresh := refreshAt(t, r.f, g)
		_, err = tokens.Swap(ctx, GrantKey{Server: "prot"}, g.Version, fresh)
		require.NoError(t, err)
		require.Contains(t, callTool(t, regA, "prot__whoami"), "caller person-1", "A takes the stored token")
		_, codes, _ = r.f.Counts()
		require.Equal(t, 1, codes, "nobody was asked again")
	})
}

// refreshAt refreshes g at the fake's token endpoint, as another instance
// would.
func refreshAt(t *testing.T, f *mcptest.OAuthServer, g *Grant) *Grant {
	t.Helper()
	tok, err := g.config().TokenSource(t.Context(), &oauth2.Token{RefreshToken: g.Token.RefreshToken}).Token()
	require.NoError(t, err)
	require.True(t, f.Accepts(tok.AccessToken))
	next := *g
	next.Token = tok
	return &next
}

// TestOAuthConcurrentRefresh: instances holding the same expired token
// refresh at once. Whether the authorization server lets a refresh token
// be used once (the losers are refused and wait for the winner's grant) or
// many times (every refresh succeeds and the compare-and-swap picks one),
// every instance ends with the one token stored, and it works.
func TestOAuthConcurrentRefresh(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"rotating", "reusable"} {
		t.Run(mode, func(t *testing.T) {
			sharedStores(t, func(t *testing.T, a, b store.Store) {
				r := newOAuthRig(t)
				if mode == "reusable" {
					r.f.KeepRefreshTokens()
				}
				ctx := t.Context()
				m := r.manager(t, a, tool.NewRegistry())
				require.NoError(t, m.Start(ctx))
				signIn(t, m)
				waitConnected(t, m)
				require.NoError(t, m.Stop(ctx))

				key := GrantKey{Server: "prot"}
				tokens := &StoreTokens{Store: a, Keys: r.keys}
				g, err := tokens.Load(ctx, key)
				require.NoError(t, err)
				g.Token.Expiry = time.Now().Add(-time.Minute)
				expired, err := tokens.Swap(ctx, key, g.Version, g)
				require.NoError(t, err)

				const n = 6
				srcs := make([]*sharedSource, n)
				for i := range srcs {
					st := a
					if i%2 == 1 {
						st = b
					}
					srcs[i] = &sharedSource{key: key, tokens: &StoreTokens{Store: st, Keys: r.keys}, hctx: context.Background(), log: testenv.Logger(t), wait: 10 * time.Second}
					held, err := srcs[i].tokens.Load(ctx, key)
					require.NoError(t, err)
					srcs[i].adopt(held)
				}
				got := make([]string, n)
				errs := make([]error, n)
				var wg sync.WaitGroup
				for i, s := range srcs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						tok, err := s.Token()
						if err == nil {
							got[i] = tok.AccessToken
						}
						errs[i] = err
					}()
				}
				wg.Wait()
				for i, err := range errs {
					require.NoError(t, err, "instance %d refreshing", i)
				}
				stored, err := tokens.Load(ctx, key)
				require.NoError(t, err)
				for i, tok := range got {
					require.Equal(t, stored.Token.AccessToken, tok, "instance %d uses the stored token", i)
				}
				require.True(t, r.f.Accepts(stored.Token.AccessToken), "the stored token works")
				require.Equal(t, expired+1, stored.Version, "one refresh was stored")
				_, _, refreshes := r.f.Counts()
				require.GreaterOrEqual(t, refreshes, 1)

				// And it refreshes again: the stored refresh token is live.
				r.f.Expire()
				again := refreshAt(t, r.f, stored)
				require.NotEqual(t, stored.Token.AccessToken, again.Token.AccessToken)
			})
		})
	}
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
	t.Parallel()
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

// TestStoreTokensSealed: the row holds the grant sealed: no token, refresh
// token or client secret in it; it opens only for its own server and
// workspace and only with the key, and nothing is stored without a key.
func TestStoreTokensSealed(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := open(t)
		keys := testKeys(t)
		tokens := &StoreTokens{Store: st, Keys: keys}
		ctx := t.Context()
		k := GrantKey{Server: "a", Workspace: "T1"}
		g, err := tokens.Load(ctx, k)
		require.NoError(t, err)
		require.Nil(t, g)
		v, err := tokens.Save(ctx, k, &Grant{Token: &oauth2.Token{AccessToken: "tok-a", RefreshToken: "ref-a"}, ClientID: "cid-a", ClientSecret: "cs-a"})
		require.NoError(t, err)
		row, err := st.MCPGrantGet(ctx, &store.MCPGrantKey{Server: "a", Workspace: "T1"})
		require.NoError(t, err)
		require.Equal(t, v, row.Version)
		for _, s := range []string{"tok-a", "ref-a", "cs-a", "cid-a"} {
			require.NotContains(t, row.SealedGrant, s, "the row holds no clear text")
		}
		g, err = tokens.Load(ctx, k)
		require.NoError(t, err)
		require.Equal(t, "tok-a", g.Token.AccessToken)
		require.Equal(t, v, g.Version)

		// The sealed value copied onto another server's row does not open.
		_, err = st.MCPGrantPut(ctx, &store.MCPGrantPutParams{MCPGrantKey: store.MCPGrantKey{Server: "b", Workspace: "T1"}, SealedGrant: row.SealedGrant})
		require.NoError(t, err)
		_, err = tokens.Load(ctx, GrantKey{Server: "b", Workspace: "T1"})
		require.ErrorIs(t, err, secret.ErrOpen, "a grant copied to another server does not open")
		_, err = (&StoreTokens{Store: st, Keys: testKeys(t)}).Load(ctx, k)
		require.ErrorIs(t, err, secret.ErrOpen, "another key does not open it")
		_, err = (&StoreTokens{Store: st}).Save(ctx, k, &Grant{Token: &oauth2.Token{AccessToken: "x"}})
		require.ErrorIs(t, err, secret.ErrNoKey)

		_, err = tokens.Swap(ctx, k, v+5, &Grant{Token: &oauth2.Token{AccessToken: "stale"}})
		require.ErrorIs(t, err, ErrGrantChanged, "a swap from a version not stored")
		g, err = tokens.Load(ctx, k)
		require.NoError(t, err)
		require.Equal(t, "tok-a", g.Token.AccessToken, "a lost swap changes nothing")
	})
}

// TestImportFiles: a token file of an earlier version, found where the
// database holds no grant for the server, is imported once; a file where
// the database holds one is ignored, so a newer grant is never replaced.
func TestImportFiles(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := open(t)
		keys := testKeys(t)
		dir := t.TempDir()
		ctx := t.Context()
		writeLegacy := func(server string, g *Grant) {
			plain, err := json.Marshal(g)
			require.NoError(t, err)
			sealed, err := keys.Seal(plain, "mcp_oauth_token:"+server)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "mcp-oauth-"+server+".sealed"), []byte(sealed), 0o600))
		}
		writeLegacy("old", &Grant{Token: &oauth2.Token{AccessToken: "file-old", RefreshToken: "r-old"}, TokenURL: "https://as.example/token", ClientID: "c1"})
		writeLegacy("newer", &Grant{Token: &oauth2.Token{AccessToken: "file-newer"}})
		tokens := &StoreTokens{Store: st, Keys: keys}
		_, err := tokens.Save(ctx, GrantKey{Server: "newer"}, &Grant{Token: &oauth2.Token{AccessToken: "db-newer"}})
		require.NoError(t, err)

		all := []GrantKey{{Server: "old"}, {Server: "newer"}, {Server: "nofile"}}
		log := &testenv.Buffer{}
		done, err := tokens.ImportFiles(ctx, dir, all, slog.New(slog.NewTextHandler(log, nil)))
		require.NoError(t, err)
		require.Equal(t, []GrantKey{{Server: "old"}}, done)
		require.Contains(t, log.String(), "imported the MCP server's OAuth token file into the database")
		g, err := tokens.Load(ctx, GrantKey{Server: "old"})
		require.NoError(t, err)
		require.Equal(t, &Grant{Token: g.Token, TokenURL: "https://as.example/token", ClientID: "c1", Version: 1}, g)
		require.Equal(t, "file-old", g.Token.AccessToken)
		require.Equal(t, "r-old", g.Token.RefreshToken)
		g, err = tokens.Load(ctx, GrantKey{Server: "newer"})
		require.NoError(t, err)
		require.Equal(t, "db-newer", g.Token.AccessToken, "the database's grant wins over a file")

		done, err = tokens.ImportFiles(ctx, dir, all, nil)
		require.NoError(t, err)
		require.Empty(t, done, "imported once")

		_, err = (&StoreTokens{Store: st, Keys: testKeys(t)}).ImportFiles(ctx, dir, []GrantKey{{Server: "lost"}}, nil)
		require.NoError(t, err, "no file, nothing to open")
		writeLegacy("other", &Grant{Token: &oauth2.Token{AccessToken: "x"}})
		_, err = (&StoreTokens{Store: st, Keys: testKeys(t)}).ImportFiles(ctx, dir, []GrantKey{{Server: "other"}}, nil)
		require.ErrorIs(t, err, secret.ErrOpen, "a file under another key is reported")
	})
}

// TestElicitDefaults: "elicitation": "defaults" fills a form with its
// defaults and declines one with a required field without a default.
func TestElicitDefaults(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	_, err = New(Options{Config: c, Registry: tool.NewRegistry(), OAuth: &OAuthOptions{RedirectURL: "/cb", Authorize: NewCallbacks().Authorize, Tokens: &StoreTokens{}}})
	require.ErrorContains(t, err, "Options.OAuth.RedirectURL \"/cb\" must be an absolute URL")
}
