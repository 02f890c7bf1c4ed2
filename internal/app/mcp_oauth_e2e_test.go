package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/mcptest"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestMCPOAuthServe: through the real wiring, an MCP server with "oauth"
// in mcp-servers.json is shown as authorizing with its URL; the person's
// browser follows it to the authorization server and back to the
// service's /mcp/oauth/callback, after which the server's tools are
// offered and called. The grant is sealed in the database: a second
// instance on it (Postgres: running beside the first; SQLite: the service
// restarted) connects without anyone signing in again. A service without
// SWITCHBOARD_PUBLIC_URL refuses such a server, naming the setting. On
// SQLite and on Postgres.
func TestMCPOAuthServe(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testMCPOAuthServe(t, sqliteDatabase(t), false) })
	t.Run("postgres", func(t *testing.T) { testMCPOAuthServe(t, postgresDatabase(t), true) })
}

func testMCPOAuthServe(t *testing.T, db string, beside bool) {
	f, dir, servers, keys := oauthMCPFixture(t)
	tokens := filepath.Join(dir, "tokens")
	env := map[string]string{"SWITCHBOARD_MCP_TOKEN_DIR": tokens}
	addr := fmt.Sprintf("127.0.0.1:%d", mcptest.FreePort(t))
	cfg := app.Config{
		Addr: addr, DatabaseURL: db, ConfigPath: writeConfig(t, "agents:\n  - name: ana\n    model: scripted:demo\n"),
		MCPConfigPath: servers, ReloadPoll: -1, Env: func(k string) string { return env[k] }, Logger: testenv.Logger(t),
	}

	noURL := cfg
	noURL.Keys = keys
	if _, err := app.Open(context.Background(), noURL); err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_PUBLIC_URL") {
		t.Fatalf("without SWITCHBOARD_PUBLIC_URL: %v, want an error naming it", err)
	}

	cfg.PublicURL, cfg.Keys = "http://"+addr, keys
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })

	var authURL string
	waitFor(t, "the server to wait for an authorization", func() bool {
		st := a.MCP.Status()[0]
		authURL = st.AuthorizeURL
		return st.State == mcpclient.StateAuthorizing && authURL != ""
	})
	if u, err := url.Parse(authURL); err != nil || u.Query().Get("redirect_uri") != "http://"+addr+"/mcp/oauth/callback" {
		t.Fatalf("the authorization URL does not send the person back to the service: %s", authURL)
	}
	resp, err := http.Get(authURL) // the browser: to the authorization server and back to the service
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Switchboard can now reach MCP server prot") {
		t.Fatalf("callback: %s %s", resp.Status, page)
	}
	waitFor(t, "the server to connect", func() bool { return a.MCP.Status()[0].State == mcpclient.StateConnected })
	tl, ok := a.Registry.Get("prot__whoami")
	if !ok {
		t.Fatal("prot__whoami is not offered after the authorization")
	}
	res := tl.Call(context.Background(), &tool.Request{Agent: "ana"}, []byte(`{}`))
	if res.IsError || !strings.Contains(string(res.Output), "caller person-1") {
		t.Fatalf("calling the protected tool: %s", res.Output)
	}
	row, err := a.Store.MCPGrantGet(context.Background(), &store.MCPGrantKey{Server: "prot"})
	if err != nil {
		t.Fatalf("the grant is not in the database: %v", err)
	}
	if strings.Contains(row.SealedGrant, "access-1") || strings.Contains(row.SealedGrant, "refresh-1") {
		t.Fatal("the stored grant holds the token in clear text")
	}
	if _, err := os.Stat(tokens); !os.IsNotExist(err) {
		t.Fatalf("SWITCHBOARD_MCP_TOKEN_DIR is written to: %v", err)
	}

	// Another instance on the database: no sign-in.
	if !beside {
		if err := a.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	bcfg := cfg
	if beside {
		bcfg.InstanceID = "beside" // two live processes never share an id
	}
	baddr := fmt.Sprintf("127.0.0.1:%d", mcptest.FreePort(t))
	bcfg.Addr, bcfg.PublicURL = baddr, "http://"+baddr
	b, err := app.Open(context.Background(), bcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop(context.Background()) })
	waitFor(t, "the second instance to connect with the stored grant", func() bool {
		st := b.MCP.Status()[0]
		if st.State == mcpclient.StateAuthorizing {
			t.Fatalf("the second instance asks for a sign-in: %+v", st)
		}
		return st.State == mcpclient.StateConnected
	})
	tl, ok = b.Registry.Get("prot__whoami")
	if !ok {
		t.Fatal("prot__whoami is not offered on the second instance")
	}
	if res := tl.Call(context.Background(), &tool.Request{Agent: "ana"}, []byte(`{}`)); res.IsError || !strings.Contains(string(res.Output), "caller person-1") {
		t.Fatalf("calling the protected tool on the second instance: %s", res.Output)
	}
	if _, codes, _ := f.Counts(); codes != 1 {
		t.Fatalf("%d sign-ins, want 1", codes)
	}
}

