// Command fakecli stands in for the Claude Code CLI (claude) and the Codex
// CLI (codex) in tests. It prints the event streams the real CLIs print
// (see core/model/claudecode.go and codex.go for where their shapes come
// from), chosen by FAKECLI_SCENARIO:
//
//	text          streamed text, usage and cost (the default)
//	tool          a tool call to the MCP tool "helper", then text with its answer: when the
//	              CLI was given an MCP server (--mcp-config, -c mcp_servers.NAME.url), a real
//	              call over streamable HTTP with the bearer token of SWITCHBOARD_MCP_TOKEN;
//	              otherwise the answer is "42"
//	crash         some text, then exit 2 with an error on stderr
//	crash_once    crash on the first call of a FAKECLI_STATE directory, answer after
//	hang          start a child process (its pid in FAKECLI_STATE/child.pid), then print nothing for ever
//	noauth        not logged in, as the real CLIs report it
//	linger        answer as text does, close stdout, then never exit
//	edit          a coding step: append a line naming the prompt's first line to
//	              FAKECLI_EDIT_FILE (default CHANGES.md) in its working directory, shown as an
//	              Edit tool call; when the prompt says something failed, also write FIXED
//	text_hang_once  on the first call of a FAKECLI_STATE directory, stream part of an
//	              answer ("I was about to"), record its own pid in FAKECLI_STATE/self.pid and
//	              hang; text after
//	edit_hang_once  on the first call of a FAKECLI_STATE directory, write half a file
//	              (PARTIAL) and hang; edit after
//
// Codex's turn.completed usage counts the whole thread, as the real one's
// does: a resumed thread's second call reports twice the tokens.
// Whatever the scenario, a --resume (claude) or `exec resume` (codex) of a
// session this fake never made fails as the real CLI does ("No conversation
// found", "no rollout found"). Sessions it made are files in FAKECLI_STATE.
// Each call appends one JSON line to FAKECLI_LOG: its arguments, its stdin,
// its working directory and whether the MCP token variable was set.
//
// The dialect is codex when the first argument is "exec" (or "login"), or
// when the program's name starts with "codex"; claude otherwise.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	args := os.Args[1:]
	codex := strings.HasPrefix(filepath.Base(os.Args[0]), "codex") || (len(args) > 0 && (args[0] == "exec" || args[0] == "login"))
	scenario := os.Getenv("FAKECLI_SCENARIO")
	if scenario == "" {
		scenario = "text"
	}
	state := os.Getenv("FAKECLI_STATE")
	if state == "" {
		state = os.TempDir()
	}

	if len(args) > 0 && args[0] == "--version" {
		if codex {
			fmt.Println("codex-cli 0.171.0 (fake)")
		} else {
			fmt.Println("2.1.197 (Claude Code) (fake)")
		}
		return
	}
	if len(args) > 0 && args[0] == "sleep-child" {
		time.Sleep(time.Hour)
		return
	}
	if !codex && len(args) >= 2 && args[0] == "auth" && args[1] == "status" {
		if scenario == "noauth" {
			fmt.Println(`{"loggedIn": false, "authMethod": "none", "apiProvider": "firstParty"}`)
			os.Exit(1)
		}
		fmt.Println(`{"loggedIn": true, "authMethod": "claude.ai", "apiProvider": "firstParty"}`)
		return
	}
	if codex && len(args) >= 2 && args[0] == "login" && args[1] == "status" {
		if scenario == "noauth" {
			fmt.Fprintln(os.Stderr, "Not logged in")
			os.Exit(1)
		}
		fmt.Println("Logged in using ChatGPT")
		return
	}

	stdin, _ := io.ReadAll(os.Stdin)
	resume := resumeOf(args, codex)
	logCall(args, stdin, resume)

	if resume != "" {
		if _, err := os.Stat(filepath.Join(state, "session-"+resume)); err != nil {
			if codex {
				fmt.Fprintf(os.Stderr, "Error: thread/resume: thread/resume failed: no rollout found for thread id %s (code -32600)\n", resume)
				os.Exit(1)
			}
			emit(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": 0,
				"session_id": resume, "total_cost_usd": 0, "errors": []string{"No conversation found with session ID: " + resume}})
			os.Exit(1)
		}
	}
	session := resume
	if session == "" {
		session = newID()
		_ = os.WriteFile(filepath.Join(state, "session-"+session), nil, 0o600)
	}
	prompt := promptOf(stdin, codex)

	if scenario == "crash_once" {
		marker := filepath.Join(state, "crashed")
		if _, err := os.Stat(marker); err != nil {
			_ = os.WriteFile(marker, nil, 0o600)
			scenario = "crash"
		} else {
			scenario = "text"
		}
	}
	if scenario == "edit_hang_once" {
		marker := filepath.Join(state, "hung")
		if _, err := os.Stat(marker); err != nil {
			_ = os.WriteFile(marker, nil, 0o600)
			_ = os.WriteFile("PARTIAL", []byte("half of"), 0o600)
			scenario = "hang"
		} else {
			scenario = "edit"
		}
	}
	if scenario == "text_hang_once" {
		marker := filepath.Join(state, "text-hung")
		if _, err := os.Stat(marker); err != nil {
			_ = os.WriteFile(marker, nil, 0o600)
			scenario = "text_hang"
		} else {
			scenario = "text"
		}
	}
	linger := scenario == "linger"
	if linger {
		scenario = "text"
	}
	if codex {
		runCodex(scenario, session, prompt, state)
	} else {
		runClaude(scenario, session, prompt, state)
	}
	if linger {
		_ = os.Stdout.Close()
		hang(state, session)
	}
}

