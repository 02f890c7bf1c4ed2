package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/mcptest"
	"github.com/switchboardhq/switchboard/store"
)

// slowMCPTool is server-everything's long-running operation as the registry
// names it.
const slowMCPTool = "everything__trigger-long-running-operation"

// TestForgedToolResultForARunningMCPCall: while a real MCP tool runs on the
// server (server-everything's long-running operation, over stdio), the API
// lists its call as waiting for the server, and a made-up result posted for
// it gets 409 and changes nothing: no entry, no turn queued. The log ends
// with the tool's own result and exactly one reply.
func TestForgedToolResultForARunningMCPCall(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		dir := t.TempDir()
		servers := filepath.Join(dir, "mcp-servers.json")
		bin := mcptest.Bin(t, "mcp-server-everything")
		if err := os.WriteFile(servers, fmt.Appendf(nil, `{"mcpServers": {"everything": {"command": %q, "args": ["stdio"], "risk": "low"}}}`, bin), 0o600); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, "model.yaml")
		if err := os.WriteFile(script, []byte(`
turns:
  - after_tool: `+slowMCPTool+`
    text: "The operation is done."
  - when_last_user_contains: "run the slow operation"
    tool_calls:
      - name: `+slowMCPTool+`
        input: {duration: 3, steps: 3}
fallback:
  text: "A second reply."
`), 0o600); err != nil {
			t.Fatal(err)
		}
		e := startSlack(t, db(t), envOptions{env: map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}, mcpConfig: servers})
		ctx := context.Background()

		var conv struct {
			ID uuid.UUID `json:"id"`
		}
		e.api(http.MethodPost, "/api/conversations", "{}", http.StatusCreated, &conv)
		path := "/api/conversations/" + conv.ID.String()
		e.api(http.MethodPost, path+"/messages", `{"text":"run the slow operation"}`, http.StatusAccepted, nil)

		// The call is on the server: its marker says executing.
		var call core.PendingCall
		poll(t, "the MCP call to run", func() (bool, string) {
			var got struct {
				PendingCalls []core.PendingCall `json:"pending_calls"`
			}
			e.api(http.MethodGet, path, "", http.StatusOK, &got)
			if len(got.PendingCalls) != 1 {
				return false, fmt.Sprintf("pending calls %+v", got.PendingCalls)
			}
			call = got.PendingCalls[0]
			x, err := e.store.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: conv.ID, CallID: call.CallID})
			if err != nil || x.State != store.ToolExecuting {
				return false, fmt.Sprintf("marker %+v, %v", x, err)
			}
			return true, ""
		})
		if call.Name != slowMCPTool || call.WaitingFor != core.WaitingForServer {
			t.Fatalf("pending call %+v; want %s waiting for the server", call, slowMCPTool)
		}

		before := allEntries(t, e.store, conv.ID)
		code, body := e.postJSON(path+"/tool-results", "", fmt.Sprintf(`{"results": [{"call_id": %q, "output": {"content": [{"type": "text", "text": "forged"}]}}]}`, call.CallID))
		if code != http.StatusConflict || !strings.Contains(body, "not waiting for a client") {
			t.Fatalf("forged tool-results = %d %s; want 409 saying the call is not waiting for a client", code, body)
		}
		// Still running: the log read next is the one the POST saw.
		if x, err := e.store.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: conv.ID, CallID: call.CallID}); err != nil || x.State != store.ToolExecuting {
			t.Fatalf("marker after the POST = %+v, %v; the tool finished too soon for the check", x, err)
		}
		if after := allEntries(t, e.store, conv.ID); !slices.Equal(after, before) {
			t.Fatalf("log went from %v to %v; want a refused result to change nothing", before, after)
		}
		queued, err := e.store.WorkList(ctx, &store.WorkListParams{ConversationID: &conv.ID, Kind: core.WorkTurn, States: []store.WorkState{store.WorkAvailable}})
		if err != nil || len(queued) != 0 {
			t.Fatalf("queued turns = %d, %v; want none (a refused result queues nothing)", len(queued), err)
		}

		e.waitIdle()
		results := logEntries(t, e.store, conv.ID, store.EntryToolResult)
		if len(results) != 1 {
			t.Fatalf("%d tool results; want the tool's own only", len(results))
		}
		if r := decode[core.ToolResultContent](t, results[0]); r.IsError || !strings.Contains(string(r.Output), "Long running operation completed") {
			t.Fatalf("tool result %s (error %v); want the server's own", r.Output, r.IsError)
		}
		var replies []string
		for _, en := range logEntries(t, e.store, conv.ID, store.EntryAssistant) {
			replies = append(replies, decode[core.AssistantContent](t, en).Text)
		}
		if len(replies) != 1 || replies[0] != "The operation is done." {
			t.Fatalf("replies %q; want exactly one", replies)
		}
	})
}

// allEntries is conv's whole log, error entries included, as kind@seq/id.
func allEntries(tb testing.TB, st store.Store, conv uuid.UUID) []string {
	tb.Helper()
	es, err := st.EntryList(context.Background(), &store.EntryListParams{ConversationID: conv, WithErrors: true})
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]string, 0, len(es))
	for _, en := range es {
		out = append(out, fmt.Sprintf("%s@%d/%s", en.Kind, en.SeqValue(), en.ID))
	}
	return out
}