// TestMCPOAuthLegacyImport: a grant file that an earlier version left in
// SWITCHBOARD_MCP_TOKEN_DIR is imported into an empty database at start,
// once and logged, and the server connects with it without a sign-in. On
// SQLite and on Postgres.
func TestMCPOAuthLegacyImport(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testMCPOAuthLegacyImport(t, sqliteDatabase(t), sqliteDatabase(t)) })
	t.Run("postgres", func(t *testing.T) { testMCPOAuthLegacyImport(t, postgresDatabase(t), postgresDatabase(t)) })
}

func testMCPOAuthLegacyImport(t *testing.T, first, second string) {
	f, dir, servers, keys := oauthMCPFixture(t)
	tokens := filepath.Join(dir, "tokens")
	env := map[string]string{"SWITCHBOARD_MCP_TOKEN_DIR": tokens}
	open := func(db string, log *testenv.Buffer) *app.App {
		addr := fmt.Sprintf("127.0.0.1:%d", mcptest.FreePort(t))
		cfg := app.Config{
			Addr: addr, DatabaseURL: db, ConfigPath: writeConfig(t, "agents:\n  - name: ana\n    model: scripted:demo\n"),
			MCPConfigPath: servers, ReloadPoll: -1, Env: func(k string) string { return env[k] }, Logger: slog.New(slog.NewTextHandler(log, nil)),
		}
		cfg.PublicURL, cfg.Keys = "http://"+addr, keys
		a, err := app.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Stop(context.Background()) })
		return a
	}

	// An earlier version's grant: obtained by a sign-in, kept as a file.
	a := open(first, &testenv.Buffer{})
	var authURL string
	waitFor(t, "the server to wait for an authorization", func() bool {
		authURL = a.MCP.Status()[0].AuthorizeURL
		return authURL != ""
	})
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitFor(t, "the server to connect", func() bool { return a.MCP.Status()[0].State == mcpclient.StateConnected })
	g, err := (&mcpclient.StoreTokens{Store: a.Store, Keys: keys}).Load(context.Background(), mcpclient.GrantKey{Server: "prot"})
	if err != nil || g == nil {
		t.Fatalf("reading the grant: %v %v", g, err)
	}
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(g)
	sealed, err := keys.Seal(plain, "mcp_oauth_token:prot")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tokens, "mcp-oauth-prot.sealed"), []byte(sealed), 0o600); err != nil {
		t.Fatal(err)
	}

	// This version on an empty database: the file is imported.
	log := &testenv.Buffer{}
	b := open(second, log)
	waitFor(t, "the server to connect with the imported grant", func() bool {
		st := b.MCP.Status()[0]
		if st.State == mcpclient.StateAuthorizing {
			t.Fatalf("asks for a sign-in despite the token file: %+v", st)
		}
		return st.State == mcpclient.StateConnected
	})
	if !strings.Contains(log.String(), "imported the MCP server's OAuth token file into the database") {
		t.Fatalf("the import is not logged:\n%s", log)
	}
	if _, err := b.Store.MCPGrantGet(context.Background(), &store.MCPGrantKey{Server: "prot"}); err != nil {
		t.Fatalf("the imported grant is not in the database: %v", err)
	}
	if _, codes, _ := f.Counts(); codes != 1 {
		t.Fatalf("%d sign-ins, want 1", codes)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMCPOAuthRotateKey: `switchboard rotate-key` seals the MCP servers'
// OAuth grants again under the new key; they open to the same grant, and
// one that opens under no listed key is reported and left. On SQLite and
// on Postgres.
func TestMCPOAuthRotateKey(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		key := func(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }
		old, err := secret.ParseKeys("k1:" + key(1))
		if err != nil {
			t.Fatal(err)
		}
		lost, err := secret.ParseKeys("k0:" + key(9))
		if err != nil {
			t.Fatal(err)
		}
		grant := &mcpclient.Grant{Token: &oauth2.Token{AccessToken: "mcp-access", RefreshToken: "mcp-refresh"}, ClientID: "client-1"}
		if _, err := (&mcpclient.StoreTokens{Store: st, Keys: old}).Save(ctx, mcpclient.GrantKey{Server: "tracker", Workspace: "T1"}, grant); err != nil {
			t.Fatal(err)
		}
		if _, err := (&mcpclient.StoreTokens{Store: st, Keys: lost}).Save(ctx, mcpclient.GrantKey{Server: "orphan"}, grant); err != nil {
			t.Fatal(err)
		}
		keys, err := secret.ParseKeys("k2:" + key(2) + ",k1:" + key(1))
		if err != nil {
			t.Fatal(err)
		}
		res, err := app.RotateKey(ctx, st, keys, time.Now)
		if err != nil || res.Resealed != 1 || len(res.Unopened) != 1 || !strings.Contains(res.Unopened[0], "MCP server orphan") {
			t.Fatalf("RotateKey: %+v, %v; want the tracker grant resealed and the orphan reported", res, err)
		}
		row, err := st.MCPGrantGet(ctx, &store.MCPGrantKey{Server: "tracker", Workspace: "T1"})
		if err != nil || secret.Sealed(row.SealedGrant).KeyID() != "k2" {
			t.Fatalf("the grant after the rotation: %+v, %v; want it sealed under k2", row, err)
		}
		newOnly, err := secret.ParseKeys("k2:" + key(2))
		if err != nil {
			t.Fatal(err)
		}
		g, err := (&mcpclient.StoreTokens{Store: st, Keys: newOnly}).Load(ctx, mcpclient.GrantKey{Server: "tracker", Workspace: "T1"})
		if err != nil || g.Token.AccessToken != "mcp-access" || g.Token.RefreshToken != "mcp-refresh" || g.ClientID != "client-1" {
			t.Fatalf("the resealed grant opens to %+v (%v), want the same grant", g, err)
		}
	})
}