func runClaude(scenario, session, prompt, state string) {
	emit(map[string]any{"type": "system", "subtype": "init", "cwd": cwd(), "session_id": session, "model": "claude-sonnet-4-5",
		"tools": []string{"Bash", "Edit", "Read"}, "mcp_servers": []any{}, "permissionMode": "default", "apiKeySource": "none"})
	if scenario == "noauth" {
		emit(map[string]any{"type": "assistant", "message": map[string]any{"id": newID(), "model": "<synthetic>", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "Not logged in · Please run /login"}}},
			"parent_tool_use_id": nil, "session_id": session, "error": "authentication_failed"})
		emit(map[string]any{"type": "result", "subtype": "success", "is_error": true, "api_error_status": nil, "num_turns": 1,
			"result": "Not logged in · Please run /login", "session_id": session, "total_cost_usd": 0,
			"usage": map[string]any{"input_tokens": 0, "output_tokens": 0}})
		os.Exit(1)
	}
	var texts []string
	message := func(text string, tool map[string]any) {
		emit(streamEvent(session, map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{},
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}}))
		emit(streamEvent(session, map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, w := range words(text) {
			emit(streamEvent(session, map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": w}}))
		}
		emit(map[string]any{"type": "assistant", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{map[string]any{"type": "text", "text": text}}}, "parent_tool_use_id": nil, "session_id": session})
		emit(streamEvent(session, map[string]any{"type": "content_block_stop", "index": 0}))
		if tool != nil {
			emit(streamEvent(session, map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "tool_use", "id": tool["id"], "name": tool["name"], "input": map[string]any{}}}))
			raw, _ := json.Marshal(tool["input"])
			emit(streamEvent(session, map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(raw)}}))
			emit(map[string]any{"type": "assistant", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
				"content": []any{map[string]any{"type": "tool_use", "id": tool["id"], "name": tool["name"], "input": tool["input"]}}}, "parent_tool_use_id": nil, "session_id": session})
			emit(streamEvent(session, map[string]any{"type": "content_block_stop", "index": 1}))
		}
		stop := "end_turn"
		if tool != nil {
			stop = "tool_use"
		}
		emit(streamEvent(session, map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 12}}))
		emit(streamEvent(session, map[string]any{"type": "message_stop"}))
		texts = append(texts, text)
	}
	switch scenario {
	case "tool":
		message("Let me ask the helper.", map[string]any{"id": "toolu_01", "name": "mcp__switchboard__helper", "input": map[string]any{"message": "what is 6*7?"}})
		answer := callHelper(claudeMCPURL(os.Args[1:]))
		emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": "toolu_01", "type": "tool_result", "content": answer}}},
			"parent_tool_use_id": nil, "session_id": session})
		message("The helper says "+answer+".", nil)
	case "edit":
		name := os.Getenv("FAKECLI_EDIT_FILE")
		if name == "" {
			name = "CHANGES.md"
		}
		path, _ := filepath.Abs(name)
		message("Editing "+name+".", map[string]any{"id": "toolu_e1", "name": "Edit", "input": map[string]any{"file_path": path}})
		first, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "- %s\n", first)
			_ = f.Close()
		}
		result := "The file was edited."
		if err != nil {
			result = "Error: " + err.Error()
		}
		if strings.Contains(prompt, "failed") {
			_ = os.WriteFile("FIXED", []byte("yes\n"), 0o644)
		}
		emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": "toolu_e1", "type": "tool_result", "content": result}}},
			"parent_tool_use_id": nil, "session_id": session})
		message("Edited "+name+".", nil)
	case "crash":
		message("I was about to", nil)
		fmt.Fprintln(os.Stderr, "Error: the fake crashed; key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 leaked")
		os.Exit(2)
	case "hang":
		hang(state, session)
	case "text_hang":
		emit(streamEvent(session, map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{},
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}}))
		emit(streamEvent(session, map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, w := range words("I was about to") {
			emit(streamEvent(session, map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": w}}))
		}
		_ = os.WriteFile(filepath.Join(state, "self.pid"), []byte(fmt.Sprint(os.Getpid())), 0o600)
		time.Sleep(time.Hour)
	default:
		message("Echo: "+lastLine(prompt), nil)
	}
	n := int64(len(texts))
	emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "num_turns": n, "result": texts[len(texts)-1],
		"stop_reason": "end_turn", "session_id": session, "total_cost_usd": 0.0012345 * float64(n),
		"usage":      map[string]any{"input_tokens": 100 * n, "cache_creation_input_tokens": 5 * n, "cache_read_input_tokens": 20 * n, "output_tokens": 12 * n},
		"modelUsage": map[string]any{}, "permission_denials": []any{}})
}

