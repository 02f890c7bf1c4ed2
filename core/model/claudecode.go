package model

// The Claude Code CLI, run non-interactively.
//
// Flags and event shapes are those of @anthropic-ai/claude-code 2.1.197, read
// from `claude --help` and `claude auth status --help` of the npm package,
// and from its output against a local Messages API fake (the lines below are
// what it printed):
//
//	claude -p --input-format stream-json --output-format stream-json --verbose
//	       --include-partial-messages [--model M] [--resume SESSION]
//	       [--append-system-prompt TEXT] [--effort low|medium|high]
//	       [--mcp-config JSON --allowedTools mcp__NAME --disallowedTools mcp__NAME__SELF]
//
// stdin takes one user message a line:
//
//	{"type":"user","message":{"role":"user","content":[{"type":"text","text":"…"}]}}
//
// stdout prints one event a line:
//
//	{"type":"system","subtype":"init","session_id":"…","model":"…","tools":[…],"mcp_servers":[…]}
//	{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}},"parent_tool_use_id":null,"session_id":"…"}
//	{"type":"assistant","message":{"model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{…}}]},"parent_tool_use_id":null,"session_id":"…"}
//	{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"hi"}]}}
//	{"type":"result","subtype":"success","is_error":false,"result":"…","session_id":"…","stop_reason":"end_turn",
//	 "total_cost_usd":0.0005,"usage":{"input_tokens":100,"cache_creation_input_tokens":5,"cache_read_input_tokens":20,"output_tokens":12}}
//
// Not logged in, it answers with a synthetic assistant message whose
// "error" is "authentication_failed" ("Not logged in · Please run /login")
// and a result with is_error; a --resume of an unknown session gives a
// result of subtype "error_during_execution" whose errors say "No
// conversation found with session ID: …".

import (
	"encoding/json"
	"fmt"
	"strings"
)

type claudeCode struct{}

func (claudeCode) program() string { return "claude" }

// claudeEffort maps thinking levels to --effort.
var claudeEffort = map[string]string{ThinkingLow: "low", ThinkingMedium: "medium", ThinkingHigh: "high"}

func (claudeCode) invocation(b *cliBackend, req *Request, prompt, session string) ([]string, []byte, error) {
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--include-partial-messages"}
	if m := b.modelFor(req); m != "" {
		args = append(args, "--model", m)
	}
	if session != "" {
		args = append(args, "--resume", session)
	}
	if sys := systemText(req); sys != "" {
		args = append(args, "--append-system-prompt", sys)
	}
	if e, ok := claudeEffort[req.Thinking]; ok {
		args = append(args, "--effort", e)
	}
	if m := b.opts.MCP; m != nil {
		cfg := map[string]any{"mcpServers": map[string]any{m.Name: map[string]any{
			"type": "http", "url": m.URL,
			// Claude Code expands ${VAR} in MCP settings (2.1.197 sent
			// "Bearer <value>" to the server), so the token stays off the
			// command line and out of ps.
			"headers": map[string]string{"Authorization": "Bearer ${" + m.TokenEnv + "}"},
		}}}
		raw, err := json.Marshal(cfg)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--mcp-config", string(raw), "--allowedTools", "mcp__"+m.Name)
		for _, ex := range m.Exclude {
			args = append(args, "--disallowedTools", "mcp__"+m.Name+"__"+ex)
		}
	}
	args = append(args, b.opts.Args...)
	line, err := json.Marshal(map[string]any{
		"type":    "user",
		"message": map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": prompt}}},
	})
	if err != nil {
		return nil, nil, err
	}
	return args, append(line, '\n'), nil
}

// modelFor is the model to ask the CLI for: the request's, else the
// backend's; "" (or "default") leaves the CLI's own choice.
func (b *cliBackend) modelFor(req *Request) string {
	m := b.model
	if req.Model != "" {
		m = req.Model
	}
	if strings.EqualFold(m, "default") {
		return ""
	}
	return m
}

func (claudeCode) newParser(b *cliBackend, emit func(Event), _ *Session) cliParser {
	return &claudeParser{b: b, emit: emit, model: b.model}
}

// claudeLine is the part of a stream-json line the backend reads.
type claudeLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	Model           string          `json:"model"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Event           json.RawMessage `json:"event"`
	Message         *struct {
		Model   string `json:"model"`
		Content []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	} `json:"message"`
	Error string `json:"error"` // on a synthetic assistant message: "authentication_failed"

	// result
	IsError        bool     `json:"is_error"`
	Result         string   `json:"result"`
	Errors         []string `json:"errors"`
	StopReason     *string  `json:"stop_reason"`
	APIErrorStatus *int     `json:"api_error_status"`
	TotalCostUSD   *float64 `json:"total_cost_usd"`
	Usage          *struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// claudeStreamEvent is the Messages API event inside a stream_event line.
type claudeStreamEvent struct {
	Type         string `json:"type"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
}

type claudeParser struct {
	b       *cliBackend
	emit    func(Event)
	session string
	model   string
	texts   []string // the top-level assistant text blocks, in order
	// streamed is true once partial messages arrived: the assistant lines
	// then repeat what was already emitted.
	streamed bool
	// wrote is true once some text was emitted: the next message's text is
	// set apart from it.
	wrote     bool
	sepNeeded bool
	started   map[string]bool // tool calls whose start was emitted
	authError string
	result    *claudeLine
}

