package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/mcptest"
)

// TestMCPStatus: `switchboard mcp status` asks the running service, with
// the operator token, and prints each server's state and tools; a server
// that cannot be reached shows as disconnected with the reason. Without the
// token the service refuses and the command says so.
func TestMCPStatus(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	type in struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup", Description: "looks up"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	servers := filepath.Join(dir, "mcp-servers.json")
	body := fmt.Sprintf(`{"mcpServers": {"docs": {"url": %q}, "gone": {"url": "http://127.0.0.1:1/mcp"}}}`, hs.URL)
	if err := os.WriteFile(servers, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "op-token-mcp-status"
	getenv := env(map[string]string{
		"DATABASE_URL": "sqlite:" + filepath.Join(dir, "sb.db"), "SWITCHBOARD_MCP_CONFIG": servers,
		"SWITCHBOARD_API_TOKEN": token, "SWITCHBOARD_ADDR": "127.0.0.1:0",
	})
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	url := "http://" + a.Addr()

	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"mcp", "status", "-url", url}, getenv, nil, &out, &errOut); err != nil {
		t.Fatalf("mcp status: %v\n%s", err, errOut.String())
	}
	lines := out.String()
	for _, want := range []string{"SERVER", "docs", "connected", "docs: docs__lookup", "gone", "disconnected"} {
		if !strings.Contains(lines, want) {
			t.Fatalf("mcp status printed:\n%s\nwant it to contain %q", lines, want)
		}
	}
	noToken := env(map[string]string{"SWITCHBOARD_ADDR": "127.0.0.1:0"})
	err = run(ctx, []string{"mcp", "status", "-url", url}, noToken, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("mcp status without the token: %v, want the service's 401", err)
	}
}

// TestMCPStatusAuthorizing: with SWITCHBOARD_PUBLIC_URL and
// SWITCHBOARD_SECRET_KEY set, a server with "oauth" that answers 401 shows
// as authorizing, and `switchboard mcp status` prints the URL to open,
// which sends the person back to the service's callback.
func TestMCPStatusAuthorizing(t *testing.T) {
	t.Parallel()
	f := mcptest.NewOAuthServer(t)
	dir := t.TempDir()
	servers := filepath.Join(dir, "mcp-servers.json")
	if err := os.WriteFile(servers, []byte(fmt.Sprintf(`{"mcpServers": {"prot": {"url": %q, "oauth": {}}}}`, f.MCPURL())), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "op-token-mcp-oauth"
	getenv := env(map[string]string{
		"DATABASE_URL": "sqlite:" + filepath.Join(dir, "sb.db"), "SWITCHBOARD_MCP_CONFIG": servers,
		"SWITCHBOARD_API_TOKEN": token, "SWITCHBOARD_ADDR": "127.0.0.1:0",
		"SWITCHBOARD_PUBLIC_URL": "https://switchboard.example.com", "SWITCHBOARD_SECRET_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"SWITCHBOARD_MCP_TOKEN_DIR": filepath.Join(dir, "tokens"),
	})
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	url := "http://" + a.Addr()
	var out, errOut bytes.Buffer
	deadline := time.Now().Add(20 * time.Second)
	for {
		out.Reset()
		if err := run(ctx, []string{"mcp", "status", "-url", url}, getenv, nil, &out, &errOut); err != nil {
			t.Fatalf("mcp status: %v\n%s", err, errOut.String())
		}
		if strings.Contains(out.String(), "prot needs OAuth authorization: open") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mcp status never showed the authorization URL:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{"authorizing", f.URL() + "/authorize?", "redirect_uri=https%3A%2F%2Fswitchboard.example.com%2Fmcp%2Foauth%2Fcallback"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("mcp status printed:\n%s\nwant it to contain %q", out.String(), want)
		}
	}
	// The client id metadata document is served under the https address.
	resp, err := http.Get(url + "/mcp/oauth/client-metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || doc["client_id"] != "https://switchboard.example.com/mcp/oauth/client-metadata.json" {
		t.Fatalf("client metadata document: %v %v", doc, err)
	}
}