func runCodex(scenario, session, prompt, state string) {
	emit(map[string]any{"type": "thread.started", "thread_id": session})
	emit(map[string]any{"type": "turn.started"})
	switch scenario {
	case "noauth":
		emit(map[string]any{"type": "error", "message": "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header"})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": "unexpected status 401 Unauthorized: Missing bearer or basic authentication in header"}})
		os.Exit(1)
	case "tool":
		emit(map[string]any{"type": "item.started", "item": map[string]any{"id": "item_0", "type": "mcp_tool_call", "server": "switchboard", "tool": "helper", "arguments": map[string]any{"message": "what is 6*7?"}, "status": "in_progress"}})
		answer := callHelper(codexMCPURL(os.Args[1:]))
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "mcp_tool_call", "server": "switchboard", "tool": "helper", "arguments": map[string]any{"message": "what is 6*7?"}, "status": "completed"}})
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "agent_message", "text": "The helper says " + answer + "."}})
	case "crash":
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "reasoning", "text": "thinking"}})
		fmt.Fprintln(os.Stderr, "thread 'main' panicked: the fake crashed; key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 leaked")
		os.Exit(101)
	case "hang":
		hang(state, session)
	default:
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "reasoning", "text": "**Answering**"}})
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "agent_message", "text": "Echo: " + lastLine(prompt)}})
	}
	// As the real codex does, turn.completed counts the whole thread.
	n := turns(state, session)
	emit(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 1200 * n, "cached_input_tokens": 1000 * n,
		"cache_write_input_tokens": 0, "output_tokens": 40 * n, "reasoning_output_tokens": 8 * n}})
}

// turns counts this call in the session's file and returns the session's
// number of turns.
func turns(state, session string) int {
	path := filepath.Join(state, "session-"+session)
	raw, _ := os.ReadFile(path)
	n := len(raw) + 1
	_ = os.WriteFile(path, []byte(strings.Repeat(".", n)), 0o600)
	return n
}

// hang starts a child that would outlive a careless kill, records its pid,
// and waits for ever.
func hang(state, session string) {
	child := exec.Command(os.Args[0], "sleep-child")
	if err := child.Start(); err == nil {
		_ = os.WriteFile(filepath.Join(state, "child.pid"), []byte(fmt.Sprint(child.Process.Pid)), 0o600)
	}
	time.Sleep(time.Hour)
}

