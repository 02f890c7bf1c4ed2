package model

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

var openaiCase = httpProviders[1]

type openaiBody struct {
	Model               string   `json:"model"`
	Stream              bool     `json:"stream"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	ReasoningEffort     string   `json:"reasoning_effort"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func decodeOpenAI(t *testing.T, fake *modeltest.Fake, i int) openaiBody {
	t.Helper()
	reqs := fake.Requests()
	if len(reqs) <= i {
		t.Fatalf("got %d requests, want at least %d", len(reqs), i+1)
	}
	var b openaiBody
	if err := reqs[i].Decode(&b); err != nil {
		t.Fatalf("decoding request %d: %v", i, err)
	}
	return b
}

func TestOpenAIRequestShape(t *testing.T) {
	b, fake, _ := newBackend(t, openaiCase)
	fake.Push(modeltest.Reply{Text: "Done."})
	temp := 0.5
	req := &Request{
		System: []SystemBlock{{Text: "Stable rules.", Cache: true}},
		Turn:   "This turn: Ana.",
		Tools:  []Tool{{Name: "get_weather", Description: "Weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
		Messages: []Message{
			{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "Weather?"}}},
			{Role: RoleAssistant, Parts: []Part{
				{Kind: PartThinking, Text: "hidden", Signature: "sig"},
				{Kind: PartToolCall, CallID: "call_1", ToolName: "get_weather", Input: json.RawMessage(`{"city":"Oslo"}`)},
			}},
			{Role: RoleUser, Parts: []Part{
				{Kind: PartText, Text: "and be quick"},
				{Kind: PartToolResult, CallID: "call_1", Output: "timeout", IsError: true},
			}},
		},
		MaxTokens:   777,
		Temperature: &temp,
	}
	if _, err := b.Generate(context.Background(), req, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := decodeOpenAI(t, fake, 0)
	if !body.Stream || !body.StreamOptions.IncludeUsage {
		t.Errorf("stream=%v include_usage=%v, want both true", body.Stream, body.StreamOptions.IncludeUsage)
	}
	if body.Temperature == nil || *body.Temperature != 0.5 {
		t.Errorf("temperature = %v, want 0.5", body.Temperature)
	}
	// A local base URL means a compatible server: max_tokens.
	if body.MaxTokens == nil || *body.MaxTokens != 777 || body.MaxCompletionTokens != nil {
		t.Errorf("max_tokens=%v max_completion_tokens=%v, want 777 and unset for a compatible server", body.MaxTokens, body.MaxCompletionTokens)
	}
	roles := make([]string, len(body.Messages))
	for i, m := range body.Messages {
		roles[i] = m.Role
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,user,user" {
		t.Fatalf("roles = %v, want system,user,assistant,tool,user,user (tool results right after the call, the per-turn block last)", roles)
	}
	var system, turn string
	_ = json.Unmarshal(body.Messages[0].Content, &system)
	if system != "Stable rules." {
		t.Errorf("system = %q, want the stable block alone", system)
	}
	_ = json.Unmarshal(body.Messages[5].Content, &turn)
	if turn != "This turn: Ana." {
		t.Errorf("last message = %q, want the per-turn block after the history, where it leaves the cached prefix alone", turn)
	}
	call := body.Messages[2].ToolCalls
	if len(call) != 1 || call[0].ID != "call_1" || call[0].Type != "function" || call[0].Function.Name != "get_weather" || !jsonEqual(t, call[0].Function.Arguments, `{"city":"Oslo"}`) {
		t.Errorf("assistant tool_calls = %+v, want call_1 get_weather {city: Oslo}", call)
	}
	var toolContent string
	_ = json.Unmarshal(body.Messages[3].Content, &toolContent)
	if body.Messages[3].ToolCallID != "call_1" || toolContent != "Error: timeout" {
		t.Errorf("tool message = id %q content %q, want call_1 \"Error: timeout\"", body.Messages[3].ToolCallID, toolContent)
	}
	if len(body.Tools) != 1 || body.Tools[0].Type != "function" || body.Tools[0].Function.Name != "get_weather" || body.Tools[0].Function.Parameters["required"] == nil {
		t.Errorf("tools = %+v, want get_weather with its schema", body.Tools)
	}
	if h := fake.Requests()[0].Header; h.Get("Authorization") != "Bearer test-key-123" || h.Get("X-Stainless-Retry-Count") != "0" {
		t.Errorf("authorization=%q retry-count=%q, want the bearer key and 0", h.Get("Authorization"), h.Get("X-Stainless-Retry-Count"))
	}
}

func TestOpenAIReasoningModels(t *testing.T) {
	tests := []struct {
		model, thinking string
		wantEffort      string
		wantTemp        bool
	}{
		{model: "gpt-4.1-mini", thinking: ThinkingHigh, wantEffort: "", wantTemp: true},
		{model: "o4-mini", thinking: ThinkingHigh, wantEffort: "high"},
		{model: "o3", thinking: ThinkingOff, wantEffort: "low"},
		{model: "gpt-5-mini", thinking: ThinkingOff, wantEffort: "minimal"},
		{model: "gpt-5", thinking: ThinkingMedium, wantEffort: "medium"},
		{model: "gpt-5", thinking: "", wantEffort: ""},
		{model: "gpt-5-chat-latest", thinking: ThinkingHigh, wantEffort: "", wantTemp: true},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.thinking, func(t *testing.T) {
			pc := openaiCase
			pc.model = tt.model
			b, fake, _ := newBackend(t, pc)
			fake.Push(modeltest.Reply{Text: "ok"})
			temp := 0.7
			req := userText("hi")
			req.Thinking = tt.thinking
			req.Temperature = &temp
			if _, err := b.Generate(context.Background(), req, nil); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			body := decodeOpenAI(t, fake, 0)
			if body.ReasoningEffort != tt.wantEffort {
				t.Errorf("reasoning_effort = %q, want %q", body.ReasoningEffort, tt.wantEffort)
			}
			if (body.Temperature != nil) != tt.wantTemp {
				t.Errorf("temperature sent = %v, want sent: %v", body.Temperature != nil, tt.wantTemp)
			}
		})
	}
}

func TestOpenAIUsage(t *testing.T) {
	b, fake, _ := newBackend(t, openaiCase)
	fake.Push(modeltest.Reply{Text: "hello", Usage: &modeltest.Usage{InputTokens: 2000, OutputTokens: 300, CacheReadTokens: 1536, ReasoningTokens: 256}})
	resp, err := b.Generate(context.Background(), userText("hi"), nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	// prompt_tokens includes the cached ones; Usage keeps them apart.
	want := Usage{InputTokens: 464, OutputTokens: 300, CachedTokens: 1536, ReasoningTokens: 256}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	if resp.Usage.TotalInputTokens() != 2000 {
		t.Errorf("total input = %d, want 2000 (prompt_tokens)", resp.Usage.TotalInputTokens())
	}
}

func TestOpenAICompatibleServer(t *testing.T) {
	t.Run("no key needed with a base URL", func(t *testing.T) {
		b, fake, _ := newBackend(t, openaiCase, func(o *Options) { o.APIKey = "" })
		fake.Push(modeltest.Reply{Text: "local"})
		if _, err := b.Generate(context.Background(), userText("hi"), nil); err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if auth := fake.Requests()[0].Header.Get("Authorization"); auth != "" {
			t.Errorf("Authorization = %q, want none without a key", auth)
		}
	})
	t.Run("missing ids and stop after tool calls", func(t *testing.T) {
		b, fake, _ := newBackend(t, openaiCase)
		// Some servers report "stop" after tool calls.
		fake.Push(modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "lookup", Input: `{"q":1}`}}, StopReason: "stop"})
		resp, err := b.Generate(context.Background(), userText("hi"), nil)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if resp.StopReason != StopToolUse || len(resp.ToolCalls()) != 1 {
			t.Errorf("stop %q with %d calls, want tool_use with 1", resp.StopReason, len(resp.ToolCalls()))
		}
	})
	t.Run("broken arguments reach the engine as a string", func(t *testing.T) {
		b, fake, _ := newBackend(t, openaiCase)
		fake.Push(modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "c", Name: "lookup", Input: `{"q": tru`}}})
		resp, err := b.Generate(context.Background(), userText("hi"), nil)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		calls := resp.ToolCalls()
		var s string
		if len(calls) != 1 || json.Unmarshal(calls[0].Input, &s) != nil || s != `{"q": tru` {
			t.Errorf("calls = %+v, want the broken arguments as a JSON string", calls)
		}
	})
}

