package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestUnknownToolStopsStart: an agent whose tools name a tool nothing
// provides does not start, and the error names the agent and the tool; an
// MCP tool passes when its server is declared in mcp-servers.json, since
// its tools only appear once it connects.
func TestUnknownToolStopsStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	servers := filepath.Join(dir, "mcp-servers.json")
	if err := os.WriteFile(servers, []byte(`{"mcpServers": {"docs": {"url": "http://127.0.0.1:1/mcp"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, tools string
		want        string // "" starts
	}{
		{"a typo", "[remember, remembr]", `agent "ana": tools: no tool named "remembr"`},
		{"an undeclared MCP server", "[wiki__search]", `agent "ana": tools: "wiki__search" names MCP server "wiki", which mcp-servers.json does not declare`},
		{"browse without a browser section", "[remember, browse]", `agent "ana": tools: browse needs a browser: section`},
		{"known tools and a declared server's tool", "[remember, docs__search]", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeConfig(t, "agents:\n  - name: ana\n    model: scripted:demo\n    tools: "+tc.tools+"\n")
			a, err := app.Open(context.Background(), app.Config{
				Addr: "-", DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "sb.db"), ConfigPath: cfg,
				MCPConfigPath: servers, Env: func(string) string { return "" }, Logger: testenv.Logger(t),
			})
			if err == nil {
				t.Cleanup(func() { _ = a.Stop(context.Background()) })
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Open: %v, want it to start", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Open: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