// TestMCPOAuthCallbackOtherInstance: two instances behind one public
// address both wait for a person; the person opens instance A's URL and
// the load balancer sends the redirect to instance B. B relays it to A,
// whose attempt exchanges the code; the person's page says it worked, and
// both instances connect with the one grant. A redirect nobody waits for
// is still refused. On Postgres (instances share it).
func TestMCPOAuthCallbackOtherInstance(t *testing.T) {
	t.Parallel()
	db := postgresDatabase(t)
	f, _, servers, keys := oauthMCPFixture(t)
	start := func(id string) (*app.App, string) {
		addr := fmt.Sprintf("127.0.0.1:%d", mcptest.FreePort(t))
		cfg := app.Config{
			Addr: addr, DatabaseURL: db, InstanceID: id, ConfigPath: writeConfig(t, "agents:\n  - name: ana\n    model: scripted:demo\n"),
			MCPConfigPath: servers, ReloadPoll: -1, Env: func(string) string { return "" }, Logger: testenv.Logger(t),
		}
		cfg.PublicURL, cfg.Keys = "http://"+addr, keys
		a, err := app.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Stop(context.Background()) })
		return a, addr
	}
	a, aAddr := start("instance-a")
	b, bAddr := start("instance-b")
	var authURL string
	waitFor(t, "A to wait for an authorization", func() bool {
		authURL = a.MCP.Status()[0].AuthorizeURL
		return authURL != ""
	})
	waitFor(t, "B to wait for an authorization", func() bool { return b.MCP.Status()[0].AuthorizeURL != "" })

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back := resp.Header.Get("Location")
	if !strings.HasPrefix(back, "http://"+aAddr+"/mcp/oauth/callback?") {
		t.Fatalf("the authorization server sends the person to %q, want A's callback", back)
	}
	// The load balancer picks B.
	resp, err = http.Get(strings.Replace(back, aAddr, bAddr, 1))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Switchboard can now reach MCP server prot") {
		t.Fatalf("the redirect at B: %s %s", resp.Status, page)
	}
	waitFor(t, "A to connect", func() bool { return a.MCP.Status()[0].State == mcpclient.StateConnected })
	waitFor(t, "B to connect", func() bool { return b.MCP.Status()[0].State == mcpclient.StateConnected })
	if _, codes, _ := f.Counts(); codes != 1 {
		t.Fatalf("%d sign-ins, want 1", codes)
	}

	resp, err = http.Get("http://" + bAddr + "/mcp/oauth/callback?code=x&state=nobody")
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "No MCP server is waiting") {
		t.Fatalf("a redirect nobody waits for: %s %s", resp.Status, page)
	}
}

// oauthMCPFixture is an OAuth-protected MCP server (the fake), a folder with
// an mcp-servers.json naming it "prot" (oauth, risk low), and a fresh
// sealing key.
func oauthMCPFixture(t *testing.T) (f *mcptest.OAuthServer, dir, servers string, keys *secret.Keyring) {
	t.Helper()
	f = mcptest.NewOAuthServer(t)
	dir = t.TempDir()
	servers = filepath.Join(dir, "mcp-servers.json")
	if err := os.WriteFile(servers, []byte(fmt.Sprintf(`{"mcpServers": {"prot": {"url": %q, "oauth": {}, "risk": "low"}}}`, f.MCPURL())), 0o600); err != nil {
		t.Fatal(err)
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	keys, err := secret.ParseKeys(base64.StdEncoding.EncodeToString(k))
	if err != nil {
		t.Fatal(err)
	}
	return f, dir, servers, keys
}
