package model

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// openaiBackend talks to the OpenAI Chat Completions API, or any server
// that speaks it (Ollama, vLLM, LM Studio), through the official SDK,
// streaming.
type openaiBackend struct {
	client openai.Client
	model  string
	// official is true when the endpoint is OpenAI's own, which wants
	// max_completion_tokens; compatible servers know max_tokens better.
	official bool
	call     caller
}

// openAIBaseURL is OpenAI's own endpoint, the SDK's default.
const openAIBaseURL = "https://api.openai.com/v1/"

func newOpenAI(modelName string, o Options) (*openaiBackend, error) {
	if o.APIKey == "" && o.BaseURL == "" {
		return nil, errors.New("creating openai backend: no API key; set OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server)")
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(idleClient(o.HTTPClient, o.IdleTimeout)),
		// Our retry loop is the only one; the SDK's would multiply it.
		option.WithMaxRetries(0),
		// Always set, even empty, so an OPENAI_API_KEY in the environment
		// does not reach a local server it was not meant for.
		option.WithAPIKey(o.APIKey),
	}
	official := true
	if o.BaseURL != "" {
		if u, err := url.Parse(o.BaseURL); err == nil {
			official = u.Hostname() == "api.openai.com"
		}
	}
	// Always set, so an OPENAI_BASE_URL in the environment (the SDK reads
	// it) cannot point a backend the app configured elsewhere.
	base := o.BaseURL
	if base == "" {
		base = openAIBaseURL
	}
	opts = append(opts, option.WithBaseURL(base))
	b := &openaiBackend{client: openai.NewClient(opts...), model: modelName, official: official}
	now := o.Now
	b.call = newCaller(ProviderOpenAI, o, func(ctx context.Context, err error) *Error {
		return classifyOpenAI(ctx, err, now())
	})
	return b, nil
}

func (b *openaiBackend) Provider() string { return ProviderOpenAI }

func (b *openaiBackend) Generate(ctx context.Context, req *Request, emit func(Event)) (*Response, error) {
	params, err := b.params(req)
	if err != nil {
		return nil, newError(ProviderOpenAI, 0, false, "", fmt.Errorf("building request: %w", err))
	}
	return b.call.do(ctx, emit, func(ctx context.Context, emit func(Event)) (*Response, error) {
		return b.stream(ctx, params, emit)
	})
}

// openaiReasoningModel reports models that take reasoning_effort and reject
// a temperature other than the default.
func openaiReasoningModel(name string) bool {
	name = strings.ToLower(name)
	if strings.Contains(name, "-chat") {
		return false // gpt-5-chat-latest and friends are not reasoning models
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if name == p || strings.HasPrefix(name, p+"-") || strings.HasPrefix(name, p+".") {
			return true
		}
	}
	return false
}

// openaiEffort maps a thinking level to reasoning_effort. "off" is the
// lowest effort the model family accepts: reasoning models cannot skip
// reasoning entirely.
func openaiEffort(modelName, thinking string) shared.ReasoningEffort {
	switch thinking {
	case ThinkingOff:
		if strings.HasPrefix(strings.ToLower(modelName), "gpt-5") {
			return shared.ReasoningEffortMinimal
		}
		return shared.ReasoningEffortLow
	case ThinkingLow:
		return shared.ReasoningEffortLow
	case ThinkingMedium:
		return shared.ReasoningEffortMedium
	case ThinkingHigh:
		return shared.ReasoningEffortHigh
	}
	return ""
}

func (b *openaiBackend) params(req *Request) (openai.ChatCompletionNewParams, error) {
	modelName := b.model
	if req.Model != "" {
		modelName = req.Model
	}
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(modelName),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	if b.official {
		p.MaxCompletionTokens = openai.Int(maxTokens)
	} else {
		p.MaxTokens = openai.Int(maxTokens)
	}
	reasoning := openaiReasoningModel(modelName)
	if reasoning {
		p.ReasoningEffort = openaiEffort(modelName, req.Thinking)
	} else if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}

	// One system message, the stable block: some compatible servers' chat
	// templates accept only one system message, and at the start.
	var system []string
	for _, s := range req.System {
		if strings.TrimSpace(s.Text) != "" {
			system = append(system, s.Text)
		}
	}
	if len(system) > 0 {
		p.Messages = append(p.Messages, openai.SystemMessage(strings.Join(system, "\n\n")))
	}

	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(strings.TrimSpace(string(t.InputSchema))) > 0 {
			params = shared.FunctionParameters{}
			if err := json.Unmarshal(t.InputSchema, &params); err != nil {
				return p, fmt.Errorf("tool %q: input schema is not a JSON object: %w", t.Name, err)
			}
		}
		fn.Parameters = params
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}

	for _, m := range req.Messages {
		msgs, err := openaiMessages(m)
		if err != nil {
			return p, err
		}
		p.Messages = append(p.Messages, msgs...)
	}
	// The per-turn block goes last, in a message of its own, so that the
	// history before it stays the byte-identical prefix OpenAI's automatic
	// prompt caching matches, step after step and turn after turn.
	if strings.TrimSpace(req.Turn) != "" {
		p.Messages = append(p.Messages, openai.UserMessage(req.Turn))
	}
	return p, nil
}

