package model

// The Codex CLI, run non-interactively.
//
// Flags and event shapes are those of @openai/codex 0.171.0, read from
// `codex exec --help`, `codex exec resume --help` and `codex login --help`
// of the npm package, from the event names its binary carries
// (thread.started, turn.started, turn.completed, turn.failed, item.started,
// item.updated, item.completed, error), and from its output against a local
// Responses API fake (a custom model_provider), fresh and resumed; the
// -c mcp_servers.NAME.url and bearer_token_env_var settings were seen to
// reach an HTTP MCP server with the token:
//
//	codex exec --json --skip-git-repo-check [-m M] [-c KEY=TOML]… -
//	codex exec resume --json --skip-git-repo-check [-m M] [-c KEY=TOML]… THREAD_ID -
//
// The prompt is read from stdin ("-"). stdout prints one event a line:
//
//	{"type":"thread.started","thread_id":"01a235be-…"}
//	{"type":"turn.started"}
//	{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","status":"in_progress"}}
//	{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}
//	{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5` not found. …"}}
//	{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":1000,"cache_write_input_tokens":0,"output_tokens":40,"reasoning_output_tokens":8}}
//	{"type":"turn.failed","error":{"message":"…"}}
//	{"type":"error","message":"Reconnecting... 2/5 (…)"}
//
// Codex prints whole items, not token deltas, so an agent message arrives
// as one delta. It reports no cost, and its turn.completed usage counts the
// whole thread (see Session.Totals). A resume of an unknown thread exits
// with "no rollout found for thread id …" on stderr.

import (
	"encoding/json"
	"fmt"
	"strings"
)

type codex struct{}

func (codex) program() string { return "codex" }

// codexEffort maps thinking levels to model_reasoning_effort.
var codexEffort = map[string]string{ThinkingLow: "low", ThinkingMedium: "medium", ThinkingHigh: "high"}

// tomlString quotes s as a TOML basic string for -c: JSON's escapes are
// TOML's.
func tomlString(s string) string {
	raw, _ := json.Marshal(s) // a string always marshals
	return string(raw)
}

func (codex) invocation(b *cliBackend, req *Request, prompt, session string) ([]string, []byte, error) {
	args := []string{"exec"}
	if session != "" {
		args = append(args, "resume")
	}
	args = append(args, "--json", "--skip-git-repo-check")
	if m := b.modelFor(req); m != "" {
		args = append(args, "-m", m)
	}
	if sys := systemText(req); sys != "" {
		args = append(args, "-c", "developer_instructions="+tomlString(sys))
	}
	if e, ok := codexEffort[req.Thinking]; ok {
		args = append(args, "-c", "model_reasoning_effort="+tomlString(e))
	}
	if m := b.opts.MCP; m != nil {
		key := "mcp_servers." + m.Name
		// The token stays off the command line: Codex reads it from the
		// variable bearer_token_env_var names.
		args = append(args, "-c", key+".url="+tomlString(m.URL), "-c", key+".bearer_token_env_var="+tomlString(m.TokenEnv))
		if len(m.Exclude) > 0 {
			quoted := make([]string, len(m.Exclude))
			for i, ex := range m.Exclude {
				quoted[i] = tomlString(ex)
			}
			args = append(args, "-c", key+".disabled_tools=["+strings.Join(quoted, ",")+"]")
		}
	}
	args = append(args, b.opts.Args...)
	if session != "" {
		args = append(args, session)
	}
	args = append(args, "-")
	return args, []byte(prompt), nil
}

func (codex) newParser(b *cliBackend, emit func(Event), resumed *Session) cliParser {
	p := &codexParser{b: b, emit: emit}
	if resumed != nil && resumed.Totals != nil {
		p.prev = *resumed.Totals
	}
	return p
}