func streamEvent(session string, ev map[string]any) map[string]any {
	return map[string]any{"type": "stream_event", "event": ev, "session_id": session, "parent_tool_use_id": nil, "uuid": newID()}
}

func emit(v map[string]any) {
	raw, _ := json.Marshal(v)
	os.Stdout.Write(append(raw, '\n'))
}

// resumeOf is the session a call resumes, or "".
func resumeOf(args []string, codex bool) string {
	if codex {
		if len(args) < 2 || args[0] != "exec" || args[1] != "resume" {
			return ""
		}
		// exec resume [flags] SESSION -: the session is the argument before "-".
		if n := len(args); n >= 2 && args[n-1] == "-" {
			return args[n-2]
		}
		return ""
	}
	for i, a := range args {
		if (a == "--resume" || a == "-r") && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// promptOf is the user's text: the stream-json message for claude, stdin
// for codex.
func promptOf(stdin []byte, codex bool) string {
	if codex {
		return string(stdin)
	}
	var msg struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	}
	line, _, _ := strings.Cut(string(stdin), "\n")
	if json.Unmarshal([]byte(line), &msg) != nil || msg.Type != "user" {
		fmt.Fprintln(os.Stderr, "Error: expected a stream-json user message on stdin")
		os.Exit(1)
	}
	var b strings.Builder
	for _, c := range msg.Message.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func logCall(args []string, stdin []byte, resume string) {
	path := os.Getenv("FAKECLI_LOG")
	if path == "" {
		return
	}
	_, tokenSet := os.LookupEnv("SWITCHBOARD_MCP_TOKEN")
	raw, _ := json.Marshal(map[string]any{"args": args, "stdin": string(stdin), "dir": cwd(), "resume": resume,
		"mcp_token_set": tokenSet, "env_count": len(os.Environ())})
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(raw, '\n'))
}

// lastLine is the last non-empty line of the prompt that is not the
// per-turn block (which starts with "[").
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "(") && !strings.HasPrefix(l, "The time") && !strings.HasPrefix(l, "Current") {
			return l
		}
	}
	return ""
}

func words(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s[1:], ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func cwd() string {
	d, _ := os.Getwd()
	return d
}

// claudeMCPURL is the URL of the first server in --mcp-config, or "".
func claudeMCPURL(args []string) string {
	for i, a := range args {
		if a != "--mcp-config" || i+1 >= len(args) {
			continue
		}
		var cfg struct {
			MCPServers map[string]struct {
				URL string `json:"url"`
			} `json:"mcpServers"`
		}
		if json.Unmarshal([]byte(args[i+1]), &cfg) != nil {
			fmt.Fprintln(os.Stderr, "Error: --mcp-config is not JSON")
			os.Exit(1)
		}
		for _, s := range cfg.MCPServers {
			return s.URL
		}
	}
	return ""
}

// codexMCPURL is the URL of -c mcp_servers.NAME.url="…", or "".
func codexMCPURL(args []string) string {
	for i, a := range args {
		if a != "-c" || i+1 >= len(args) {
			continue
		}
		k, v, _ := strings.Cut(args[i+1], "=")
		if strings.HasPrefix(k, "mcp_servers.") && strings.HasSuffix(k, ".url") {
			var u string
			if json.Unmarshal([]byte(v), &u) == nil {
				return u
			}
		}
	}
	return ""
}

// callHelper calls the tool "helper" of the MCP server at url, as the real
// CLIs do, and returns its text; "42" when there is no server.
func callHelper(url string) string {
	if url == "" {
		return "42"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: bearer{token: os.Getenv("SWITCHBOARD_MCP_TOKEN")}}
	client := mcp.NewClient(&mcp.Implementation{Name: "fakecli", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error: connecting to the MCP server:", err)
		os.Exit(3)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "helper", Arguments: map[string]any{"message": "what is 6*7?"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error: calling helper:", err)
		os.Exit(3)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if res.IsError {
		return "an error: " + b.String()
	}
	return b.String()
}

// bearer adds the token to every request, as the CLIs do with the header
// of their MCP settings.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}
