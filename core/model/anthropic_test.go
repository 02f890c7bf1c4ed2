package model

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

var anthropicCase = httpProviders[0]

// anthropicBody is the part of a Messages request the tests look at.
type anthropicBody struct {
	Model     string   `json:"model"`
	MaxTokens int      `json:"max_tokens"`
	Stream    bool     `json:"stream"`
	Temp      *float64 `json:"temperature"`
	System    []struct {
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"system"`
	Tools []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  map[string]any  `json:"input_schema"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"tools"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			// CacheControl is raw so a test sees whether it was sent.
			CacheControl json.RawMessage `json:"cache_control"`
			Content      []struct {
				Text string `json:"text"`
			} `json:"content"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		} `json:"content"`
	} `json:"messages"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

func decodeAnthropic(t *testing.T, fake *modeltest.Fake, i int) anthropicBody {
	t.Helper()
	reqs := fake.Requests()
	if len(reqs) <= i {
		t.Fatalf("got %d requests, want at least %d", len(reqs), i+1)
	}
	var b anthropicBody
	if err := reqs[i].Decode(&b); err != nil {
		t.Fatalf("decoding request %d: %v", i, err)
	}
	return b
}

func TestAnthropicRequestShape(t *testing.T) {
	b, fake, _ := newBackend(t, anthropicCase)
	fake.Push(modeltest.Reply{Text: "Done."})
	temp := 0.3
	req := &Request{
		System: []SystemBlock{
			{Text: "You are Switchboard's helper. Rules: be brief.", Cache: true},
		},
		Turn: "Now: Ana asks in #general.",
		Tools: []Tool{
			{Name: "get_weather", Description: "Weather for a city", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)},
			{Name: "ask_user", Description: "Ask the user", InputSchema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}}}`)},
		},
		Messages: []Message{
			{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "Weather in Paris?"}}},
			{Role: RoleAssistant, Parts: []Part{
				{Kind: PartText, Text: "Checking."},
				{Kind: PartToolCall, CallID: "toolu_1", ToolName: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
				{Kind: PartToolCall, CallID: "toolu_2", ToolName: "get_weather", Input: json.RawMessage(`"{\"city\":"`)},
			}},
			{Role: RoleUser, Parts: []Part{
				{Kind: PartText, Text: "(also, hurry)"},
				{Kind: PartToolResult, CallID: "toolu_1", Output: `{"temp_c":18}`},
				{Kind: PartToolResult, CallID: "toolu_2", Output: "invalid arguments", IsError: true},
			}},
		},
		MaxTokens:   1000,
		Temperature: &temp,
	}
	if _, err := b.Generate(context.Background(), req, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	body := decodeAnthropic(t, fake, 0)

	if !body.Stream || body.Model != "claude-sonnet-4-5" || body.MaxTokens != 1000 {
		t.Errorf("stream=%v model=%q max_tokens=%d, want true, claude-sonnet-4-5, 1000", body.Stream, body.Model, body.MaxTokens)
	}
	if body.Temp == nil || *body.Temp != 0.3 {
		t.Errorf("temperature = %v, want 0.3", body.Temp)
	}
	if len(body.System) != 1 {
		t.Fatalf("system blocks = %d, want 1 (the stable block; the per-turn block goes after the history)", len(body.System))
	}
	if !jsonEqual(t, string(body.System[0].CacheControl), `{"type":"ephemeral"}`) {
		t.Errorf("stable system block cache_control = %s, want {\"type\":\"ephemeral\"}", body.System[0].CacheControl)
	}
	if len(body.Tools) != 2 {
		t.Fatalf("tools = %d, want 2", len(body.Tools))
	}
	if len(body.Tools[0].CacheControl) != 0 || !jsonEqual(t, string(body.Tools[1].CacheControl), `{"type":"ephemeral"}`) {
		t.Errorf("tool cache_control = %s / %s, want only the last tool marked", body.Tools[0].CacheControl, body.Tools[1].CacheControl)
	}
	schema, _ := json.Marshal(body.Tools[0].InputSchema)
	if !jsonEqual(t, string(schema), `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`) {
		t.Errorf("tool schema = %s, want the schema passed through whole", schema)
	}

	if len(body.Messages) != 3 {
		t.Fatalf("messages = %d, want 3", len(body.Messages))
	}
	asst := body.Messages[1].Content
	if len(asst) != 3 || asst[1].Type != "tool_use" || asst[1].ID != "toolu_1" || !jsonEqual(t, string(asst[1].Input), `{"city":"Paris"}`) {
		t.Errorf("assistant content = %+v, want text then tool_use toolu_1 {city: Paris}", asst)
	}
	if len(asst) == 3 && string(asst[2].Input) != "{}" {
		t.Errorf("broken arguments sent back as %s, want {} (the API accepts only objects)", asst[2].Input)
	}
	user := body.Messages[2].Content
	if len(user) != 4 || user[0].Type != "tool_result" || user[1].Type != "tool_result" || user[2].Type != "text" || user[3].Type != "text" {
		t.Fatalf("user content types = %+v, want tool_result, tool_result, text, then the per-turn text (results first)", user)
	}
	if !jsonEqual(t, string(user[2].CacheControl), `{"type":"ephemeral"}`) {
		t.Errorf("last history block cache_control = %s, want the history's breakpoint", user[2].CacheControl)
	}
	if user[3].Text != "Now: Ana asks in #general." || len(user[3].CacheControl) != 0 {
		t.Errorf("last block = %q (cache_control %s), want the per-turn block after the breakpoint", user[3].Text, user[3].CacheControl)
	}
	for i, m := range body.Messages[:2] {
		for j, c := range m.Content {
			if len(c.CacheControl) != 0 {
				t.Errorf("message %d block %d has cache_control %s, want only the end of the history marked", i, j, c.CacheControl)
			}
		}
	}
	if user[0].ToolUseID != "toolu_1" || len(user[0].Content) != 1 || user[0].Content[0].Text != `{"temp_c":18}` || user[0].IsError {
		t.Errorf("first tool result = %+v, want toolu_1 with the output, not an error", user[0])
	}
	if user[1].ToolUseID != "toolu_2" || !user[1].IsError {
		t.Errorf("second tool result = %+v, want toolu_2 marked is_error", user[1])
	}
	if body.Thinking != nil {
		t.Errorf("thinking = %+v, want none when Thinking is unset", body.Thinking)
	}
	if h := fake.Requests()[0].Header; h.Get("X-Api-Key") != "test-key-123" || h.Get("X-Stainless-Retry-Count") != "0" {
		t.Errorf("x-api-key=%q retry-count=%q, want the configured key and 0", h.Get("X-Api-Key"), h.Get("X-Stainless-Retry-Count"))
	}
}

func TestAnthropicThinking(t *testing.T) {
	tests := []struct {
		level      string
		wantBudget int
		wantMax    int
	}{
		{level: ThinkingOff},
		{level: ThinkingLow, wantBudget: 2048, wantMax: 4096},
		{level: ThinkingMedium, wantBudget: 8192, wantMax: 8192 + DefaultMaxTokens},
		{level: ThinkingHigh, wantBudget: 24576, wantMax: 24576 + DefaultMaxTokens},
	}
	for _, tt := range tests {
		t.Run("level "+tt.level, func(t *testing.T) {
			b, fake, _ := newBackend(t, anthropicCase)
			fake.Push(modeltest.Reply{Thinking: "Let me think about this.", Text: "42"})
			temp := 0.2
			req := userText("meaning of life?")
			req.Temperature = &temp
			req.Thinking = tt.level
			resp, err := b.Generate(context.Background(), req, nil)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			body := decodeAnthropic(t, fake, 0)
			if tt.wantBudget == 0 {
				if body.Thinking != nil {
					t.Errorf("thinking = %+v, want none", body.Thinking)
				}
				if body.Temp == nil {
					t.Errorf("temperature dropped without thinking")
				}
			} else {
				if body.Thinking == nil || body.Thinking.Type != "enabled" || body.Thinking.BudgetTokens != tt.wantBudget {
					t.Errorf("thinking = %+v, want enabled with budget %d", body.Thinking, tt.wantBudget)
				}
				if body.MaxTokens != tt.wantMax {
					t.Errorf("max_tokens = %d, want %d", body.MaxTokens, tt.wantMax)
				}
				if body.Temp != nil {
					t.Errorf("temperature = %v sent with thinking, want none", *body.Temp)
				}
			}
			// The thinking block comes back first, signed, to be sent back.
			if len(resp.Parts) != 2 || resp.Parts[0].Kind != PartThinking || resp.Parts[0].Text != "Let me think about this." || resp.Parts[0].Signature == "" {
				t.Errorf("parts = %+v, want a signed thinking part then text", resp.Parts)
			}
		})
	}
}

// TestAnthropicThinkingRoundTrip checks a thinking part from one call is
// sent back, signed, with the tool results of the next.
func TestAnthropicThinkingRoundTrip(t *testing.T) {
	b, fake, _ := newBackend(t, anthropicCase)
	fake.Push(
		modeltest.Reply{Thinking: "I should look it up.", ToolCalls: []modeltest.ToolCall{{ID: "toolu_9", Name: "lookup", Input: `{"q":"x"}`}}},
		modeltest.Reply{Text: "Found it."},
	)
	req := userText("find x")
	req.Thinking = ThinkingLow
	req.Tools = []Tool{{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}}
	first, err := b.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("first Generate: %v", err)
	}
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, Parts: first.Parts},
		Message{Role: RoleUser, Parts: []Part{{Kind: PartToolResult, CallID: "toolu_9", Output: "x is 7"}}},
	)
	if _, err := b.Generate(context.Background(), req, nil); err != nil {
		t.Fatalf("second Generate: %v", err)
	}
	body := decodeAnthropic(t, fake, 1)
	asst := body.Messages[1].Content
	if len(asst) != 2 || asst[0].Type != "thinking" || asst[0].Thinking != "I should look it up." || asst[0].Signature == "" || asst[1].Type != "tool_use" {
		t.Errorf("assistant content sent back = %+v, want the signed thinking block then the tool_use", asst)
	}
}

func TestAnthropicOverloaded(t *testing.T) {
	t.Run("529 is retried", func(t *testing.T) {
		b, fake, sl := newBackend(t, anthropicCase)
		fake.Push(modeltest.Reply{Status: 529, ErrorMessage: "Overloaded"}, modeltest.Reply{Text: "fine"})
		resp, err := b.Generate(context.Background(), userText("hi"), nil)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if resp.Text() != "fine" || len(fake.Requests()) != 2 || len(sl.waits()) != 1 {
			t.Errorf("text %q after %d requests and %d waits, want \"fine\" after 2 and 1", resp.Text(), len(fake.Requests()), len(sl.waits()))
		}
	})
	t.Run("overloaded_error inside the stream restarts", func(t *testing.T) {
		b, fake, _ := newBackend(t, anthropicCase)
		fake.Push(modeltest.Reply{Text: "partial answer", StreamError: "overloaded_error"}, modeltest.Reply{Text: "whole answer"})
		var ev events
		resp, err := b.Generate(context.Background(), userText("hi"), ev.emit)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if resp.Text() != "whole answer" || ev.count(EventRestart) != 1 || ev.textAfterRestart() != "whole answer" {
			t.Errorf("text %q, %d restarts, shown %q; want \"whole answer\", 1, \"whole answer\"", resp.Text(), ev.count(EventRestart), ev.textAfterRestart())
		}
	})
	t.Run("529 three times reports overloaded", func(t *testing.T) {
		b, fake, _ := newBackend(t, anthropicCase)
		fake.Push(modeltest.Reply{Status: 529}, modeltest.Reply{Status: 529}, modeltest.Reply{Status: 529})
		_, err := b.Generate(context.Background(), userText("hi"), nil)
		var e *Error
		if !errors.As(err, &e) || e.Status != 529 || e.Type != "overloaded_error" || !e.Retryable {
			t.Fatalf("error = %v, want a retryable 529 overloaded_error", err)
		}
		if len(fake.Requests()) != 3 {
			t.Errorf("made %d requests, want 3", len(fake.Requests()))
		}
	})
}

func TestAnthropicUsage(t *testing.T) {
	b, fake, _ := newBackend(t, anthropicCase)
	fake.Push(modeltest.Reply{Text: "cached hello", Usage: &modeltest.Usage{InputTokens: 12, OutputTokens: 5, CacheReadTokens: 3000, CacheWriteTokens: 200}})
	var ev events
	resp, err := b.Generate(context.Background(), userText("hi"), ev.emit)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := Usage{InputTokens: 12, OutputTokens: 5, CachedTokens: 3000, CacheWriteTokens: 200}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	var got *Usage
	for _, e := range ev {
		if e.Kind == EventUsage {
			got = e.Usage
		}
	}
	if got == nil || *got != want {
		t.Errorf("usage event = %+v, want %+v", got, want)
	}
}

func TestAnthropicFakeRefusesUnpairedToolUse(t *testing.T) {
	// The fake answers as the API does when a tool_use has no result: the
	// backend must report that 400 and not retry it.
	b, fake, _ := newBackend(t, anthropicCase)
	req := &Request{Messages: []Message{
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "go"}}},
		{Role: RoleAssistant, Parts: []Part{{Kind: PartToolCall, CallID: "toolu_x", ToolName: "t", Input: json.RawMessage(`{}`)}}},
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "no result here"}}},
	}}
	_, err := b.Generate(context.Background(), req, nil)
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 || e.Retryable {
		t.Fatalf("error = %v, want a non-retryable 400", err)
	}
	if len(fake.Requests()) != 1 {
		t.Errorf("made %d requests, want 1", len(fake.Requests()))
	}
}
