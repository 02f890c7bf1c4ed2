package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestReload: a change to switchboard.yaml is picked up by the running
// service without a restart (a new agent answers), without dropping the
// turn that was running; a broken file is refused whole, the old agents
// keep answering, and the refusal shows in GET /api/config/status and
// /readyz; a reload naming a tool nothing provides is refused too.
func TestReload(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		dir := t.TempDir()
		script := func(name, text string, delay time.Duration) string {
			p := filepath.Join(dir, name+".yaml")
			body := "fallback:\n  text: " + text + "\n  delay: " + delay.String() + "\n"
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		ana := script("ana", "I am Ana.", 700*time.Millisecond)
		bo := script("bo", "I am Bo.", 0)
		cfgPath := filepath.Join(dir, "switchboard.yaml")
		write := func(body string) {
			t.Helper()
			// Written aside and renamed, as editors do: the watcher never
			// reads half a file.
			tmp := cfgPath + ".tmp"
			if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, cfgPath); err != nil {
				t.Fatal(err)
			}
		}
		agentsYAML := func(extra string) string {
			return openAccess + "agents:\n  - name: ana\n    model: scripted:" + ana + "\n    answers: {default: true}\n" + extra
		}
		write(agentsYAML(""))
		if err := os.WriteFile(filepath.Join(dir, "mcp-servers.json"), []byte(`{"mcpServers": {}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := app.Open(context.Background(), app.Config{
			Addr: "127.0.0.1:0", DatabaseURL: db, ConfigPath: cfgPath, MCPConfigPath: filepath.Join(dir, "mcp-servers.json"),
			ReloadPoll: 50 * time.Millisecond, Env: func(string) string { return "" }, Logger: testenv.Logger(t),
		})
		if err != nil {
			t.Fatalf("opening the service: %v", err)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Stop(context.Background()) })
		base := "http://" + a.Addr()
		call := func(method, path string, body any) (int, []byte) {
			t.Helper()
			var rd io.Reader
			if body != nil {
				b, _ := json.Marshal(body)
				rd = bytes.NewReader(b)
			}
			req, _ := http.NewRequest(method, base+path, rd)
			if body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, out
		}
		ask := func(agentName, text string) uuid.UUID {
			t.Helper()
			code, body := call(http.MethodPost, "/api/conversations", map[string]string{"agent": agentName})
			if code != http.StatusCreated {
				t.Fatalf("creating a conversation with %s = %d %s", agentName, code, body)
			}
			var conv struct{ ID uuid.UUID }
			_ = json.Unmarshal(body, &conv)
			if code, body := call(http.MethodPost, "/api/conversations/"+conv.ID.String()+"/messages", map[string]string{"text": text}); code != http.StatusAccepted {
				t.Fatalf("posting to %s = %d %s", agentName, code, body)
			}
			return conv.ID
		}
		answer := func(conv uuid.UUID) string {
			t.Helper()
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if got := logEntries(t, a.Store, conv, store.EntryAssistant); len(got) > 0 {
					return decode[core.AssistantContent](t, got[0]).Text
				}
				if errs := logEntries(t, a.Store, conv, store.EntryError); len(errs) > 0 {
					t.Fatalf("the turn failed: %s", errs[0].Content)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Fatalf("no answer in conversation %s after 30s", conv)
			return ""
		}
		status := func(until func(app.ReloadStatus) bool) app.ReloadStatus {
			t.Helper()
			var st app.ReloadStatus
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				code, body := call(http.MethodGet, "/api/config/status", nil)
				if code != http.StatusOK {
					t.Fatalf("GET /api/config/status = %d %s", code, body)
				}
				st = app.ReloadStatus{}
				if err := json.Unmarshal(body, &st); err != nil {
					t.Fatal(err)
				}
				if until(st) {
					return st
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Fatalf("GET /api/config/status never got there: %+v", st)
			return st
		}

		if code, body := call(http.MethodPost, "/api/conversations", map[string]string{"agent": "bo"}); code != http.StatusBadRequest {
			t.Fatalf("a conversation with bo before the reload = %d %s, want 400: no such agent yet", code, body)
		}
		// Ana's turn is running (her model takes 700ms) when the file
		// changes: the reload does not drop it.
		running := ask("ana", "who are you?")
		write(agentsYAML("  - name: bo\n    model: scripted:" + bo + "\n"))
		status(func(st app.ReloadStatus) bool { return st.Reloads == 1 })
		if got := answer(ask("bo", "and you?")); got != "I am Bo." {
			t.Fatalf("bo after the reload answered %q, want %q", got, "I am Bo.")
		}
		if got := answer(running); got != "I am Ana." {
			t.Fatalf("the turn running across the reload answered %q, want %q", got, "I am Ana.")
		}

		// A broken file: refused whole, the error kept, bo still answers.
		write(agentsYAML("  - name: bo\n    model: scripted:" + bo + "\n    persnoa: typo\n"))
		st := status(func(st app.ReloadStatus) bool { return st.LastError != "" })
		if !strings.Contains(st.LastError, `unknown field "persnoa" in agents[1]`) || st.Reloads != 1 {
			t.Fatalf("status after a broken file = %+v; want the field named and no reload applied", st)
		}
		if got := answer(ask("bo", "still there?")); got != "I am Bo." {
			t.Fatalf("bo after a refused reload answered %q, want the old configuration's %q", got, "I am Bo.")
		}
		if code, body := call(http.MethodGet, "/readyz", nil); code != http.StatusOK || !strings.Contains(string(body), "reload refused") {
			t.Fatalf("/readyz = %d %s; want ready, saying the reload was refused", code, body)
		}

		// A tool nothing provides, through Reload (what SIGHUP calls).
		write(agentsYAML("  - name: bo\n    model: scripted:" + bo + "\n    tools: [remembr]\n"))
		if err := a.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), `agent "bo": tools: no tool named "remembr"`) {
			t.Fatalf("Reload with an unknown tool: %v, want it refused naming agent and tool", err)
		}
		// Fixed: applied, and the error cleared.
		write(agentsYAML(""))
		if err := a.Reload(context.Background()); err != nil {
			t.Fatalf("Reload of a good file: %v", err)
		}
		if st := a.ReloadStatus(); st.LastError != "" || st.Reloads < 2 {
			t.Fatalf("status after a good reload = %+v, want no error", st)
		}
		if code, body := call(http.MethodPost, "/api/conversations", map[string]string{"agent": "bo"}); code != http.StatusBadRequest {
			t.Fatalf("a conversation with bo after bo was removed = %d %s, want 400", code, body)
		}

		// Schedules reload too; one naming an agent the file does not
		// declare is refused before anything changes.
		routine := func(agentName string) string {
			return "schedules:\n  routines:\n    - agent: " + agentName + "\n      name: standup\n      every: 1h\n      instruction: post the standup\n      platform: slack\n      channel: C1\n"
		}
		write(agentsYAML("") + routine("ana"))
		if err := a.Reload(context.Background()); err != nil {
			t.Fatalf("Reload with a new routine: %v", err)
		}
		list, err := a.Scheduler.List(context.Background(), "ana", store.ScheduleRoutine)
		if err != nil || len(list) != 1 || list[0].Name != "standup" {
			t.Fatalf("routines of ana after the reload: %v %v, want standup", list, err)
		}
		write(agentsYAML("  - name: bo\n    model: scripted:"+bo+"\n") + routine("zed"))
		if err := a.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), `names agent "zed"`) {
			t.Fatalf("Reload with a routine of an undeclared agent: %v, want it refused", err)
		}
		if _, ok := a.Service.Agents().Find("bo"); ok {
			t.Fatal("a refused reload added bo anyway")
		}
		// A section a reload does not apply (it needs a restart) is still
		// checked: a value the next start would refuse is refused now.
		write(agentsYAML("  - name: bo\n    model: scripted:"+bo+"\n") + "slack:\n  streaming:\n    max_age: 10m\n")
		if err := a.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), `slack.streaming.max_age: "10m" must be a duration from 30s to 4m50s`) {
			t.Fatalf("Reload with slack.streaming.max_age out of range: %v, want it refused naming the field", err)
		}
		if _, ok := a.Service.Agents().Find("bo"); ok {
			t.Fatal("a reload refused for its slack: section added bo anyway")
		}
	})
}

// TestReloadMCP: a server added to mcp-servers.json connects on a reload,
// and an agent may then name its tools; removing it withdraws them.
func TestReloadMCP(t *testing.T) {
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
	if err := os.WriteFile(servers, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := writeConfig(t, "agents:\n  - name: ana\n    model: scripted:demo\n")
	a, err := app.Open(context.Background(), app.Config{
		Addr: "-", DatabaseURL: "sqlite:" + filepath.Join(dir, "sb.db"), ConfigPath: cfgPath, MCPConfigPath: servers,
		ReloadPoll: -1, Env: func(string) string { return "" }, Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })

	if err := os.WriteFile(servers, []byte(fmt.Sprintf(`{"mcpServers": {"docs": {"url": %q}}}`, hs.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte("agents:\n  - name: ana\n    model: scripted:demo\n    tools: [docs__lookup]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(context.Background()); err != nil {
		t.Fatalf("Reload with a new MCP server: %v", err)
	}
	if _, ok := a.Registry.Get("docs__lookup"); !ok {
		t.Fatal("after the reload the registry has no docs__lookup: the new server did not connect")
	}
	if err := os.WriteFile(cfgPath, []byte("agents:\n  - name: ana\n    model: scripted:demo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(servers, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(context.Background()); err != nil {
		t.Fatalf("Reload without the server: %v", err)
	}
	if _, ok := a.Registry.Get("docs__lookup"); ok {
		t.Fatal("the removed server's tool is still offered")
	}
}
