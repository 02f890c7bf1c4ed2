package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// These tests hold the fakes to the wire formats by reading them with the
// SDKs' own accumulators, independent of core/model.

func anthropicClient(f *Fake) anthropic.Client {
	return anthropic.NewClient(
		aoption.WithoutEnvironmentDefaults(),
		aoption.WithAPIKey("k"),
		aoption.WithBaseURL(f.URL),
		aoption.WithMaxRetries(0),
	)
}

func openaiClient(f *Fake) openai.Client {
	return openai.NewClient(ooption.WithBaseURL(f.URL), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
}

func anthropicParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
}

func openaiParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:         "gpt-4.1-mini",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

func TestAnthropicWireFormat(t *testing.T) {
	f := NewAnthropic(t)
	f.Push(Reply{
		Thinking:  "hmm",
		Text:      "Checking the weather now.",
		ToolCalls: []ToolCall{{ID: "toolu_1", Name: "get_weather", Input: `{"city":"Paris","days":[1,2]}`}, {Name: "noop"}},
		Usage:     &Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 40},
	})
	c := anthropicClient(f)
	stream := c.Messages.NewStreaming(context.Background(), anthropicParams())
	defer stream.Close()
	var msg anthropic.Message
	events := 0
	for stream.Next() {
		events++
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatalf("Accumulate: %v", err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(msg.Content) != 4 {
		t.Fatalf("content = %d blocks, want thinking, text, 2 tool_use", len(msg.Content))
	}
	if th := msg.Content[0]; th.Type != "thinking" || th.Thinking != "hmm" || th.Signature == "" {
		t.Errorf("block 0 = %+v, want signed thinking \"hmm\"", th)
	}
	if msg.Content[1].Text != "Checking the weather now." {
		t.Errorf("text = %q", msg.Content[1].Text)
	}
	tu := msg.Content[2]
	if tu.Type != "tool_use" || tu.ID != "toolu_1" || tu.Name != "get_weather" || string(tu.Input) != `{"city":"Paris","days":[1,2]}` {
		t.Errorf("tool_use = %s %s %s %s", tu.Type, tu.ID, tu.Name, tu.Input)
	}
	if gen := msg.Content[3]; !strings.HasPrefix(gen.ID, "toolu_fake_") || gen.Name != "noop" {
		t.Errorf("second tool_use = %+v, want a generated id and name noop", gen)
	}
	if msg.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("stop reason = %q, want tool_use", msg.StopReason)
	}
	u := msg.Usage
	if u.InputTokens != 10 || u.OutputTokens != 20 || u.CacheReadInputTokens != 30 || u.CacheCreationInputTokens != 40 {
		t.Errorf("usage = %+v", u)
	}
	if events < 10 {
		t.Errorf("got %d events, want the reply streamed in many", events)
	}
}

func TestOpenAIWireFormat(t *testing.T) {
	f := NewOpenAI(t)
	f.Push(Reply{
		Text:      "Two calls coming.",
		ToolCalls: []ToolCall{{ID: "call_a", Name: "a", Input: `{"x":1}`}, {ID: "call_b", Name: "b", Input: `{"y":"long enough to be split"}`}},
		Usage:     &Usage{InputTokens: 100, OutputTokens: 7, CacheReadTokens: 64, ReasoningTokens: 3},
	})
	c := openaiClient(f)
	stream := c.Chat.Completions.NewStreaming(context.Background(), openaiParams())
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("accumulator refused a chunk: %s", stream.Current().RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("choices = %d, want 1", len(acc.Choices))
	}
	ch := acc.Choices[0]
	if ch.Message.Content != "Two calls coming." || ch.FinishReason != "tool_calls" {
		t.Errorf("content %q finish %q", ch.Message.Content, ch.FinishReason)
	}
	if len(ch.Message.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v, want 2", ch.Message.ToolCalls)
	}
	if tc := ch.Message.ToolCalls[1]; tc.ID != "call_b" || tc.Function.Name != "b" || tc.Function.Arguments != `{"y":"long enough to be split"}` {
		t.Errorf("second call = %+v", tc)
	}
	if acc.Usage.PromptTokens != 100 || acc.Usage.CompletionTokens != 7 || acc.Usage.PromptTokensDetails.CachedTokens != 64 || acc.Usage.CompletionTokensDetails.ReasoningTokens != 3 {
		t.Errorf("usage = %+v", acc.Usage)
	}
	if got := f.Requests(); len(got) != 1 || got[0].Path != "/v1/chat/completions" {
		t.Errorf("requests = %+v, want one POST /v1/chat/completions", got)
	}
}