// openaiMessages converts one message. A user message's tool results become
// "tool" messages placed first, since they must directly follow the
// assistant message that made the calls; its text follows as a user message.
func openaiMessages(m Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	var (
		out   []openai.ChatCompletionMessageParamUnion
		texts []string
		calls []openai.ChatCompletionMessageToolCallUnionParam
		// media are a user message's images and files, sent as content
		// parts after its text.
		media []openai.ChatCompletionContentPartUnionParam
	)
	for _, part := range m.Parts {
		switch part.Kind {
		case PartText:
			if part.Text != "" {
				texts = append(texts, part.Text)
			}
		case PartToolResult:
			content := part.Output
			if part.IsError && !strings.HasPrefix(strings.ToLower(content), "error") {
				// Chat Completions has no error flag on tool messages.
				content = "Error: " + content
			}
			out = append(out, openai.ToolMessage(content, part.CallID))
		case PartToolCall:
			calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: part.CallID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      part.ToolName,
						Arguments: string(toolInputObject(part.Input)),
					},
				},
			})
		case PartThinking:
			// Another provider's reasoning cannot be sent back here.
		case PartImage:
			media = append(media, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
				URL: "data:" + part.MimeType + ";base64," + base64.StdEncoding.EncodeToString(part.Data),
			}))
		case PartDocument:
			media = append(media, openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
				FileData: openai.String("data:" + part.MimeType + ";base64," + base64.StdEncoding.EncodeToString(part.Data)),
				Filename: openai.String(part.Name),
			}))
		}
	}
	text := strings.Join(texts, "\n\n")
	switch m.Role {
	case RoleUser:
		if len(media) > 0 {
			var content []openai.ChatCompletionContentPartUnionParam
			if text != "" {
				content = append(content, openai.TextContentPart(text))
			}
			out = append(out, openai.UserMessage(append(content, media...)))
		} else if text != "" {
			out = append(out, openai.UserMessage(text))
		}
	case RoleAssistant:
		if text == "" && len(calls) == 0 {
			return nil, nil
		}
		var a openai.ChatCompletionAssistantMessageParam
		if text != "" {
			a.Content.OfString = openai.String(text)
		}
		a.ToolCalls = calls
		out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
	default:
		return nil, fmt.Errorf("message role %q: want %q or %q", m.Role, RoleUser, RoleAssistant)
	}
	return out, nil
}

// openaiCall tracks one tool call while its deltas arrive, keyed by index.
type openaiCall struct {
	id, name string
	args     strings.Builder
	started  bool
	pending  []string // argument deltas seen before the id and name
}

