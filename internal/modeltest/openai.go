package modeltest

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// NewOpenAI starts a fake OpenAI Chat Completions API (POST
// /v1/chat/completions, streaming only), closed when the test ends. Its URL
// includes /v1, as OPENAI_BASE_URL does. Requests without a key are
// accepted unless APIKey is set, like a local OpenAI-compatible server.
func NewOpenAI(t testing.TB) *Fake {
	f := newFake(t)
	f.URL = f.srv.URL + "/v1"
	f.stream = openaiStream
	f.check = openaiCheck
	f.errorf = openaiError
	return f
}

// openaiErrorTypes are the error type and code OpenAI sends by HTTP status.
var openaiErrorTypes = map[int][2]string{
	400: {"invalid_request_error", ""},
	401: {"invalid_request_error", "invalid_api_key"},
	403: {"invalid_request_error", "unsupported_country_region_territory"},
	404: {"invalid_request_error", "model_not_found"},
	429: {"requests", "rate_limit_exceeded"},
	500: {"server_error", ""},
	503: {"server_error", ""},
}

func openaiErrorBody(typ, code, msg string) string {
	var c any
	if code != "" {
		c = code
	}
	return mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
}

// openaiError answers with OpenAI's error JSON.
func openaiError(w http.ResponseWriter, e *apiError, retryAfter string) {
	tc, ok := openaiErrorTypes[e.status]
	if !ok {
		tc = [2]string{"server_error", ""}
		if e.status < 500 {
			tc = [2]string{"invalid_request_error", ""}
		}
	}
	if e.typ != "" {
		tc[0] = e.typ
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-request-id", "req_fake")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(e.status)
	fmt.Fprint(w, openaiErrorBody(tc[0], tc[1], e.msg))
}

var openaiToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// openaiCheck refuses requests the real API would refuse, for the faults a
// client is likely to have.
func openaiCheck(f *Fake, r *http.Request, body map[string]any) *apiError {
	invalid := func(format string, args ...any) *apiError {
		return &apiError{status: 400, typ: "invalid_request_error", msg: fmt.Sprintf(format, args...)}
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		return &apiError{status: 404, typ: "invalid_request_error", msg: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)}
	}
	if f.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+f.APIKey {
		return &apiError{status: 401, msg: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."}
	}
	if body["stream"] != true {
		return invalid("modeltest: the fake only implements streaming (stream: true)")
	}
	if asString(body["model"]) == "" {
		return invalid("you must provide a model parameter")
	}
	for i, tv := range asList(body["tools"]) {
		tool := asMap(tv)
		if tool["type"] != "function" {
			return invalid("Invalid value for 'tools[%d].type': expected 'function'.", i)
		}
		fn := asMap(tool["function"])
		if !openaiToolName.MatchString(asString(fn["name"])) {
			return invalid("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
		}
	}
	msgs := asList(body["messages"])
	if len(msgs) == 0 {
		return invalid("[] is too short - 'messages'")
	}
	var pending map[string]bool // tool_call ids still to be answered
	var answerable map[string]bool
	for i, mv := range msgs {
		m := asMap(mv)
		role := asString(m["role"])
		if role == "tool" {
			id := asString(m["tool_call_id"])
			if !answerable[id] {
				return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			delete(pending, id)
			continue
		}
		if len(pending) > 0 {
			var ids []string
			for id := range pending {
				ids = append(ids, id)
			}
			return invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(ids, ", "))
		}
		pending, answerable = nil, nil
		switch role {
		case "system", "developer", "user":
			if m["content"] == nil {
				return invalid("Invalid value for 'messages[%d].content': expected a string or an array.", i)
			}
		case "assistant":
			calls := asList(m["tool_calls"])
			if m["content"] == nil && len(calls) == 0 {
				return invalid("Invalid value for 'messages[%d]': an assistant message needs content or tool_calls.", i)
			}
			if len(calls) > 0 {
				pending, answerable = map[string]bool{}, map[string]bool{}
				for _, cv := range calls {
					id := asString(asMap(cv)["id"])
					pending[id], answerable[id] = true, true
				}
			}
		default:
			return invalid("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'.", role)
		}
	}
	if len(pending) > 0 {
		return invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.")
	}
	return nil
}

// openaiStream answers with chat.completion.chunk events: the role, content
// deltas, tool call deltas by index, the finish reason, a usage chunk when
// stream_options.include_usage is set, and [DONE].
func openaiStream(f *Fake, w http.ResponseWriter, r *http.Request, body map[string]any, reply Reply, n int) {
	model := reply.Model
	if model == "" {
		model = asString(body["model"])
	}
	includeUsage := asMap(body["stream_options"])["include_usage"] == true
	u := Usage{InputTokens: estimate(len(f.Requests()[n-1].Body)), OutputTokens: estimate(reply.textLen())}
	for _, c := range reply.ToolCalls {
		u.OutputTokens += estimate(len(c.input()))
	}
	if reply.Usage != nil {
		u = *reply.Usage
	}
	finish := reply.StopReason
	if finish == "" {
		finish = "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	id := fmt.Sprintf("chatcmpl-fake%d", n)

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("x-request-id", fmt.Sprintf("req_fake_%d", n))
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, r: r, reply: reply}
	chunk := func(choices []any) string {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000,
			"model": model, "system_fingerprint": "fp_fake", "choices": choices,
		}
		if includeUsage {
			c["usage"] = nil
		}
		return "data: " + mustJSON(c) + "\n\n"
	}
	delta := func(d map[string]any) string {
		return chunk([]any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": nil}})
	}
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
			if !s.send("data: {\"id\":\"" + id + "\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"oo\n\n") {
				return false
			}
		}
		if reply.StreamError != "" {
			msg := reply.ErrorMessage
			if msg == "" {
				msg = "The server had an error while processing your request."
			}
			s.send("data: " + openaiErrorBody(reply.StreamError, reply.StreamError, msg) + "\n\n")
			return false
		}
		return true
	}

	if !s.send(delta(map[string]any{"role": "assistant", "content": "", "refusal": nil})) {
		return
	}
	for d := range reply.textDeltas {
		if !content(delta(map[string]any{"content": d})) {
			return
		}
		f.textSent.Add(int64(len(d)))
	}
	for i, c := range reply.ToolCalls {
		callID := c.ID
		if callID == "" {
			callID = fmt.Sprintf("call_fake_%d_%d", n, i)
		}
		if !s.send(delta(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": callID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""},
		}}})) {
			return
		}
		for _, piece := range splitBytes(c.input(), 7) {
			if !content(delta(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": piece},
			}}})) {
				return
			}
		}
	}
	if !s.send(chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "logprobs": nil, "finish_reason": finish}})) {
		return
	}
	if includeUsage {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000,
			"model": model, "system_fingerprint": "fp_fake", "choices": []any{},
			"usage": map[string]any{
				"prompt_tokens":     u.InputTokens,
				"completion_tokens": u.OutputTokens,
				"total_tokens":      u.InputTokens + u.OutputTokens,
				"prompt_tokens_details": map[string]any{
					"cached_tokens": u.CacheReadTokens, "audio_tokens": 0,
				},
				"completion_tokens_details": map[string]any{
					"reasoning_tokens": u.ReasoningTokens, "audio_tokens": 0,
					"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
				},
			},
		}
		if !s.send("data: " + mustJSON(c) + "\n\n") {
			return
		}
	}
	if s.send("data: [DONE]\n\n") {
		f.streamEnded()
	}
}