func TestErrorReplies(t *testing.T) {
	t.Run("anthropic", func(t *testing.T) {
		f := NewAnthropic(t)
		f.Push(Reply{Status: 429, RetryAfter: "3", ErrorMessage: "slow down"})
		c := anthropicClient(f)
		stream := c.Messages.NewStreaming(context.Background(), anthropicParams())
		for stream.Next() {
		}
		var e *anthropic.Error
		if !errors.As(stream.Err(), &e) || e.StatusCode != 429 || e.Type() != "rate_limit_error" || e.Response.Header.Get("Retry-After") != "3" {
			t.Fatalf("error = %v, want a 429 rate_limit_error with Retry-After 3", stream.Err())
		}
		if !strings.Contains(e.RawJSON(), "slow down") {
			t.Errorf("error body %s lacks the message", e.RawJSON())
		}
	})
	t.Run("openai", func(t *testing.T) {
		f := NewOpenAI(t)
		f.Push(Reply{Status: 500, ErrorMessage: "boom"})
		c := openaiClient(f)
		stream := c.Chat.Completions.NewStreaming(context.Background(), openaiParams())
		for stream.Next() {
		}
		var e *openai.Error
		if !errors.As(stream.Err(), &e) || e.StatusCode != 500 || e.Type != "server_error" || e.Message != "boom" {
			t.Fatalf("error = %v, want a 500 server_error \"boom\"", stream.Err())
		}
	})
}

func TestCutAfterDropsTheConnection(t *testing.T) {
	f := NewOpenAI(t)
	f.Push(Reply{Text: "one two three four five", CutAfter: 3})
	c := openaiClient(f)
	stream := c.Chat.Completions.NewStreaming(context.Background(), openaiParams())
	n := 0
	for stream.Next() {
		n++
	}
	if !errors.Is(stream.Err(), io.ErrUnexpectedEOF) || n != 3 {
		t.Fatalf("read %d chunks then %v, want 3 then unexpected EOF", n, stream.Err())
	}
}

func TestBlockHoldsTheStream(t *testing.T) {
	f := NewAnthropic(t)
	release := make(chan struct{})
	f.Push(Reply{Text: "held reply", Block: release})
	c := anthropicClient(f)
	stream := c.Messages.NewStreaming(context.Background(), anthropicParams())
	defer stream.Close()
	if !stream.Next() || stream.Current().Type != "message_start" {
		t.Fatalf("first event = %v (%v), want message_start", stream.Current().Type, stream.Err())
	}
	close(release)
	var msg anthropic.Message
	_ = msg.Accumulate(stream.Current())
	for stream.Next() {
		_ = msg.Accumulate(stream.Current())
	}
	if stream.Err() != nil || len(msg.Content) != 1 || msg.Content[0].Text != "held reply" {
		t.Fatalf("after release: %v, content %+v", stream.Err(), msg.Content)
	}
}

