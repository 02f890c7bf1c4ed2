package model

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// Thinking budgets in tokens for the Anthropic extended-thinking levels.
// The API's minimum is 1024.
var anthropicThinkingBudget = map[string]int64{
	ThinkingLow:    2048,
	ThinkingMedium: 8192,
	ThinkingHigh:   24576,
}

// anthropicBackend talks to the Anthropic Messages API through the official
// SDK, streaming.
type anthropicBackend struct {
	client anthropic.Client
	model  string
	call   caller
}

func newAnthropic(modelName string, o Options) (*anthropicBackend, error) {
	if o.APIKey == "" {
		return nil, errors.New("creating anthropic backend: no API key; set ANTHROPIC_API_KEY")
	}
	opts := []option.RequestOption{
		// The key and URL come from Options only, never from the SDK's own
		// reading of the environment or profile files, so what New was
		// given is what is used.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(o.APIKey),
		option.WithHTTPClient(idleClient(o.HTTPClient, o.IdleTimeout)),
		// Our retry loop is the only one; the SDK's would multiply it.
		option.WithMaxRetries(0),
	}
	if o.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.BaseURL))
	}
	b := &anthropicBackend{client: anthropic.NewClient(opts...), model: modelName}
	now := o.Now
	b.call = newCaller(ProviderAnthropic, o, func(ctx context.Context, err error) *Error {
		return classifyAnthropic(ctx, err, now())
	})
	return b, nil
}

func (b *anthropicBackend) Provider() string { return ProviderAnthropic }

func (b *anthropicBackend) Generate(ctx context.Context, req *Request, emit func(Event)) (*Response, error) {
	params, err := b.params(req)
	if err != nil {
		return nil, newError(ProviderAnthropic, 0, false, "", fmt.Errorf("building request: %w", err))
	}
	return b.call.do(ctx, emit, func(ctx context.Context, emit func(Event)) (*Response, error) {
		return b.stream(ctx, params, emit)
	})
}

// params translates a Request into the SDK's parameters.
func (b *anthropicBackend) params(req *Request) (anthropic.MessageNewParams, error) {
	modelName := b.model
	if req.Model != "" {
		modelName = req.Model
	}
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(modelName),
		MaxTokens: maxTokens,
	}

	for _, s := range req.System {
		if strings.TrimSpace(s.Text) == "" {
			continue // the API rejects empty text blocks
		}
		block := anthropic.TextBlockParam{Text: s.Text}
		if s.Cache {
			block.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.System = append(p.System, block)
	}

	for i, t := range req.Tools {
		schema, err := anthropicSchema(t.InputSchema)
		if err != nil {
			return p, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		tool := &anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		// Tools come before the system prompt in the cached prefix; a
		// breakpoint on the last one keeps them cached even when the
		// system block changes.
		if i == len(req.Tools)-1 {
			tool.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tool})
	}

	for _, m := range req.Messages {
		blocks := anthropicBlocks(m)
		if len(blocks) == 0 {
			continue // an empty message is an API error; there is nothing to say
		}
		switch m.Role {
		case RoleUser:
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		case RoleAssistant:
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		default:
			return p, fmt.Errorf("message role %q: want %q or %q", m.Role, RoleUser, RoleAssistant)
		}
	}
	// The second breakpoint ends the history: the next step of this turn
	// and the next turn send the same blocks up to here and read them from
	// the cache. The per-turn block comes after it, in the last user
	// message (or a new one), where it changes nothing before it.
	if n := len(p.Messages); n > 0 {
		last := p.Messages[n-1].Content
		if cc := last[len(last)-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
		}
	}
	if strings.TrimSpace(req.Turn) != "" {
		turn := anthropic.NewTextBlock(req.Turn)
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == anthropic.MessageParamRoleUser {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, turn)
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(turn))
		}
	}

	if budget, ok := anthropicThinkingBudget[req.Thinking]; ok {
		p.Thinking = anthropic.ThinkingConfigParamOfEnabled(budget)
		// The budget is part of max_tokens; leave room for the answer.
		if p.MaxTokens <= budget {
			p.MaxTokens = budget + DefaultMaxTokens
		}
		// Extended thinking only accepts the default temperature.
	} else if req.Temperature != nil {
		p.Temperature = anthropic.Float(*req.Temperature)
	}
	return p, nil
}

