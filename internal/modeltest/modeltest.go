// Package modeltest runs local fake model providers for tests: an HTTP
// server speaking the Anthropic Messages streaming API and one speaking the
// OpenAI Chat Completions streaming API, which the real SDKs (and so the
// real core/model backends) talk to.
//
// A test queues the replies it wants, points a backend at the fake, and
// reads back what was sent:
//
//	fake := modeltest.NewAnthropic(t)
//	fake.Push(modeltest.Reply{Text: "Hello there"})
//	fake.Push(modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "ask_user", Input: `{"question":"Which?"}`}}})
//	backend, _ := model.New(model.Spec{Provider: "anthropic", Model: "claude-sonnet-4-5"},
//		model.Options{APIKey: "test-key", BaseURL: fake.URL})
//	...
//	body := fake.Requests()[0].JSON() // what the SDK sent
//
// Each request takes the next queued Reply; a request with nothing queued
// fails the test and gets a 500. Replies can also fail: an HTTP error with
// the provider's error JSON (Status, RetryAfter), a stream cut in the middle
// (CutAfter), malformed JSON in the stream (Malformed), an error event inside
// the stream (StreamError), a stream held open until the test says so
// (Block), or one that goes silent mid-answer for good (Stall). A reply
// can stream slowly (Delay) or be huge (Repeat), Default sets a reply for every request that
// finds the queue empty, and OnStreamEnd tells the test when a reply's last
// event went out.
//
// The fakes check requests the way the real APIs do where a client bug
// would hide: required headers and fields, non-empty text blocks, tool
// results that answer exactly the previous message's tool calls, at most
// four cache_control breakpoints, tool name patterns. A request that breaks
// those gets the provider's 400 (invalid_request_error), as in production.
package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
)

// Reply is what the fake answers to one request.
type Reply struct {
	// Text is streamed in small deltas (a word or so each).
	Text string
	// ToolCalls follow the text; their arguments are streamed in pieces.
	ToolCalls []ToolCall
	// Thinking (Anthropic only) is a thinking block before the text, with a
	// fake signature.
	Thinking string
	// StopReason overrides the stop or finish reason; by default it is
	// end_turn/stop, or tool_use/tool_calls when there are tool calls.
	StopReason string
	// Usage overrides the token counts; by default they are estimated from
	// the request and reply sizes.
	Usage *Usage
	// Model overrides the model reported back; by default the one requested.
	Model string

	// Status, when not zero, answers with this HTTP status and the
	// provider's error JSON instead of a stream.
	Status int
	// ErrorType and ErrorMessage fill the error JSON (of Status or
	// StreamError); the type defaults to the provider's for the status.
	ErrorType    string
	ErrorMessage string
	// RetryAfter is sent as the Retry-After header, e.g. "2" or an HTTP date.
	RetryAfter string

	// CutAfter, when positive, drops the connection after that many stream
	// events, without ending the HTTP response properly.
	CutAfter int
	// Malformed sends an event whose JSON is cut off, after the first
	// content event, then carries on.
	Malformed bool
	// StreamError sends an error event of this type inside the 200 stream
	// after the first content event, then ends the stream, as providers do
	// when they overload mid-answer (Anthropic: "overloaded_error").
	StreamError string
	// Block, when set, holds the stream after its first event until the
	// channel is closed or the client goes away.
	Block <-chan struct{}
	// Stall goes silent after the first content event: the connection
	// stays open and nothing more is sent until the client goes away, as
	// a provider whose stream hangs mid-answer.
	Stall bool
	// Delay, when positive, pauses before every stream event after the
	// first, so a reply takes a while to stream and a test can act while it
	// is half shown (a client that goes away ends the stream).
	Delay time.Duration
	// Repeat, when positive, streams Text as one whole delta Repeat times
	// (a 1 KB Text repeated 51,200 times is a 50 MB answer in 1 KB deltas),
	// without the fake ever holding the whole answer.
	Repeat int
}

// textDeltas are the text deltas of a reply, in order: a word or so each,
// or Text whole Repeat times.
func (r Reply) textDeltas(yield func(string) bool) {
	if r.Repeat > 0 {
		for range r.Repeat {
			if !yield(r.Text) {
				return
			}
		}
		return
	}
	for _, d := range splitWords(r.Text) {
		if !yield(d) {
			return
		}
	}
}

// textLen is the size of the reply's whole text.
func (r Reply) textLen() int { return len(r.Text) * max(r.Repeat, 1) }

// ToolCall is a tool call in a Reply.
type ToolCall struct {
	ID    string // empty: generated (toolu_fake_N, call_fake_N)
	Name  string
	Input string // the arguments, a JSON object; empty means {}
}

// Usage is the token counts a Reply reports.
type Usage struct {
	InputTokens      int64 // Anthropic: uncached input; OpenAI: prompt_tokens (cached included)
	OutputTokens     int64
	CacheReadTokens  int64 // cache_read_input_tokens / prompt_tokens_details.cached_tokens
	CacheWriteTokens int64 // cache_creation_input_tokens (Anthropic)
	ReasoningTokens  int64 // completion_tokens_details.reasoning_tokens (OpenAI)
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map, for assertions. It returns nil
// if the body is not a JSON object.
func (r Request) JSON() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.Body, &m) != nil {
		return nil
	}
	return m
}

