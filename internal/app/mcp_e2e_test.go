package app_test

// End-to-end tests of MCP through the real service: a tool of the real
// server-everything (npm) offered to the agent, confirmed by a person in
// the fake Slack, with its status in /readyz, /metrics and /api/mcp/status;
// and the agents served at /mcp to the real MCP Inspector and to the Go
// SDK's client (progress notifications, cancellation, an approval pause).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"


	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/mcptest"
	"github.com/switchboardhq/switchboard/store"
)

// writeMCPServers writes an mcp-servers.json with server-everything over
// stdio as "everything", its tools at their default risk (high).
func writeMCPServers(tb testing.TB) string {
	tb.Helper()
	bin := mcptest.Bin(tb, "mcp-server-everything")
	body := fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q, "args": ["stdio"]}}}`, bin)
	path := filepath.Join(tb.TempDir(), "mcp-servers.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

func startMCP(t *testing.T, db, token string) *slackEnv {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "mcp_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return startSlack(t, db, envOptions{
		env:       map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script},
		mcpConfig: writeMCPServers(t), apiToken: token,
	})
}

func (e *slackEnv) getText(path, token string) (int, string) {
	e.tb.Helper()
	req, err := http.NewRequest(http.MethodGet, e.base+path, nil)
	if err != nil {
		e.tb.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMCPToolConfirmedInSlack: server-everything's echo, registered as
// everything__echo at the default high risk, is asked about in Slack; the
// starter's Allow once runs it on the real server, whose answer reaches the
// model and the thread. The status shows in /readyz, /metrics and
// /api/mcp/status.
func TestMCPToolConfirmedInSlack(t *testing.T) {
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startMCP(t, db(t), "")
		const channel, ts = "C0MCP", "1700000900.000100"

		code, body := e.getText("/readyz", "")
		if code != http.StatusOK || !strings.Contains(body, "mcp everything: connected") {
			t.Fatalf("/readyz = %d %q, want 200 naming the connected MCP server", code, body)
		}
		if _, body = e.getText("/metrics", ""); !strings.Contains(body, `switchboard_mcp_server_up{server="everything"} 1`) {
			t.Fatalf("/metrics lacks the MCP server's gauge:\n%s", body)
		}
		code, body = e.getText("/api/mcp/status", "")
		if code != http.StatusOK || !strings.Contains(body, `"everything__echo"`) {
			t.Fatalf("/api/mcp/status = %d %s, want the server with its tools", code, body)
		}

		e.mustPost(newEvent("EvMCP1", mention(channel, ts, "", alice, "echo hello via mcp")))
		p := e.prompt(channel, ts)
		if !strings.Contains(p.Text+string(p.Blocks), "everything__echo") {
			t.Fatalf("the approval prompt does not name the MCP tool: %s %s", p.Text, p.Blocks)
		}
		e.click(channel, ts, p, "Allow once", alice, "trig-mcp-alice")
		e.waitReply(channel, "Echo: hello via mcp")

		convs := e.conversation(channel, ts).ID
		results := logEntries(t, e.store, convs, store.EntryToolResult)
		if len(results) != 1 {
			t.Fatalf("%d tool results, want 1", len(results))
		}
		res := decode[core.ToolResultContent](t, results[0])
		if res.IsError || !strings.Contains(string(res.Output), "Echo: hello via mcp") {
			t.Fatalf("the tool result is %s (error %v), want the server's echo", res.Output, res.IsError)
		}
		audit, err := e.store.AuditList(context.Background(), &store.AuditListParams{Action: "everything__echo"})
		if err != nil || len(audit) != 1 || audit[0].Outcome != store.AuditOK {
			t.Fatalf("audit of everything__echo = %+v, %v; want one row with outcome ok", audit, err)
		}
	})
}