func (p *claudeParser) line(raw []byte) error {
	var l claudeLine
	if err := json.Unmarshal(raw, &l); err != nil {
		// A CLI may print a line that is not an event (a warning); it is
		// not worth failing the call for.
		p.b.call.log.Debug("claude-code printed a line that is not JSON", "line", truncate(string(raw), 200))
		return nil
	}
	if l.SessionID != "" {
		p.session = l.SessionID
	}
	topLevel := l.ParentToolUseID == nil || *l.ParentToolUseID == ""
	switch l.Type {
	case "system":
		if l.Subtype == "init" && l.Model != "" && p.model == "" {
			p.model = l.Model
		}
	case "stream_event":
		if !topLevel {
			return nil // a sub-agent's own stream
		}
		var ev claudeStreamEvent
		if json.Unmarshal(l.Event, &ev) != nil {
			return nil
		}
		p.streamed = true
		switch ev.Type {
		case "message_start":
			p.sepNeeded = p.wrote
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				p.startTool(ev.ContentBlock.ID, ev.ContentBlock.Name)
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				p.text(ev.Delta.Text)
			case "thinking_delta":
				p.emit(Event{Kind: EventThinkingDelta, Text: ev.Delta.Thinking})
			}
		}
	case "assistant":
		if l.Message == nil {
			return nil
		}
		if l.Error == "authentication_failed" {
			for _, c := range l.Message.Content {
				p.authError += c.Text
			}
			return nil
		}
		if !topLevel {
			return nil
		}
		if m := l.Message.Model; m != "" && m != "<synthetic>" {
			p.model = m
		}
		for _, c := range l.Message.Content {
			switch c.Type {
			case "text":
				if c.Text == "" {
					continue
				}
				p.texts = append(p.texts, c.Text)
				if !p.streamed {
					p.sepNeeded = p.wrote
					p.text(c.Text)
				}
			case "tool_use":
				p.startTool(c.ID, c.Name)
				p.emit(Event{Kind: EventToolCallEnd, CallID: c.ID, ToolName: c.Name, Input: finishArgs(string(c.Input))})
			}
		}
	case "result":
		p.result = &l
	}
	return nil
}

func (p *claudeParser) text(s string) {
	if s == "" {
		return
	}
	if p.sepNeeded {
		p.emit(Event{Kind: EventTextDelta, Text: "\n\n"})
		p.sepNeeded = false
	}
	p.wrote = true
	p.emit(Event{Kind: EventTextDelta, Text: s})
}

func (p *claudeParser) startTool(id, name string) {
	if p.started == nil {
		p.started = map[string]bool{}
	}
	if p.started[id] {
		return
	}
	p.started[id] = true
	p.emit(Event{Kind: EventToolCallStart, CallID: id, ToolName: name})
}

func (p *claudeParser) complete() bool { return p.result != nil }

func (p *claudeParser) finish(exit error, stderr string) (*Response, error) {
	r := p.result
	if r == nil {
		if strings.Contains(stderr, "No conversation found") {
			return nil, errSessionGone
		}
		if p.authError != "" || notLoggedIn(stderr) {
			return nil, p.b.needsAuth(p.authError + " " + lastLines(stderr, 2))
		}
		return nil, p.b.crashed(exit, stderr)
	}
	if r.IsError {
		for _, e := range r.Errors {
			if strings.Contains(e, "No conversation found") {
				return nil, errSessionGone
			}
		}
		if p.authError != "" || notLoggedIn(r.Result) {
			return nil, p.b.needsAuth(p.authError)
		}
		msg := strings.TrimSpace(r.Result)
		if msg == "" {
			msg = strings.Join(r.Errors, "; ")
		}
		if msg == "" {
			msg = r.Subtype
		}
		status := 0
		if r.APIErrorStatus != nil {
			status = *r.APIErrorStatus
		}
		e := newError(ProviderClaudeCode, status, status > 0 && retryableStatus(status), statusMessage(status, r.Subtype, msg), fmt.Errorf("claude-code: %s", msg))
		e.Type = r.Subtype
		return nil, e
	}
	resp := &Response{Model: p.model, StopReason: StopEndTurn}
	text := strings.Join(p.texts, "\n\n")
	if strings.TrimSpace(text) == "" {
		text = r.Result
		if text != "" && !p.wrote {
			p.emit(Event{Kind: EventTextDelta, Text: text})
		}
	}
	if text != "" {
		resp.Parts = []Part{{Kind: PartText, Text: text}}
	}
	if r.StopReason != nil && *r.StopReason != "" && *r.StopReason != "tool_use" {
		// tool_use never ends a CLI call: the CLI ran the tool itself.
		resp.StopReason = normaliseAnthropicStop(*r.StopReason)
	}
	if u := r.Usage; u != nil {
		resp.Usage = Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
	}
	if r.TotalCostUSD != nil {
		resp.CostMicroUSD = int64(*r.TotalCostUSD*1e6 + 0.5)
		resp.CostReported = true
	}
	if p.session != "" {
		resp.Session = &Session{Provider: ProviderClaudeCode, ID: p.session}
	}
	p.emit(Event{Kind: EventUsage, Usage: &resp.Usage})
	p.emit(Event{Kind: EventStop, StopReason: resp.StopReason})
	return resp, nil
}

// notLoggedIn reports whether a CLI's words say it has no credentials.
func notLoggedIn(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"not logged in", "please run /login", "invalid api key", "run `codex login`", "401 unauthorized", "authentication_failed"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
