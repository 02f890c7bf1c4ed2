package modeltest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// NewAnthropic starts a fake Anthropic Messages API (POST /v1/messages,
// streaming only), closed when the test ends. It keeps a prompt cache and
// reports cache reads and writes as the real API does (see promptCache),
// unless a Reply sets Usage.
func NewAnthropic(t testing.TB) *Fake {
	f := newFake(t)
	f.URL = f.srv.URL
	f.stream = anthropicStream
	f.check = anthropicCheck
	f.errorf = anthropicError
	f.cache = &promptCache{}
	return f
}

// anthropicErrorTypes are the documented error types by HTTP status.
var anthropicErrorTypes = map[int]string{
	400: "invalid_request_error",
	401: "authentication_error",
	403: "permission_error",
	404: "not_found_error",
	413: "request_too_large",
	429: "rate_limit_error",
	500: "api_error",
	504: "timeout_error",
	529: "overloaded_error",
}

func anthropicErrorType(status int) string {
	if t, ok := anthropicErrorTypes[status]; ok {
		return t
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

func anthropicErrorBody(typ, msg string) string {
	return mustJSON(map[string]any{
		"type":       "error",
		"error":      map[string]any{"type": typ, "message": msg},
		"request_id": "req_fake",
	})
}

// anthropicError answers with Anthropic's error JSON.
func anthropicError(w http.ResponseWriter, e *apiError, retryAfter string) {
	typ := e.typ
	if typ == "" {
		typ = anthropicErrorType(e.status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_fake")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(e.status)
	fmt.Fprint(w, anthropicErrorBody(typ, e.msg))
}

var anthropicToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// anthropicCheck refuses requests the real API would refuse, for the faults
// a client is likely to have.
func anthropicCheck(f *Fake, r *http.Request, body map[string]any) *apiError {
	invalid := func(format string, args ...any) *apiError {
		return &apiError{status: 400, typ: "invalid_request_error", msg: fmt.Sprintf(format, args...)}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		return &apiError{status: 404, typ: "not_found_error", msg: fmt.Sprintf("%s %s: not found (the fake serves POST /v1/messages)", r.Method, r.URL.Path)}
	}
	key := r.Header.Get("X-Api-Key")
	if key == "" {
		return &apiError{status: 401, typ: "authentication_error", msg: "x-api-key header is required"}
	}
	if f.APIKey != "" && key != f.APIKey {
		return &apiError{status: 401, typ: "authentication_error", msg: "invalid x-api-key"}
	}
	if r.Header.Get("Anthropic-Version") == "" {
		return invalid("anthropic-version: header is required")
	}
	if body["stream"] != true {
		return invalid("modeltest: the fake only implements streaming (stream: true)")
	}
	if asString(body["model"]) == "" {
		return invalid("model: Field required")
	}
	if mt, _ := body["max_tokens"].(float64); mt < 1 {
		return invalid("max_tokens: Field required (an integer >= 1)")
	}
	maxTokens, _ := body["max_tokens"].(float64)

	cacheMarks := 0
	countCache := func(block map[string]any) {
		if block["cache_control"] != nil {
			cacheMarks++
		}
	}
	for i, tv := range asList(body["tools"]) {
		tool := asMap(tv)
		if tool["type"] != nil && tool["type"] != "custom" {
			continue // server tools have no schema
		}
		if name := asString(tool["name"]); !anthropicToolName.MatchString(name) {
			return invalid("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i)
		}
		if schema := asMap(tool["input_schema"]); schema == nil || schema["type"] != "object" {
			return invalid("tools.%d.custom.input_schema.type: Input should be 'object'", i)
		}
		countCache(tool)
	}
	switch sys := body["system"].(type) {
	case nil, string:
	case []any:
		for i, b := range sys {
			block := asMap(b)
			if asString(block["text"]) == "" {
				return invalid("system.%d: text content blocks must be non-empty", i)
			}
			countCache(block)
		}
	default:
		return invalid("system: Input should be a valid string or list")
	}

	msgs := asList(body["messages"])
	if len(msgs) == 0 {
		return invalid("messages: at least one message is required")
	}
	var prevToolUses map[string]bool // tool_use ids of the previous assistant message
	for i, mv := range msgs {
		m := asMap(mv)
		role := asString(m["role"])
		if role != "user" && role != "assistant" {
			return invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		var blocks []any
		switch c := m["content"].(type) {
		case string:
			if c == "" {
				return invalid("messages.%d: user messages must have non-empty content", i)
			}
		case []any:
			if len(c) == 0 {
				return invalid("messages.%d: all messages must have non-empty content", i)
			}
			blocks = c
		default:
			return invalid("messages.%d.content: Input should be a valid string or list", i)
		}
		toolUses := map[string]bool{}
		answered := map[string]bool{}
		seenOther := false
		for j, bv := range blocks {
			b := asMap(bv)
			countCache(b)
			switch asString(b["type"]) {
			case "text":
				if strings.TrimSpace(asString(b["text"])) == "" {
					return invalid("messages.%d.content.%d.text: text content blocks must contain non-whitespace text", i, j)
				}
				seenOther = true
			case "tool_use":
				if role != "assistant" {
					return invalid("messages.%d.content.%d: tool_use blocks are only allowed in assistant messages", i, j)
				}
				if asMap(b["input"]) == nil {
					return invalid("messages.%d.content.%d.tool_use.input: Input should be a valid dictionary", i, j)
				}
				toolUses[asString(b["id"])] = true
			case "tool_result":
				if role != "user" {
					return invalid("messages.%d.content.%d: tool_result blocks are only allowed in user messages", i, j)
				}
				if seenOther {
					return invalid("messages.%d: tool_result blocks must come first in the content array", i)
				}
				id := asString(b["tool_use_id"])
				if !prevToolUses[id] {
					return invalid("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, id)
				}
				answered[id] = true
			case "image", "document":
				if e := anthropicMedia(b, asString(b["type"]), role); e != "" {
					return invalid("messages.%d.content.%d.%s", i, j, e)
				}
				seenOther = true
			default:
				seenOther = true
			}
		}
		if len(prevToolUses) > 0 {
			var missing []string
			for id := range prevToolUses {
				if !answered[id] {
					missing = append(missing, id)
				}
			}
			if len(missing) > 0 {
				return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
			}
		}
		prevToolUses = toolUses
	}
	if len(prevToolUses) > 0 {
		return invalid("messages.%d: the conversation ends with `tool_use` blocks that have no `tool_result`", len(msgs)-1)
	}
	if cacheMarks > 4 {
		return invalid("A maximum of 4 blocks with cache_control may be provided. Found %d.", cacheMarks)
	}
	if th := asMap(body["thinking"]); th != nil && th["type"] == "enabled" {
		budget, _ := th["budget_tokens"].(float64)
		if budget < 1024 {
			return invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		}
		if budget >= maxTokens {
			return invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
		}
		if t, ok := body["temperature"].(float64); ok && t != 1 {
			return invalid("`temperature` may only be set to 1 when thinking is enabled")
		}
	}
	return nil
}

// anthropicMedia checks an image or document block as the API documents
// them: only in user messages, a base64 source whose media type the API
// reads (PNG, JPEG, GIF or WebP images; PDF documents) and whose data is
// base64. It returns what is wrong, or "".
func anthropicMedia(b map[string]any, typ, role string) string {
	if role != "user" {
		return typ + ": " + typ + " blocks are only allowed in user messages"
	}
	src := asMap(b["source"])
	if src == nil {
		return typ + ".source: Field required"
	}
	if asString(src["type"]) != "base64" {
		return "" // url and file sources carry no bytes to check
	}
	mt := asString(src["media_type"])
	ok := map[string]bool{"image/png": typ == "image", "image/jpeg": typ == "image", "image/gif": typ == "image", "image/webp": typ == "image", "application/pdf": typ == "document"}
	if !ok[mt] {
		return fmt.Sprintf("%s.source.base64.media_type: Input should be %s, got %q", typ, map[string]string{"image": "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", "document": "'application/pdf'"}[typ], mt)
	}
	data := asString(src["data"])
	if _, err := base64.StdEncoding.DecodeString(data); err != nil || data == "" {
		return typ + ".source.base64.data: Input should be valid base64"
	}
	return ""
}

// anthropicStream answers with the documented event sequence: message_start,
// content blocks (start, deltas, stop), a ping, message_delta with the stop
// reason and usage, message_stop.
func anthropicStream(f *Fake, w http.ResponseWriter, r *http.Request, body map[string]any, reply Reply, n int) {
	model := reply.Model
	if model == "" {
		model = asString(body["model"])
	}
	u := f.cache.usage(body, estimate(len(f.Requests()[n-1].Body)))
	u.OutputTokens = estimate(reply.textLen() + len(reply.Thinking))
	for _, c := range reply.ToolCalls {
		u.OutputTokens += estimate(len(c.input()))
	}
	if reply.Usage != nil {
		u = *reply.Usage
	}
	stop := reply.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(reply.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", fmt.Sprintf("req_fake_%d", n))
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, r: r, reply: reply}
	ev := func(name string, data any) string {
		return "event: " + name + "\ndata: " + mustJSON(data) + "\n\n"
	}
	// content sends a content event, then any fault the reply injects after
	// the first one. It reports false when the stream must end.
	content := func(frame string) bool {
		if !s.send(frame) {
			return false
		}
		s.content++
		if s.content != 1 {
			return true
		}
		if reply.Stall {
			s.stall()
			return false
		}
		if reply.Malformed {
			if !s.send("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n") {
				return false
			}
		}
		if reply.StreamError != "" {
			msg := reply.ErrorMessage
			if msg == "" {
				msg = "Overloaded"
			}
			s.send("event: error\ndata: " + anthropicErrorBody(reply.StreamError, msg) + "\n\n")
			return false
		}
		return true
	}

	if !s.send(ev("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": fmt.Sprintf("msg_fake_%d", n), "type": "message", "role": "assistant",
			"content": []any{}, "model": model, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens": u.InputTokens, "output_tokens": 1,
				"cache_creation_input_tokens": u.CacheWriteTokens,
				"cache_read_input_tokens":     u.CacheReadTokens,
			},
		},
	})) {
		return
	}
	index := 0
	if reply.Thinking != "" {
		if !s.send(ev("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})) {
			return
		}
		for _, d := range splitWords(reply.Thinking) {
			if !content(ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "thinking_delta", "thinking": d}})) {
				return
			}
		}
		if !s.send(ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "signature_delta", "signature": "fake-signature-" + fmt.Sprint(n)}})) {
			return
		}
		if !s.send(ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})) {
			return
		}
		index++
	}
	if reply.Text != "" {
		if !s.send(ev("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})) {
			return
		}
		if !s.send("event: ping\ndata: {\"type\": \"ping\"}\n\n") {
			return
		}
		for d := range reply.textDeltas {
			if !content(ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": d}})) {
				return
			}
			f.textSent.Add(int64(len(d)))
		}
		if !s.send(ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})) {
			return
		}
		index++
	}
	for i, c := range reply.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_fake_%d_%d", n, i)
		}
		if !s.send(ev("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": map[string]any{}}})) {
			return
		}
		for _, piece := range splitBytes(c.input(), 7) {
			if !content(ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})) {
				return
			}
		}
		if !s.send(ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})) {
			return
		}
		index++
	}
	if !s.send(ev("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{
			"output_tokens":               u.OutputTokens,
			"input_tokens":                u.InputTokens,
			"cache_creation_input_tokens": u.CacheWriteTokens,
			"cache_read_input_tokens":     u.CacheReadTokens,
		},
	})) {
		return
	}
	if s.send(ev("message_stop", map[string]any{"type": "message_stop"})) {
		f.streamEnded()
	}
}