func TestDelaySlowsTheStream(t *testing.T) {
	f := NewAnthropic(t)
	f.Push(Reply{Text: "one two three four", Delay: 20 * time.Millisecond})
	c := anthropicClient(f)
	start := time.Now()
	stream := c.Messages.NewStreaming(context.Background(), anthropicParams())
	defer stream.Close()
	var msg anthropic.Message
	events := 0
	for stream.Next() {
		events++
		_ = msg.Accumulate(stream.Current())
	}
	if stream.Err() != nil || len(msg.Content) != 1 || msg.Content[0].Text != "one two three four" {
		t.Fatalf("delayed reply: %v, content %+v", stream.Err(), msg.Content)
	}
	if least := time.Duration(events-1) * 20 * time.Millisecond; time.Since(start) < least {
		t.Errorf("%d events streamed in %s, want at least %s with a 20ms delay", events, time.Since(start), least)
	}
}

func TestDefaultAnswersAnEmptyQueue(t *testing.T) {
	f := NewOpenAI(t)
	f.Push(Reply{Text: "queued"})
	f.Default(Reply{Text: "default"})
	c := openaiClient(f)
	var got []string
	for range 3 {
		stream := c.Chat.Completions.NewStreaming(context.Background(), openaiParams())
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("streaming: %v", err)
		}
		got = append(got, acc.Choices[0].Message.Content)
	}
	if want := []string{"queued", "default", "default"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replies = %q, want %q", got, want)
	}
}

func TestOnStreamEndSignalsTheLastEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		fake func(testing.TB) *Fake
		read func(*Fake) error // streams one reply to its end
	}{
		{"anthropic", NewAnthropic, func(f *Fake) error {
			c := anthropicClient(f)
			stream := c.Messages.NewStreaming(context.Background(), anthropicParams())
			defer stream.Close()
			for stream.Next() {
			}
			return stream.Err()
		}},
		{"openai", NewOpenAI, func(f *Fake) error {
			c := openaiClient(f)
			stream := c.Chat.Completions.NewStreaming(context.Background(), openaiParams())
			defer stream.Close()
			for stream.Next() {
			}
			return stream.Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fake(t)
			ended := make(chan struct{}, 4)
			f.OnStreamEnd(func() { ended <- struct{}{} })
			// A reply cut short never reaches its last event; the whole one
			// after it does.
			f.Push(Reply{Text: "one two three four five", CutAfter: 3}, Reply{Text: "one two three"})
			if err := tc.read(f); err == nil {
				t.Fatalf("the cut reply streamed without an error; want the connection dropped")
			}
			if err := tc.read(f); err != nil {
				t.Fatalf("streaming the whole reply: %v", err)
			}
			select {
			case <-ended:
			case <-time.After(5 * time.Second):
				t.Fatalf("OnStreamEnd was not called within 5s of a whole reply")
			}
			select {
			case <-ended:
				t.Fatalf("OnStreamEnd was called twice; want once, for the whole reply only")
			default:
			}
		})
	}
}

// recordingTB captures the fake's test failures instead of failing.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestNoReplyQueuedFailsTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	f := NewAnthropic(rec)
	c := anthropicClient(f)
	stream := c.Messages.NewStreaming(context.Background(), anthropicParams())
	for stream.Next() {
	}
	var e *anthropic.Error
	if !errors.As(stream.Err(), &e) || e.StatusCode != 500 {
		t.Errorf("error = %v, want a 500", stream.Err())
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "no reply queued") {
		t.Errorf("test failures = %q, want one about no reply queued", rec.errs)
	}
}

