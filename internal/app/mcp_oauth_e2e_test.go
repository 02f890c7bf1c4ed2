package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/mcptest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/mcpclient"
	"github.com/switchboardhq/switchboard/secret"
)

// TestMCPOAuthServe: through the real wiring, an MCP server with "oauth"
// in mcp-servers.json is shown as authorizing with its URL; the person's
// browser follows it to the authorization server and back to the
// service's /mcp/oauth/callback, after which the server's tools are
// offered and called. The grant is sealed in SWITCHBOARD_MCP_TOKEN_DIR. A
// service without SWITCHBOARD_PUBLIC_URL refuses such a server, naming the
// setting. On SQLite and on Postgres.
func TestMCPOAuthServe(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testMCPOAuthServe(t, sqliteDatabase(t)) })
	t.Run("postgres", func(t *testing.T) { testMCPOAuthServe(t, postgresDatabase(t)) })
}

func testMCPOAuthServe(t *testing.T, db string) {
	f := mcptest.NewOAuthServer(t)
	dir := t.TempDir()
	servers := filepath.Join(dir, "mcp-servers.json")
	if err := os.WriteFile(servers, []byte(fmt.Sprintf(`{"mcpServers": {"prot": {"url": %q, "oauth": {}, "risk": "low"}}}`, f.MCPURL())), 0o600); err != nil {
		t.Fatal(err)
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	keys, err := secret.ParseKeys(base64.StdEncoding.EncodeToString(k))
	if err != nil {
		t.Fatal(err)
	}
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
	raw, err := os.ReadFile(filepath.Join(tokens, "mcp-oauth-prot.sealed"))
	if err != nil {
		t.Fatalf("the grant is not stored: %v", err)
	}
	if strings.Contains(string(raw), "access-1") || strings.Contains(string(raw), "refresh-1") {
		t.Fatal("the stored grant holds the token in clear text")
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