// Decode decodes the body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Fake is a fake provider server. It is safe for concurrent use.
type Fake struct {
	// URL is the base URL to give the SDK: the server root for Anthropic
	// (the SDK adds /v1/messages), the server root plus /v1 for OpenAI (the
	// SDK adds /chat/completions), as the real base URLs are.
	URL string
	// APIKey, when set, must be the key of every request (x-api-key for
	// Anthropic, Authorization: Bearer for OpenAI); others get a 401.
	// Anthropic requests always need some key.
	APIKey string

	t      testing.TB
	srv    *httptest.Server
	stream func(f *Fake, w http.ResponseWriter, r *http.Request, body map[string]any, reply Reply, n int)
	check  func(f *Fake, r *http.Request, body map[string]any) *apiError
	errorf func(w http.ResponseWriter, e *apiError, retryAfter string)
	cache  *promptCache // Anthropic's prompt cache

	// textSent counts the bytes of reply text written to clients.
	textSent atomic.Int64

	mu        sync.Mutex
	queue     []Reply
	def       *Reply // answered when the queue is empty, see Default
	reqs      []Request
	streamEnd func() // see OnStreamEnd
}

// apiError is a request the fake refuses, as the provider would.
type apiError struct {
	status int
	typ    string
	msg    string
}

func newFake(t testing.TB) *Fake {
	f := &Fake{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// Push queues replies, answered in order.
func (f *Fake) Push(replies ...Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, replies...)
}

// Default makes the fake answer r to every request that finds the queue
// empty, instead of failing the test: for a service run outside the test's
// control (a subprocess, a retry after a crash) whose number of model calls
// is not known in advance.
func (f *Fake) Default(r Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.def = &r
}

// OnStreamEnd makes the fake call fn each time it has written and flushed
// the last event of a streamed reply (Anthropic's message_stop, OpenAI's
// [DONE]), so a test can act at a known time after the model's last token
// (kill the client, say). A reply cut short, by the client or by the reply's
// own faults, does not call it. fn runs on the request's goroutine and
// should not block.
func (f *Fake) OnStreamEnd(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streamEnd = fn
}

// streamEnded calls the OnStreamEnd hook, if any.
func (f *Fake) streamEnded() {
	f.mu.Lock()
	fn := f.streamEnd
	f.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// Requests returns every request received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// TextSent is how many bytes of reply text the fake has written to its
// clients so far, over every request: a client that goes away mid-answer
// stops it growing.
func (f *Fake) TextSent() int64 { return f.textSent.Load() }

// Pending is the number of queued replies not yet used.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		f.errorf(w, &apiError{status: 400, typ: "invalid_request_error", msg: "reading body: " + err.Error()}, "")
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: raw})
	n := len(f.reqs)
	f.mu.Unlock()

	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil && r.Method == http.MethodPost {
		f.errorf(w, &apiError{status: 400, typ: "invalid_request_error", msg: "request body is not valid JSON: " + err.Error()}, "")
		return
	}
	if e := f.check(f, r, body); e != nil {
		f.t.Logf("modeltest: request %d refused: %d %s: %s", n, e.status, e.typ, e.msg)
		f.errorf(w, e, "")
		return
	}

	f.mu.Lock()
	if len(f.queue) == 0 && f.def != nil {
		f.queue = append(f.queue, *f.def)
	}
	if len(f.queue) == 0 {
		f.mu.Unlock()
		f.t.Errorf("modeltest: request %d (%s %s) arrived with no reply queued", n, r.Method, r.URL.Path)
		f.errorf(w, &apiError{status: 500, typ: "api_error", msg: "modeltest: no reply queued"}, "")
		return
	}
	reply := f.queue[0]
	f.queue = f.queue[1:]
	f.mu.Unlock()

	if reply.Status != 0 {
		e := &apiError{status: reply.Status, typ: reply.ErrorType, msg: reply.ErrorMessage}
		if e.msg == "" {
			e.msg = http.StatusText(reply.Status)
		}
		f.errorf(w, e, reply.RetryAfter)
		return
	}
	f.stream(f, w, r, body, reply, n)
}

// sse writes stream events, applying a reply's Block, CutAfter, Malformed,
// StreamError and Stall. The events are whole SSE frames ("event: x\ndata: y\n\n"
// or "data: y\n\n").
type sse struct {
	w       http.ResponseWriter
	r       *http.Request
	reply   Reply
	written int
	// content counts content events, to place Malformed and StreamError.
	content int
}

// send writes one frame. It reports false when the stream must end here
// (the client left, or the reply injected an error event).
func (s *sse) send(frame string) bool {
	if s.written > 0 && s.reply.Delay > 0 {
		t := time.NewTimer(s.reply.Delay)
		select {
		case <-t.C:
		case <-s.r.Context().Done():
			t.Stop()
			return false
		}
	}
	if _, err := io.WriteString(s.w, frame); err != nil {
		return false
	}
	s.written++
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
	if s.written == 1 && s.reply.Block != nil {
		select {
		case <-s.reply.Block:
		case <-s.r.Context().Done():
			return false
		}
	}
	if s.reply.CutAfter > 0 && s.written >= s.reply.CutAfter {
		// Abort the response: the server closes the connection without
		// the final chunk, so the client reads an unexpected EOF.
		panic(http.ErrAbortHandler)
	}
	return true
}

// stall holds the response open, sending nothing, until the client leaves.
func (s *sse) stall() {
	<-s.r.Context().Done()
}

// splitWords splits text into deltas of one word each, spaces kept, so they
// join back to the text.
func splitWords(s string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if !sp && inSpace {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitBytes splits s into pieces of at most n bytes, as providers split
// streamed tool arguments (mid-token, mid-string).
func splitBytes(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modeltest: encoding %T: %v", v, err))
	}
	return string(b)
}

// estimate is a rough token count for default usage.
func estimate(n int) int64 { return int64(n/4 + 1) }

// toolInput normalises a ToolCall's Input.
func (c ToolCall) input() string {
	if strings.TrimSpace(c.Input) == "" {
		return "{}"
	}
	return c.Input
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