func TestOpenAIRefusalAndLength(t *testing.T) {
	tests := []struct {
		finish, want string
	}{
		{"length", StopMaxTokens},
		{"content_filter", StopRefusal},
		{"stop", StopEndTurn},
	}
	for _, tt := range tests {
		t.Run(tt.finish, func(t *testing.T) {
			b, fake, _ := newBackend(t, openaiCase)
			fake.Push(modeltest.Reply{Text: "cut", StopReason: tt.finish})
			resp, err := b.Generate(context.Background(), userText("hi"), nil)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.StopReason != tt.want {
				t.Errorf("stop reason for %q = %q, want %q", tt.finish, resp.StopReason, tt.want)
			}
		})
	}
}

func TestOpenAIStreamErrorEvent(t *testing.T) {
	b, fake, _ := newBackend(t, openaiCase)
	fake.Push(modeltest.Reply{Text: "half of it", StreamError: "server_error"}, modeltest.Reply{Text: "all of it"})
	var ev events
	resp, err := b.Generate(context.Background(), userText("hi"), ev.emit)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Text() != "all of it" || ev.count(EventRestart) != 1 || len(fake.Requests()) != 2 {
		t.Errorf("text %q, %d restarts, %d requests; want \"all of it\", 1, 2", resp.Text(), ev.count(EventRestart), len(fake.Requests()))
	}
}
