package app_test

// End-to-end tests of MCP through the real service: a tool of the real
// server-everything (npm) offered to the agent, confirmed by a person in
// the fake Slack, with its status in /readyz, /metrics and /api/mcp/status;
// and the agents served at /mcp to the real MCP Inspector and to the Go
// SDK's client (progress notifications, cancellation, an approval pause).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/mcptest"
	"github.com/switchboardhq/switchboard/store"
)

// writeMCPServers writes an mcp-servers.json with server-everything over
// stdio as "everything", its tools at their default risk (high). The
// service's environment in these tests holds no PATH, and a stdio server
// gets only the base of that environment: its block gives it the PATH to
// find node.
func writeMCPServers(tb testing.TB) string {
	tb.Helper()
	bin := mcptest.Bin(tb, "mcp-server-everything")
	body := fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q, "args": ["stdio"], "env": {"PATH": %q}}}}`, bin, os.Getenv("PATH"))
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
	t.Parallel()
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

// inspector runs the MCP Inspector's CLI against the service's /mcp.
func (e *slackEnv) inspector(token string, args ...string) string {
	e.tb.Helper()
	bin := mcptest.Bin(e.tb, "mcp-inspector")
	full := append([]string{"--cli", e.base + "/mcp", "--transport", "http"}, args...)
	if token != "" {
		full = append(full, "--header", "Authorization: Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(e.tb.TempDir(), "catalog.json"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.tb.Fatalf("mcp-inspector %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestMCPServerInspector: the real MCP Inspector, in CLI mode, lists the
// agents as tools at /mcp with the operator token and calls one; the
// result is the agent's answer. Without the token it is refused.
func TestMCPServerInspector(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		const token = "op-token-for-mcp-e2e"
		e := startMCP(t, db(t), token)
		out := e.inspector(token, "--method", "tools/list")
		var list struct {
			Tools []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &list); err != nil {
			t.Fatalf("tools/list output is not JSON: %v\n%s", err, out)
		}
		if len(list.Tools) != 1 || list.Tools[0].Name != "switchboard" {
			t.Fatalf("tools/list = %+v, want the one agent, switchboard", list.Tools)
		}
		out = e.inspector(token, "--method", "tools/call", "--tool-name", "switchboard", "--tool-arg", "message=hello from the inspector")
		if !strings.Contains(out, "Agent says: ") || !strings.Contains(out, "hello from the inspector") || strings.Contains(out, `"isError": true`) {
			t.Fatalf("tools/call answered %s, want the agent's answer", out)
		}
		code, _ := e.getText("/mcp", "wrong-token")
		if code != http.StatusUnauthorized {
			t.Fatalf("GET /mcp with a wrong token answered %d, want 401", code)
		}
	})
}

// postJSON posts body to path with the bearer token and returns the
// status and the answer.
func (e *slackEnv) postJSON(path, token, body string) (int, string) {
	e.tb.Helper()
	req, err := http.NewRequest(http.MethodPost, e.base+path, strings.NewReader(body))
	if err != nil {
		e.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
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

// sdkClient connects the Go SDK's client to /mcp with the operator token.
func (e *slackEnv) sdkClient(token string, onProgress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	e.tb.Helper()
	hc := &http.Client{Transport: bearerTransport{token: token}}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { onProgress(r.Params) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		e.tb.Fatalf("connecting the SDK client to /mcp: %v", err)
	}
	e.tb.Cleanup(func() { _ = cs.Close() })
	return cs
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// TestMCPServerProgressCancelApproval uses the Go SDK's client on /mcp:
// a call streams progress notifications while the agent writes, then
// answers; cancelling a call interrupts its turn (done, not retried, no
// answer stored); a call whose turn asks for an approval reports it.
func TestMCPServerProgressCancelApproval(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		const token = "op-token-for-mcp-sdk"
		e := startMCP(t, db(t), token)
		progress := make(chan *mcp.ProgressNotificationParams, 1000)
		cs := e.sdkClient(token, func(p *mcp.ProgressNotificationParams) { progress <- p })

		t.Run("progress then the answer", func(t *testing.T) {
			params := &mcp.CallToolParams{Name: "switchboard", Arguments: map[string]any{"message": "count to five"}}
			params.SetProgressToken("count")
			res, err := cs.CallTool(t.Context(), params)
			if err != nil || res.IsError {
				t.Fatalf("CallTool: %v %+v", err, res)
			}
			if got := resultText(res); !strings.Contains(got, "one two three four five") || !strings.HasSuffix(got, "done.") {
				t.Fatalf("the answer is %q, want the whole reply", got)
			}
			// Notifications are handled apart from the result: the last may
			// arrive just after it.
			var got []*mcp.ProgressNotificationParams
			poll(t, "a progress notification with the whole text", func() (bool, string) {
				for len(progress) > 0 {
					got = append(got, <-progress)
				}
				return len(got) > 0 && strings.Contains(got[len(got)-1].Message, "fifty"), fmt.Sprint(len(got))
			})
			if len(got) < 2 {
				t.Fatalf("%d progress notifications, want several while the reply streamed over ~2s", len(got))
			}
			if len(got) > 20 {
				t.Fatalf("%d progress notifications for ~60 words: not throttled", len(got))
			}
			for i, p := range got {
				if p.ProgressToken != "count" || (i > 0 && p.Progress <= got[i-1].Progress) {
					t.Fatalf("notification %d = %+v: want the call's token and increasing progress", i, p)
				}
			}
			if !strings.Contains(got[len(got)-1].Message, "fifty") {
				t.Fatalf("the last progress message is %q, want the text so far", got[len(got)-1].Message)
			}
		})

		t.Run("cancelling interrupts the turn", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			params := &mcp.CallToolParams{Name: "switchboard", Arguments: map[string]any{"message": "tell me a long story"}}
			params.SetProgressToken("story")
			errc := make(chan error, 1)
			go func() { _, err := cs.CallTool(ctx, params); errc <- err }()
			for p := range progress { // the turn is streaming
				if p.ProgressToken == "story" {
					break
				}
			}
			cancel()
			if err := <-errc; err == nil {
				t.Fatal("a cancelled call returned no error")
			}
			var conv *store.Conversation
			poll(t, "the story's turn done, not retried", func() (bool, string) {
				items, err := e.store.WorkList(context.Background(), &store.WorkListParams{Kind: core.WorkTurn, Limit: 100})
				if err != nil {
					return false, err.Error()
				}
				for _, it := range items {
					users := logEntries(t, e.store, *it.ConversationID, store.EntryUser)
					if len(users) == 0 || !strings.Contains(decode[core.UserContent](t, users[0]).Text, "tell me a long story") {
						continue
					}
					c, err := e.store.ConversationGet(context.Background(), *it.ConversationID)
					if err != nil {
						return false, err.Error()
					}
					conv = c
					return it.State == store.WorkDone && it.Attempts == 1, fmt.Sprintf("state %s attempts %d", it.State, it.Attempts)
				}
				return false, "no turn yet"
			})
			for _, en := range logEntries(t, e.store, conv.ID, store.EntryAssistant) {
				if strings.Contains(decode[core.AssistantContent](t, en).Text, "the end.") {
					t.Fatalf("the interrupted turn stored its whole answer: the story went on after the cancel")
				}
			}
		})

		t.Run("an approval pause says where to decide", func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "switchboard", Arguments: map[string]any{"message": "echo hello via mcp"}})
			if err != nil || res.IsError {
				t.Fatalf("CallTool: %v %+v", err, res)
			}
			text := resultText(res)
			if !strings.Contains(text, "everything__echo waits for a person's approval") || !strings.Contains(text, "/api/conversations/") {
				t.Fatalf("the pause result is %q, want the tool, the approval and where to follow it", text)
			}
			// Where to decide: the approvals API, which a caller with
			// rights uses to let the turn go on and finish.
			decideURL, _ := res.Meta["switchboard/decide_url"].(string)
			convID, _ := res.Meta["switchboard/conversation_id"].(string)
			if !strings.Contains(decideURL, "/api/approvals/") || !strings.Contains(text, decideURL) {
				t.Fatalf("the pause names %q as where to decide (text %q), want the approvals API", decideURL, text)
			}
			path := decideURL[strings.Index(decideURL, "/api/approvals/"):]
			if code, body := e.getText(path, token); code != http.StatusOK || !strings.Contains(body, `"status":"pending"`) {
				t.Fatalf("GET %s: %d %s, want the pending approval", path, code, body)
			}
			if code, _ := e.postJSON(path, "wrong-token", `{"choice": "approve"}`); code != http.StatusUnauthorized {
				t.Fatalf("deciding with a wrong token answered %d, want 401", code)
			}
			// An agent's session may see its agent's conversations but is not
			// the person asked: refused.
			code, body := e.postJSON("/api/keys", token, `{"agent": "switchboard"}`)
			var key, session struct {
				Token string `json:"token"`
			}
			if err := json.Unmarshal([]byte(body), &key); code != http.StatusCreated || err != nil {
				t.Fatalf("POST /api/keys: %d %s", code, body)
			}
			code, body = e.postJSON("/api/auth/token", key.Token, "")
			if err := json.Unmarshal([]byte(body), &session); code != http.StatusCreated || err != nil {
				t.Fatalf("POST /api/auth/token: %d %s", code, body)
			}
			if code, body := e.postJSON(path, session.Token, `{"choice": "approve"}`); code != http.StatusForbidden || !strings.Contains(body, "isn't yours") {
				t.Fatalf("an agent session deciding answered %d %s, want 403: only the person asked decides", code, body)
			}
			if code, body := e.postJSON(path, token, `{"choice": "maybe"}`); code != http.StatusBadRequest {
				t.Fatalf("deciding %q answered %d %s, want 400", "maybe", code, body)
			}
			if code, body := e.postJSON(path, token, `{"choice": "approve"}`); code != http.StatusOK || !strings.Contains(body, `"status":"approved"`) {
				t.Fatalf("POST %s: %d %s, want approved", path, code, body)
			}
			if code, _ := e.postJSON(path, token, `{"choice": "deny"}`); code != http.StatusConflict {
				t.Fatalf("deciding again answered %d, want 409", code)
			}
			conv := uuid.MustParse(convID)
			poll(t, "the approved turn's answer", func() (bool, string) {
				for _, en := range logEntries(t, e.store, conv, store.EntryAssistant) {
					if strings.Contains(decode[core.AssistantContent](t, en).Text, "MCP said:") {
						return true, ""
					}
				}
				return false, "no answer yet"
			})
		})
	})
}

// TestMCPCancelOnAnotherInstance: two instances share one Postgres
// database and the MCP call reaches the one that runs no turns (its worker
// stopped), so the turn runs on the other: cancelling the call still stops
// it there, through a stop request (the stop button's path), completed
// and never retried, without its whole answer.
func TestMCPCancelOnAnotherInstance(t *testing.T) {
	t.Parallel()
	url := postgresDatabase(t)
	const token = "op-token-for-mcp-cancel"
	script, err := filepath.Abs(filepath.Join("testdata", "mcp_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	opts := func(id string) envOptions {
		return envOptions{env: map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}, mcpConfig: writeMCPServers(t), apiToken: token, instanceID: id}
	}
	front := startSlack(t, url, opts("front"))
	back := startSlack(t, url, opts("back"))
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelStop()
	if err := front.app.Worker.Stop(stopCtx); err != nil {
		t.Fatalf("stopping the front instance's worker: %v", err)
	}
	progress := make(chan *mcp.ProgressNotificationParams, 1000)
	cs := front.sdkClient(token, func(p *mcp.ProgressNotificationParams) { progress <- p })

	ctx, cancel := context.WithCancel(t.Context())
	params := &mcp.CallToolParams{Name: "switchboard", Arguments: map[string]any{"message": "tell me a long story"}}
	errc := make(chan error, 1)
	go func() { _, err := cs.CallTool(ctx, params); errc <- err }()
	var item *store.WorkItem
	poll(t, "the story's turn running on the back instance", func() (bool, string) {
		items, err := back.store.WorkList(context.Background(), &store.WorkListParams{Kind: core.WorkTurn, States: []store.WorkState{store.WorkRunning}, Limit: 10})
		if err != nil || len(items) == 0 {
			return false, fmt.Sprint(items, err)
		}
		item = items[0]
		return len(logEntries(t, back.store, *item.ConversationID, store.EntryUser)) > 0, "no message yet"
	})
	if item.ClaimedBy != "back" {
		t.Fatalf("the turn runs on %q, want the back instance", item.ClaimedBy)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	pollFor(t, 15*time.Second, 20*time.Millisecond, "the turn stopped on the back instance", func() (bool, string) {
		it, err := back.store.WorkGet(context.Background(), item.ID)
		if err != nil {
			return false, err.Error()
		}
		return it.State != store.WorkRunning, string(it.State)
	})
	it, _ := back.store.WorkGet(context.Background(), item.ID)
	if it.State != store.WorkDone || it.Attempts != 1 {
		t.Errorf("the cancelled turn is %s after %d attempts, want done at once, never retried", it.State, it.Attempts)
	}
	for _, en := range logEntries(t, back.store, *item.ConversationID, store.EntryAssistant) {
		if strings.Contains(decode[core.AssistantContent](t, en).Text, "the end.") {
			t.Fatal("the story was told to its end after the call was cancelled")
		}
	}
	var stops int
	for _, en := range logEntries(t, back.store, *item.ConversationID, store.EntrySystem) {
		if c := decode[core.SystemContent](t, en); c.Stop != nil && *c.Stop == item.ID {
			stops++
		}
	}
	if stops != 1 {
		t.Errorf("%d stop requests naming the turn, want 1", stops)
	}
}

// conformance runs the official conformance suite
// (@modelcontextprotocol/conformance) with args and the expected failures
// of internal/mcptest/conformance-baseline.yml: a new failure, or a listed
// one that passes, fails the test.
func conformance(t *testing.T, args ...string) {
	t.Helper()
	if out, err := runConformance(t, args...); err != nil {
		t.Fatalf("conformance %s failed beyond the expected failures: %v\n%s", args[0], err, out)
	}
}

// runConformance runs the suite with args and the baseline, logs its
// output, and returns it with the suite's verdict.
func runConformance(t *testing.T, args ...string) (string, error) {
	t.Helper()
	node := mcptest.Node22(t)
	bin := mcptest.Bin(t, "conformance")
	suite, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	baseline, err := filepath.Abs(filepath.Join("..", "mcptest", "conformance-baseline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append(append([]string{suite}, args...), "--expected-failures", baseline)...)
	cmd.Dir = t.TempDir() // its results/ folder
	out, err := cmd.CombinedOutput()
	t.Logf("conformance %s:\n%s", strings.Join(args, " "), out)
	return string(out), err
}

// unexpectedFailures lists the scenarios the suite's summary names as
// failing beyond the baseline ("✗ name" under "Unexpected failures").
func unexpectedFailures(out string) []string {
	_, summary, ok := strings.Cut(out, "Unexpected failures (not in baseline)")
	if !ok {
		return nil
	}
	var names []string
	for _, line := range strings.Split(summary, "\n")[1:] {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "✗ ")
		if !ok {
			break
		}
		names = append(names, strings.TrimSpace(name))
	}
	return names
}

// TestMCPConformanceServer runs the conformance suite's server scenarios
// against /mcp.
func TestMCPConformanceServer(t *testing.T) {
	t.Parallel()
	e := startMCP(t, sqliteDatabase(t), "")
	conformance(t, "server", "--url", e.base+"/mcp")
}

// TestMCPConformanceClient runs the suite's client scenarios against the
// MCP client, through internal/mcptest/conformanceclient.
func TestMCPConformanceClient(t *testing.T) {
	// Not parallel: the suite's sse-retry scenario times the client's
	// reconnection, and with the other whole-service tests running
	// beside it a loaded machine made it late. It runs before them.
	client := filepath.Join(t.TempDir(), "conformanceclient")
	if out, err := exec.Command("go", "build", "-o", client, "../mcptest/conformanceclient").CombinedOutput(); err != nil {
		t.Fatalf("building the conformance client: %v\n%s", err, out)
	}
	out, err := runConformance(t, "client", "--command", client, "--suite", "core")
	if err == nil {
		return
	}
	// sse-retry times the client's reconnection against the server's
	// retry field (500 ms, late beyond 1 s), and the suite runs its 18
	// scenarios at once: on a loaded machine the client can be late for
	// want of CPU, not of respecting the field. Only that scenario, and
	// only alone, gets a second try; any other failure stands.
	if failed := unexpectedFailures(out); len(failed) != 1 || failed[0] != "sse-retry" {
		t.Fatalf("conformance client failed beyond the expected failures: %v (unexpected: %q)", err, failed)
	}
	t.Logf("sse-retry failed beside the other scenarios; running it alone once more")
	conformance(t, "client", "--command", client, "--scenario", "sse-retry")
}