// TestRequestChecks sends raw requests the real APIs refuse.
func TestRequestChecks(t *testing.T) {
	tests := []struct {
		name     string
		fake     func(testing.TB) *Fake
		path     string
		header   map[string]string
		body     string
		status   int
		contains string
	}{
		{
			name: "anthropic without key", fake: NewAnthropic, path: "/v1/messages",
			header: map[string]string{"anthropic-version": "2023-06-01"},
			body:   `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			status: 401, contains: "x-api-key",
		},
		{
			name: "anthropic tool_use without result", fake: NewAnthropic, path: "/v1/messages",
			body: `{"model":"m","max_tokens":5,"stream":true,"messages":[
				{"role":"user","content":"hi"},
				{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{}}]},
				{"role":"user","content":[{"type":"text","text":"forgot"}]}]}`,
			status: 400, contains: "without `tool_result` blocks",
		},
		{
			name: "anthropic result for an unknown call", fake: NewAnthropic, path: "/v1/messages",
			body: `{"model":"m","max_tokens":5,"stream":true,"messages":[
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"ghost","content":"x"}]}]}`,
			status: 400, contains: "unexpected `tool_use_id`",
		},
		{
			name: "anthropic empty text block", fake: NewAnthropic, path: "/v1/messages",
			body:   `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]}`,
			status: 400, contains: "non-whitespace",
		},
		{
			name: "anthropic five cache breakpoints", fake: NewAnthropic, path: "/v1/messages",
			body: `{"model":"m","max_tokens":5,"stream":true,
				"system":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}},{"type":"text","text":"c","cache_control":{"type":"ephemeral"}}],
				"messages":[{"role":"user","content":[{"type":"text","text":"d","cache_control":{"type":"ephemeral"}},{"type":"text","text":"e","cache_control":{"type":"ephemeral"}}]}]}`,
			status: 400, contains: "maximum of 4 blocks with cache_control",
		},
		{
			name: "anthropic thinking budget above max_tokens", fake: NewAnthropic, path: "/v1/messages",
			body:   `{"model":"m","max_tokens":2000,"stream":true,"thinking":{"type":"enabled","budget_tokens":4000},"messages":[{"role":"user","content":"hi"}]}`,
			status: 400, contains: "budget_tokens",
		},
		{
			name: "openai tool message without a call", fake: NewOpenAI, path: "/v1/chat/completions",
			body:   `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"x","content":"r"}]}`,
			status: 400, contains: "must be a response to a preceeding message with 'tool_calls'",
		},
		{
			name: "openai unanswered call", fake: NewOpenAI, path: "/v1/chat/completions",
			body: `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},
				{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"user","content":"next"}]}`,
			status: 400, contains: "did not have response messages: c1",
		},
		{
			name: "openai bad tool name", fake: NewOpenAI, path: "/v1/chat/completions",
			body:   `{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"has space"}}],"messages":[{"role":"user","content":"hi"}]}`,
			status: 400, contains: "tools[0].function.name",
		},
		{
			name: "openai wrong path", fake: NewOpenAI, path: "/v1/completions",
			body:   `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			status: 404, contains: "Invalid URL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fake(t)
			base := strings.TrimSuffix(f.URL, "/v1")
			req, err := http.NewRequest(http.MethodPost, base+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("x-api-key", "k")
			req.Header.Set("anthropic-version", "2023-06-01")
			if tt.header != nil {
				req.Header.Del("x-api-key")
				for k, v := range tt.header {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.contains) {
				t.Errorf("got %d %s, want %d containing %q", resp.StatusCode, body, tt.status, tt.contains)
			}
			if !json.Valid(body) {
				t.Errorf("error body is not JSON: %s", body)
			}
			if f.Pending() != 0 || len(f.Requests()) != 1 {
				t.Errorf("pending %d, requests %d; want 0 and 1 (a refused request takes no reply)", f.Pending(), len(f.Requests()))
			}
		})
	}
}

func TestStallGoesSilentUntilTheClientLeaves(t *testing.T) {
	f := NewOpenAI(t)
	f.Push(Reply{Text: "one two three", Stall: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := openaiClient(f)
	stream := c.Chat.Completions.NewStreaming(ctx, openaiParams())
	defer stream.Close()
	var text strings.Builder
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			text.WriteString(ch.Delta.Content)
		}
		if text.Len() > 0 {
			// The first content chunk is all there will be: the next
			// read waits until the client gives up.
			cancel()
		}
	}
	if text.String() != "one " || !errors.Is(stream.Err(), context.Canceled) {
		t.Fatalf("read %q then %v, want \"one \" then the client's cancel", text.String(), stream.Err())
	}
}