// stream makes one streaming call and assembles the response.
func (b *openaiBackend) stream(ctx context.Context, params openai.ChatCompletionNewParams, emit func(Event)) (*Response, error) {
	stream := b.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		text    strings.Builder
		calls   = map[int64]*openaiCall{}
		usage   Usage
		finish  string
		model   = string(params.Model)
		refused bool
	)
	start := func(c *openaiCall) {
		if c.started || c.id == "" || c.name == "" {
			return
		}
		c.started = true
		emit(Event{Kind: EventToolCallStart, CallID: c.id, ToolName: c.name})
		for _, d := range c.pending {
			emit(Event{Kind: EventToolCallDelta, CallID: c.id, ToolName: c.name, ArgsDelta: d})
		}
		c.pending = nil
	}
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			u := chunk.Usage
			cached := u.PromptTokensDetails.CachedTokens
			written := u.PromptTokensDetails.CacheWriteTokens
			usage = Usage{
				// prompt_tokens counts cached tokens too; Usage keeps
				// them apart so each is priced once.
				InputTokens:      max(u.PromptTokens-cached-written, 0),
				OutputTokens:     u.CompletionTokens,
				CachedTokens:     cached,
				CacheWriteTokens: written,
				ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
			}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // only one choice is asked for
			}
			d := choice.Delta
			if d.Content != "" {
				text.WriteString(d.Content)
				emit(Event{Kind: EventTextDelta, Text: d.Content})
			}
			if d.Refusal != "" {
				refused = true
				text.WriteString(d.Refusal)
				emit(Event{Kind: EventTextDelta, Text: d.Refusal})
			}
			for _, tc := range d.ToolCalls {
				c, ok := calls[tc.Index]
				if !ok {
					c = &openaiCall{}
					calls[tc.Index] = c
				}
				if tc.ID != "" {
					c.id = tc.ID
				}
				if tc.Function.Name != "" && c.name == "" {
					c.name = tc.Function.Name
				}
				if a := tc.Function.Arguments; a != "" {
					c.args.WriteString(a)
					if c.started {
						emit(Event{Kind: EventToolCallDelta, CallID: c.id, ToolName: c.name, ArgsDelta: a})
					} else {
						c.pending = append(c.pending, a)
					}
				}
				start(c)
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if finish == "" {
		// The SDK ends quietly on a clean EOF without [DONE]; a stream
		// without a finish reason was cut.
		return nil, ErrStreamIncomplete
	}

	var parts []Part
	if text.Len() > 0 {
		parts = append(parts, Part{Kind: PartText, Text: text.String()})
	}
	indexes := make([]int64, 0, len(calls))
	for i := range calls {
		indexes = append(indexes, i)
	}
	sort.Slice(indexes, func(a, b int) bool { return indexes[a] < indexes[b] })
	for _, i := range indexes {
		c := calls[i]
		if c.id == "" {
			// Some compatible servers omit ids; the engine needs one to
			// pair the result with the call.
			c.id = newCallID("call_")
		}
		if c.name == "" {
			return nil, newError(ProviderOpenAI, 0, false, "", fmt.Errorf("malformed stream: tool call %d has no function name", i))
		}
		start(c)
		in := finishArgs(c.args.String())
		parts = append(parts, Part{Kind: PartToolCall, CallID: c.id, ToolName: c.name, Input: in})
		emit(Event{Kind: EventToolCallEnd, CallID: c.id, ToolName: c.name, Input: in})
	}

	resp := &Response{Parts: parts, StopReason: normaliseOpenAIStop(finish, len(calls) > 0, refused), Usage: usage, Model: model}
	emit(Event{Kind: EventUsage, Usage: &resp.Usage})
	emit(Event{Kind: EventStop, StopReason: resp.StopReason})
	return resp, nil
}

func normaliseOpenAIStop(finish string, hasCalls, refused bool) string {
	switch {
	case refused || finish == "content_filter":
		return StopRefusal
	case hasCalls || finish == "tool_calls" || finish == "function_call":
		// Some compatible servers say "stop" after tool calls.
		return StopToolUse
	case finish == "stop":
		return StopEndTurn
	case finish == "length":
		return StopMaxTokens
	default:
		return finish
	}
}

// classifyOpenAI turns an SDK or transport error into an *Error.
func classifyOpenAI(ctx context.Context, err error, now time.Time) *Error {
	if e := classifyTransport(ctx, ProviderOpenAI, err); e != nil {
		return e
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		typ := apiErr.Type
		if typ == "" {
			typ = apiErr.Code
		}
		msg := apiErr.Message
		if msg == "" {
			msg = truncate(strings.TrimSpace(apiErr.RawJSON()), 500)
		}
		e := newError(ProviderOpenAI, status, retryableStatus(status), statusMessage(status, typ, msg), err)
		e.Type = typ
		if apiErr.Response != nil {
			e.RetryAfter = parseRetryAfter(apiErr.Response.Header, now)
		}
		return e
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		// An error object inside a 200 stream.
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &body)
		typ := body.Error.Type
		code := fmt.Sprint(body.Error.Code)
		status := 0
		switch {
		case typ == "server_error" || code == "server_error" || typ == "overloaded_error":
			status = 500
		case typ == "rate_limit_exceeded" || code == "rate_limit_exceeded" || typ == "rate_limit_error":
			status = 429
		}
		msg := body.Error.Message
		if msg == "" {
			msg = truncate(strings.TrimSpace(string(streamErr.Event.Data)), 500)
		}
		e := newError(ProviderOpenAI, status, status != 0, statusMessage(status, typ, msg), err)
		e.Type = typ
		return e
	}
	// Malformed JSON in the stream and anything else unexpected: a retry
	// would read the same bytes.
	return newError(ProviderOpenAI, 0, false, "", err)
}