// codexLine is one line of codex exec --json.
type codexLine struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"` // error
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"` // turn.failed
	Usage *struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
		ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
	Item *struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Message   string          `json:"message"`
		Command   string          `json:"command"`
		Server    string          `json:"server"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Query     string          `json:"query"`
	} `json:"item"`
}

type codexParser struct {
	b       *cliBackend
	emit    func(Event)
	thread  string
	texts   []string
	started map[string]bool
	lastErr string // the last error line, for a crash's message
	done    *codexLine
	prev    Usage // the resumed thread's totals before this call
}

func (p *codexParser) line(raw []byte) error {
	var l codexLine
	if err := json.Unmarshal(raw, &l); err != nil {
		p.b.call.log.Debug("codex printed a line that is not JSON", "line", truncate(string(raw), 200))
		return nil
	}
	switch l.Type {
	case "thread.started":
		p.thread = l.ThreadID
	case "item.started", "item.completed":
		it := l.Item
		if it == nil {
			return nil
		}
		name, input := codexTool(it.Type, it.Command, it.Server, it.Tool, it.Query, it.Arguments)
		if name != "" {
			if p.started == nil {
				p.started = map[string]bool{}
			}
			if !p.started[it.ID] {
				p.started[it.ID] = true
				p.emit(Event{Kind: EventToolCallStart, CallID: it.ID, ToolName: name})
			}
			if l.Type == "item.completed" {
				p.emit(Event{Kind: EventToolCallEnd, CallID: it.ID, ToolName: name, Input: input})
			}
			return nil
		}
		if l.Type != "item.completed" {
			return nil
		}
		switch it.Type {
		case "agent_message":
			if it.Text == "" {
				return nil
			}
			if len(p.texts) > 0 {
				p.emit(Event{Kind: EventTextDelta, Text: "\n\n"})
			}
			p.texts = append(p.texts, it.Text)
			p.emit(Event{Kind: EventTextDelta, Text: it.Text})
		case "reasoning":
			p.emit(Event{Kind: EventThinkingDelta, Text: it.Text})
		case "error":
			p.lastErr = it.Message
		}
	case "error":
		p.lastErr = l.Message
	case "turn.completed", "turn.failed":
		p.done = &l
	}
	return nil
}

// codexTool names a tool item for status lines, with its input; "" for
// items that are not tool calls.
func codexTool(typ, command, server, tool, query string, args json.RawMessage) (string, json.RawMessage) {
	obj := func(k, v string) json.RawMessage {
		raw, _ := json.Marshal(map[string]string{k: v})
		return raw
	}
	switch typ {
	case "command_execution":
		return "shell", obj("command", command)
	case "mcp_tool_call":
		name := tool
		if server != "" {
			name = server + "." + tool
		}
		return name, finishArgs(string(args))
	case "web_search":
		return "web_search", obj("query", query)
	case "file_change":
		return "file_change", json.RawMessage("{}")
	}
	return "", nil
}

func (p *codexParser) complete() bool { return p.done != nil }

func (p *codexParser) finish(exit error, stderr string) (*Response, error) {
	if p.done == nil {
		low := strings.ToLower(stderr)
		for _, s := range []string{"no rollout found", "thread not found", "no saved session found", "session not found"} {
			if strings.Contains(low, s) {
				return nil, errSessionGone
			}
		}
		if notLoggedIn(stderr) || notLoggedIn(p.lastErr) {
			return nil, p.b.needsAuth(p.lastErr + " " + lastLines(stderr, 2))
		}
		if p.lastErr != "" {
			stderr += "\n" + p.lastErr
		}
		return nil, p.b.crashed(exit, stderr)
	}
	if p.done.Type == "turn.failed" {
		msg := p.lastErr
		if p.done.Error != nil && p.done.Error.Message != "" {
			msg = p.done.Error.Message
		}
		if notLoggedIn(msg) {
			return nil, p.b.needsAuth(msg)
		}
		status := codexStatus(msg)
		return nil, newError(ProviderCodex, status, status == 0 || retryableStatus(status), statusMessage(status, "turn_failed", msg), fmt.Errorf("codex: %s", msg))
	}
	resp := &Response{Model: p.b.model, StopReason: StopEndTurn}
	if text := strings.Join(p.texts, "\n\n"); text != "" {
		resp.Parts = []Part{{Kind: PartText, Text: text}}
	}
	var totals Usage
	if u := p.done.Usage; u != nil {
		// Codex counts cached input inside input_tokens, as OpenAI does;
		// Usage keeps the two apart.
		totals = Usage{InputTokens: max(u.InputTokens-u.CachedInputTokens-u.CacheWriteInputTokens, 0), CachedTokens: u.CachedInputTokens,
			CacheWriteTokens: u.CacheWriteInputTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningOutputTokens}
	}
	// turn.completed counts the whole thread (a resumed thread's second
	// call reported 2400 input tokens where each request had 1200, with
	// codex-cli 0.171.0), so this call's usage is what the thread added.
	resp.Usage = totals.sub(p.prev)
	if p.thread != "" {
		resp.Session = &Session{Provider: ProviderCodex, ID: p.thread, Totals: &totals}
	}
	p.emit(Event{Kind: EventUsage, Usage: &resp.Usage})
	p.emit(Event{Kind: EventStop, StopReason: resp.StopReason})
	return resp, nil
}

// codexStatus finds the HTTP status a failure message names ("unexpected
// status 429 Too Many Requests"), or 0. A failed turn with no status (the
// stream was cut, the network went away) counts as transient.
func codexStatus(msg string) int {
	for _, f := range strings.Fields(msg) {
		var n int
		if _, err := fmt.Sscanf(f, "%d", &n); err == nil && n >= 400 && n < 600 && len(f) == 3 {
			return n
		}
	}
	return 0
}
