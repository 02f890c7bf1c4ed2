// Package model is the one interface the turn engine uses to talk to language
// models, whatever serves them: the Anthropic Messages API, the OpenAI Chat
// Completions API (and servers compatible with it, such as Ollama or vLLM),
// the Claude Code and Codex CLIs run as subprocesses (see cli.go), or a
// scripted replay for tests and the offline demo.
//
// A Backend streams one model call as Events and returns the complete
// Response. Every backend shares the same retry loop (see RetryPolicy): 429,
// 5xx, Anthropic's 529 and dropped connections are retried at most
// MaxAttempts times in total with bounded, jittered backoff that honours
// Retry-After; everything else fails at once. A stream that sends nothing
// for Options.IdleTimeout counts as a dropped connection (ErrStreamStalled);
// every call as a whole, retries included, ends at Options.Timeout
// (ErrTimeout, not retried), and one that streams more than
// Options.MaxReplyBytes is cancelled and its reply cut with a note (see
// bound.go). Describe turns a failure into a sentence for people. The SDKs' own retries are
// switched off so the two never multiply. When a retry follows partial
// output, the backend emits EventRestart first so listeners discard what
// they showed. Every error a backend returns is an *Error whose text has
// passed through core/redact.
//
// The prompt is ordered for prompt caching: the tool schemas and
// Request.System (the stable block: persona, rules, the conversation's
// rulebook, skill index; then the conversation's summary, when it has one)
// first, then the history (Request.Messages), then the per-turn block
// (Request.Turn) last, so everything before the per-turn block is a byte-identical prefix
// of the next step's and the next turn's request. The Anthropic backend puts
// cache_control on the last tool, the stable block and the end of the
// history; OpenAI caches the same prefix on its own.
package model

import (
	"context"
	"encoding/json"
)

// Role is who said a message.
type Role string

// Roles of a conversation. Tool results travel in user messages, as both
// providers' APIs expect (OpenAI's "tool" role is produced by its backend).
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartKind says what a Part holds.
type PartKind string

// Part kinds.
const (
	PartText       PartKind = "text"
	PartToolCall   PartKind = "tool_call"
	PartToolResult PartKind = "tool_result"
	// PartThinking is the model's reasoning as the provider returned it. The
	// Anthropic API requires the thinking blocks of an assistant message that
	// made tool calls to be sent back unchanged with the tool results, so the
	// engine keeps these parts in the log and passes them back. Backends that
	// cannot use them ignore them.
	PartThinking PartKind = "thinking"
	// PartImage is an image a person shared (PNG, JPEG, GIF or WebP):
	// Data and MimeType. Anthropic gets an image block, OpenAI an image
	// part; a backend that cannot see images says so in text.
	PartImage PartKind = "image"
	// PartDocument is a PDF a person shared: Data, MimeType and Name.
	// Anthropic gets a document block, OpenAI a file part.
	PartDocument PartKind = "document"
)

// Part is one piece of a message.
type Part struct {
	Kind PartKind
	Text string // text; thinking: the reasoning text (or opaque data when Redacted)

	CallID   string // tool_call, tool_result
	ToolName string // tool_call
	// Input is the tool_call arguments, a JSON object. When a provider
	// streams arguments that are not a JSON object (a small model's broken
	// JSON), Input holds the raw text as a JSON string, so the tool's schema
	// validation rejects it and the model is told, instead of the turn
	// failing.
	Input   json.RawMessage
	Output  string // tool_result content as text (JSON or prose)
	IsError bool   // tool_result

	// Signature is the provider's signature of a thinking part, which must be
	// sent back with it.
	Signature string
	// Redacted marks a thinking part the provider encrypted; Text holds its
	// opaque data.
	Redacted bool

	// Name, MimeType and Data are an image's or a document's file name,
	// media type and bytes.
	Name     string
	MimeType string
	Data     []byte
}

// Message is one turn of the conversation.
type Message struct {
	Role  Role
	Parts []Part
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema object
}

// SystemBlock is one block of the system prompt. Cache marks the end of the
// stable prefix for prompt caching: the block must be byte-identical from
// turn to turn for the provider's cache to hit.
type SystemBlock struct {
	Text  string
	Cache bool
}

// Thinking levels for Request.Thinking.
const (
	ThinkingDefault = ""
	ThinkingOff     = "off"
	ThinkingLow     = "low"
	ThinkingMedium  = "medium"
	ThinkingHigh    = "high"
)

// Request is one model call.
type Request struct {
	Model    string        // overrides the backend's model when set
	System   []SystemBlock // the stable block (Cache: true marks its end), then the summary
	Messages []Message     // the history
	// Turn is the per-turn block (the time, who spoke last), sent after
	// the history so that it never breaks the cached prefix.
	Turn        string
	Tools       []Tool
	MaxTokens   int // 0: DefaultMaxTokens
	Temperature *float64
	Thinking    string // "", "off", "low", "medium", "high"
	// Session is the CLI session that already holds the start of this
	// conversation (the CLI backends only; others ignore it): the backend
	// resumes it and sends only Messages[Session.Seen:]. Nil starts a new
	// session with the whole history.
	Session *Session
	// Dir, when set, is where this call works: a coding step's worktree.
	// The CLI backends run there instead of their agent's own folder;
	// others ignore it.
	Dir string
}