// anthropicBlocks converts a message's parts. Tool results lead a user
// message, as the API requires; other parts keep their order.
func anthropicBlocks(m Message) []anthropic.ContentBlockParamUnion {
	var results, rest []anthropic.ContentBlockParamUnion
	for _, part := range m.Parts {
		switch part.Kind {
		case PartText:
			if strings.TrimSpace(part.Text) != "" {
				rest = append(rest, anthropic.NewTextBlock(part.Text))
			}
		case PartImage:
			rest = append(rest, anthropic.NewImageBlockBase64(part.MimeType, base64.StdEncoding.EncodeToString(part.Data)))
		case PartDocument:
			doc := anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: base64.StdEncoding.EncodeToString(part.Data)})
			if part.Name != "" {
				doc.OfDocument.Title = anthropic.String(part.Name)
			}
			rest = append(rest, doc)
		case PartToolCall:
			rest = append(rest, anthropic.NewToolUseBlock(part.CallID, toolInputObject(part.Input), part.ToolName))
		case PartToolResult:
			block := anthropic.ToolResultBlockParam{ToolUseID: part.CallID}
			if part.Output != "" {
				block.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: part.Output}}}
			}
			if part.IsError {
				block.IsError = anthropic.Bool(true)
			}
			results = append(results, anthropic.ContentBlockParamUnion{OfToolResult: &block})
		case PartThinking:
			if m.Role != RoleAssistant {
				continue
			}
			if part.Redacted {
				rest = append(rest, anthropic.NewRedactedThinkingBlock(part.Text))
			} else if part.Signature != "" {
				// Thinking without a signature (from another provider) is
				// rejected by the API, so it stays out.
				rest = append(rest, anthropic.NewThinkingBlock(part.Signature, part.Text))
			}
		}
	}
	return append(results, rest...)
}

// toolInputObject returns a tool call's arguments as a JSON object for the
// API, which accepts nothing else. Arguments that were not an object when
// the model wrote them (see Part.Input) go back as an empty object.
func toolInputObject(in json.RawMessage) json.RawMessage {
	trimmed := strings.TrimSpace(string(in))
	if !strings.HasPrefix(trimmed, "{") || !json.Valid([]byte(trimmed)) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(trimmed)
}

// anthropicSchema splits a JSON Schema object into the SDK's input schema:
// properties and required have fields, everything else rides along.
func anthropicSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(strings.TrimSpace(string(raw))) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return s, fmt.Errorf("input schema type is %v, want \"object\"", t)
	}
	delete(m, "type")
	if props, ok := m["properties"]; ok {
		s.Properties = props
		delete(m, "properties")
	} else {
		s.Properties = map[string]any{}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
		delete(m, "required")
	}
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s, nil
}

// anthropicBlock tracks one content block while it streams.
type anthropicBlock struct {
	kind string // "text", "tool_use", "thinking", "redacted_thinking", or "" (ignored)
	part int    // index in parts
	args strings.Builder
	// startInput is a tool_use's input given whole at content_block_start,
	// used when no input_json_delta follows.
	startInput json.RawMessage
}