// Session is a coding CLI's own session (Claude Code's session_id, Codex's
// thread_id), kept in the log with the assistant entry of the turn that
// made it, so the next turn resumes it (see core.AssistantContent).
type Session struct {
	// Provider is the backend that made the session; another backend never
	// resumes it.
	Provider string
	ID       string
	// Seen is how many of Request.Messages the session holds already, on a
	// Request; the engine counts them up to the entry that recorded it.
	Seen int
	// Totals is the usage the CLI reported for the whole session so far,
	// for a CLI that reports it per session rather than per call (Codex's
	// turn.completed counts the whole thread): the backend subtracts the
	// totals of the resumed session to get one call's usage.
	Totals *Usage
}

// DefaultMaxTokens is used when Request.MaxTokens is 0.
const DefaultMaxTokens = 4096

// EventKind says what an Event carries.
type EventKind string

// Event kinds, in the order a call produces them: text and tool call events
// interleave as the model writes, then one EventUsage and one EventStop.
const (
	EventTextDelta     EventKind = "text_delta"
	EventThinkingDelta EventKind = "thinking_delta" // reasoning text, for display only
	EventToolCallStart EventKind = "tool_call_start"
	EventToolCallDelta EventKind = "tool_call_delta"
	EventToolCallEnd   EventKind = "tool_call_end"
	EventUsage         EventKind = "usage"
	EventStop          EventKind = "stop"
	// EventRestart is emitted when a retry follows partial output: listeners
	// discard what this call streamed so far.
	EventRestart EventKind = "restart"
	// EventStatus says what the call is doing while it has nothing to
	// stream (Text: "is waiting for the agent's machine…"): a call relayed
	// to another machine emits it; the turn shows it as its status.
	EventStatus EventKind = "status"
)

// Event is one streamed piece of a model call.
type Event struct {
	Kind       EventKind
	Text       string          // text or thinking delta
	CallID     string          // tool call events
	ToolName   string          // tool call events
	ArgsDelta  string          // partial JSON of arguments
	Input      json.RawMessage // complete arguments, on EventToolCallEnd
	Usage      *Usage
	StopReason string
}

// Usage counts the tokens of one call.
//
// The input side is split by price: InputTokens are billed at the base input
// rate, CachedTokens were read from the prompt cache and CacheWriteTokens
// were written to it, so the whole prompt is their sum (TotalInputTokens).
// ReasoningTokens are part of OutputTokens.
type Usage struct {
	InputTokens      int64
	OutputTokens     int64
	CachedTokens     int64
	CacheWriteTokens int64
	ReasoningTokens  int64
}

// TotalInputTokens is the size of the prompt, cached or not.
func (u Usage) TotalInputTokens() int64 {
	return u.InputTokens + u.CachedTokens + u.CacheWriteTokens
}

// Add returns the sum of two usages, for totals over a turn.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CachedTokens:     u.CachedTokens + o.CachedTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens + o.ReasoningTokens,
	}
}

// sub is u less o, each count at least 0.
func (u Usage) sub(o Usage) Usage {
	return Usage{
		InputTokens:      max(u.InputTokens-o.InputTokens, 0),
		OutputTokens:     max(u.OutputTokens-o.OutputTokens, 0),
		CachedTokens:     max(u.CachedTokens-o.CachedTokens, 0),
		CacheWriteTokens: max(u.CacheWriteTokens-o.CacheWriteTokens, 0),
		ReasoningTokens:  max(u.ReasoningTokens-o.ReasoningTokens, 0),
	}
}

// Normalised stop reasons. Providers' own reasons are mapped to these; a
// reason with no equivalent is passed through as the provider spelled it.
const (
	StopEndTurn      = "end_turn"
	StopToolUse      = "tool_use"
	StopMaxTokens    = "max_tokens"
	StopSequence     = "stop_sequence"
	StopRefusal      = "refusal"
	StopPauseTurn    = "pause_turn" // Anthropic: a long server-side turn paused; call again to continue
	StopContextLimit = "model_context_window_exceeded"
)

// Response is the complete result of one model call.
type Response struct {
	Parts      []Part // the assistant's thinking, text and tool calls, in order
	StopReason string // normalised, see the Stop constants
	Usage      Usage
	Model      string // the model that answered, as the provider reports it
	// Session is the CLI session the call ran in (CLI backends only), to be
	// resumed by the next turn.
	Session *Session
	// CostMicroUSD is the cost the provider reported for the call, when
	// CostReported (Claude Code's total_cost_usd); otherwise the engine
	// prices Usage from the list prices.
	CostMicroUSD int64
	CostReported bool
}

// Text is the concatenated text parts of the response.
func (r *Response) Text() string {
	var n int
	for _, p := range r.Parts {
		if p.Kind == PartText {
			n += len(p.Text)
		}
	}
	b := make([]byte, 0, n)
	for _, p := range r.Parts {
		if p.Kind == PartText {
			b = append(b, p.Text...)
		}
	}
	return string(b)
}

// ToolCalls returns the tool call parts of the response, in order.
func (r *Response) ToolCalls() []Part {
	var calls []Part
	for _, p := range r.Parts {
		if p.Kind == PartToolCall {
			calls = append(calls, p)
		}
	}
	return calls
}

// Backend is one model provider.
type Backend interface {
	// Provider names the backend: "anthropic", "openai", "claude-code",
	// "codex", "scripted".
	Provider() string
	// Generate streams one model call; emit is called for each event in
	// order, from the calling goroutine (nil discards them). It returns the
	// complete response, or an *Error.
	Generate(ctx context.Context, req *Request, emit func(Event)) (*Response, error)
}