// stream makes one streaming call and assembles the response.
func (b *anthropicBackend) stream(ctx context.Context, params anthropic.MessageNewParams, emit func(Event)) (*Response, error) {
	stream := b.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		parts   []Part
		blocks  = map[int64]*anthropicBlock{}
		usage   Usage
		stop    string
		model   = string(params.Model)
		stopped bool
	)
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			if ev.Message.Model != "" {
				model = string(ev.Message.Model)
			}
			u := ev.Message.Usage
			usage.InputTokens = u.InputTokens
			usage.CachedTokens = u.CacheReadInputTokens
			usage.CacheWriteTokens = u.CacheCreationInputTokens
			usage.OutputTokens = u.OutputTokens

		case "content_block_start":
			cb := ev.ContentBlock
			blk := &anthropicBlock{kind: cb.Type, part: len(parts)}
			switch cb.Type {
			case "text":
				parts = append(parts, Part{Kind: PartText, Text: cb.Text})
				if cb.Text != "" {
					emit(Event{Kind: EventTextDelta, Text: cb.Text})
				}
			case "tool_use":
				parts = append(parts, Part{Kind: PartToolCall, CallID: cb.ID, ToolName: cb.Name})
				if raw := cb.JSON.Input.Raw(); raw != "" && raw != "null" {
					blk.startInput = json.RawMessage(raw)
				}
				emit(Event{Kind: EventToolCallStart, CallID: cb.ID, ToolName: cb.Name})
			case "thinking":
				parts = append(parts, Part{Kind: PartThinking, Text: cb.Thinking, Signature: cb.Signature})
			case "redacted_thinking":
				parts = append(parts, Part{Kind: PartThinking, Text: cb.Data, Redacted: true})
			default:
				// Server tools and other block kinds are not part of this
				// interface; their content is not kept.
				blk.kind = ""
			}
			blocks[ev.Index] = blk

		case "content_block_delta":
			blk, ok := blocks[ev.Index]
			if !ok {
				return nil, newError(ProviderAnthropic, 0, false, "",
					fmt.Errorf("malformed stream: delta for content block %d that never started", ev.Index))
			}
			if blk.kind == "" {
				continue
			}
			d := ev.Delta
			switch d.Type {
			case "text_delta":
				parts[blk.part].Text += d.Text
				emit(Event{Kind: EventTextDelta, Text: d.Text})
			case "input_json_delta":
				blk.args.WriteString(d.PartialJSON)
				p := parts[blk.part]
				if d.PartialJSON != "" {
					emit(Event{Kind: EventToolCallDelta, CallID: p.CallID, ToolName: p.ToolName, ArgsDelta: d.PartialJSON})
				}
			case "thinking_delta":
				parts[blk.part].Text += d.Thinking
				emit(Event{Kind: EventThinkingDelta, Text: d.Thinking})
			case "signature_delta":
				parts[blk.part].Signature += d.Signature
			}

		case "content_block_stop":
			blk, ok := blocks[ev.Index]
			if !ok || blk.kind != "tool_use" {
				continue
			}
			p := &parts[blk.part]
			if blk.args.Len() > 0 {
				p.Input = finishArgs(blk.args.String())
			} else if blk.startInput != nil {
				p.Input = finishArgs(string(blk.startInput))
			} else {
				p.Input = json.RawMessage("{}")
			}
			emit(Event{Kind: EventToolCallEnd, CallID: p.CallID, ToolName: p.ToolName, Input: p.Input})

		case "message_delta":
			stop = string(ev.Delta.StopReason)
			u := ev.Usage
			// Output tokens in message_delta are cumulative; input counts
			// are repeated there by newer API versions.
			usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 {
				usage.InputTokens = u.InputTokens
			}
			if u.CacheReadInputTokens > 0 {
				usage.CachedTokens = u.CacheReadInputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				usage.CacheWriteTokens = u.CacheCreationInputTokens
			}
			if t := u.OutputTokensDetails.ThinkingTokens; t > 0 {
				usage.ReasoningTokens = t
			}

		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if !stopped {
		return nil, ErrStreamIncomplete
	}

	resp := &Response{Parts: dropEmptyText(parts), StopReason: normaliseAnthropicStop(stop), Usage: usage, Model: model}
	emit(Event{Kind: EventUsage, Usage: &resp.Usage})
	emit(Event{Kind: EventStop, StopReason: resp.StopReason})
	return resp, nil
}

func normaliseAnthropicStop(s string) string {
	switch s {
	case "":
		return StopEndTurn
	default:
		// The API's reasons are the normalised vocabulary.
		return s
	}
}

// classifyAnthropic turns an SDK or transport error into an *Error.
func classifyAnthropic(ctx context.Context, err error, now time.Time) *Error {
	if e := classifyTransport(ctx, ProviderAnthropic, err); e != nil {
		return e
	}
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		// Malformed JSON in the stream and anything else unexpected: a
		// retry would read the same bytes.
		return newError(ProviderAnthropic, 0, false, "", err)
	}
	status := apiErr.StatusCode
	typ := string(apiErr.Type())
	if status < 400 {
		// An error event inside a 200 stream: the type says what happened.
		status = anthropicStreamErrorStatus(typ)
	}
	msg := anthropicErrorMessage(apiErr.RawJSON())
	e := newError(ProviderAnthropic, status, retryableStatus(status), statusMessage(status, typ, msg), err)
	e.Type = typ
	if apiErr.Response != nil {
		e.RetryAfter = parseRetryAfter(apiErr.Response.Header, now)
	}
	return e
}

// anthropicStreamErrorStatus maps the error type of an in-stream error event
// to the HTTP status the same error has as a response.
func anthropicStreamErrorStatus(typ string) int {
	switch typ {
	case "overloaded_error":
		return 529
	case "rate_limit_error":
		return 429
	case "api_error":
		return 500
	case "timeout_error":
		return 504
	case "invalid_request_error":
		return 400
	case "authentication_error":
		return 401
	case "permission_error":
		return 403
	case "not_found_error":
		return 404
	case "request_too_large":
		return 413
	default:
		return 0
	}
}

// anthropicErrorMessage extracts error.message from an error body, or
// returns the body when it is not the documented shape.
func anthropicErrorMessage(raw string) string {
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil && body.Error.Message != "" {
		return body.Error.Message
	}
	return truncate(strings.TrimSpace(raw), 500)
}
