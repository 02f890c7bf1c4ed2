package model

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"
)

// ErrScriptExhausted is returned by the scripted backend when no turn of its
// script is left to play and it has no fallback.
var ErrScriptExhausted = errors.New("script has no turn left to play")

//go:embed scripts/demo.yaml
var demoScript []byte

// DemoScriptName is the scripted model that selects the built-in demo
// script ("scripted:demo"), the model `switchboard chat` uses offline.
const DemoScriptName = "demo"

// Script is what a scripted model says, read from YAML:
//
//	name: support-demo
//	chunk_delay: 30ms            # pause between streamed words
//	turns:
//	  - when_last_user_contains: [chart, graph]   # checked first, every call
//	    text: "Here is a chart."
//	    tool_calls:
//	      - name: render_chart
//	        input: {title: Sales, labels: [Q1, Q2], series: [{name: 2025, values: [3, 5]}]}
//	  - after_tool: ask_user     # the last message answers an ask_user call
//	    text: "You chose {{last_user}}."
//	  - text: "Hello!"           # plain turns play in order, once each
//	    delay: 200ms
//	  - failure: {status: 529, message: overloaded}   # simulate an error
//	fallback:
//	  text: "I only follow a script. You said: {{last_user}}"
//
// Each call picks a turn: first the conditional turns (when_last_user_contains,
// after_tool), in file order, against the last user message; then the next
// unplayed plain turn; then the fallback; else the call fails with
// ErrScriptExhausted. A failing turn is consumed like any other, so "500
// then a text turn" plays a retry that succeeds.
type Script struct {
	Name string `yaml:"name"`
	// ChunkDelay pauses between streamed chunks so streaming is visible.
	ChunkDelay time.Duration `yaml:"chunk_delay"`
	Turns      []ScriptTurn  `yaml:"turns"`
	Fallback   *ScriptTurn   `yaml:"fallback"`
}

// ScriptTurn is one model reply.
type ScriptTurn struct {
	// WhenLastUserContains makes the turn conditional: it plays when the
	// text of the last user message contains any of these (ignoring case).
	// A single string or a list.
	WhenLastUserContains StringList `yaml:"when_last_user_contains"`
	// AfterTool makes the turn conditional: it plays when the last user
	// message carries the result of a call to this tool.
	AfterTool string `yaml:"after_tool"`
	// Once limits a conditional turn to one play; plain turns always play
	// once.
	Once bool `yaml:"once"`

	// Text is streamed word by word. "{{last_user}}" is replaced by the
	// last user message's text (or its tool results' output).
	Text      string           `yaml:"text"`
	ToolCalls []ScriptToolCall `yaml:"tool_calls"`
	// Delay waits before the reply starts.
	Delay time.Duration `yaml:"delay"`
	// Failure makes the call fail, after streaming Text if there is any.
	Failure *ScriptFailure `yaml:"failure"`
	// StopReason overrides the stop reason ("end_turn", or "tool_use" when
	// there are tool calls).
	StopReason string `yaml:"stop_reason"`
}

// ScriptToolCall is a tool call a scripted turn makes.
type ScriptToolCall struct {
	ID    string         `yaml:"id"` // empty: a random id
	Name  string         `yaml:"name"`
	Input map[string]any `yaml:"input"`
}

// ScriptFailure is a simulated provider failure.
type ScriptFailure struct {
	// Status is the HTTP status to simulate (429, 500, 529, 400...); 0
	// simulates a dropped connection. 408, 429 and 5xx are retried.
	Status     int           `yaml:"status"`
	Message    string        `yaml:"message"`
	RetryAfter time.Duration `yaml:"retry_after"`
}

func (t *ScriptTurn) conditional() bool {
	return len(t.WhenLastUserContains) > 0 || t.AfterTool != ""
}

// StringList is a list of strings that YAML may also give as one string.
type StringList []string

func (s *StringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*s = StringList{n.Value}
		return nil
	case yaml.SequenceNode:
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		*s = list
		return nil
	default:
		return fmt.Errorf("line %d: want a string or a list of strings", n.Line)
	}
}

// ParseScript reads a script from YAML. Unknown fields are errors, so a typo
// does not silently change what the demo says.
func ParseScript(data []byte) (*Script, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("parsing script: %w", err)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("parsing script: %w", err)
	}
	return &s, nil
}

// LoadScript reads a script file; the name "demo" is the built-in demo.
func LoadScript(path string) (*Script, error) {
	if path == DemoScriptName {
		return DemoScript(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("loading script %s: %w", path, err)
	}
	if s.Name == "" {
		s.Name = path
	}
	return s, nil
}

// DemoScript is the built-in demo: it greets, says it is the offline demo
// model, and shows an ask_user and a render_chart tool call when asked.
func DemoScript() *Script {
	s, err := ParseScript(demoScript)
	if err != nil {
		panic("model: the embedded demo script is invalid: " + err.Error()) // caught by TestDemoScript
	}
	return s
}

func (s *Script) validate() error {
	if len(s.Turns) == 0 && s.Fallback == nil {
		return errors.New("no turns and no fallback")
	}
	if s.ChunkDelay < 0 {
		return fmt.Errorf("chunk_delay must not be negative, got %s", s.ChunkDelay)
	}
	check := func(where string, t *ScriptTurn) error {
		if t.Text == "" && len(t.ToolCalls) == 0 && t.Failure == nil {
			return fmt.Errorf("%s: needs text, tool_calls or failure", where)
		}
		if t.Delay < 0 {
			return fmt.Errorf("%s: delay must not be negative, got %s", where, t.Delay)
		}
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return fmt.Errorf("%s: tool_calls[%d] has no name", where, j)
			}
		}
		if f := t.Failure; f != nil && (f.Status < 0 || f.Status > 599 || (f.Status > 0 && f.Status < 400)) {
			return fmt.Errorf("%s: failure status must be 0 (dropped connection) or 400-599, got %d", where, f.Status)
		}
		return nil
	}
	for i := range s.Turns {
		if err := check(fmt.Sprintf("turns[%d]", i), &s.Turns[i]); err != nil {
			return err
		}
	}
	if s.Fallback != nil {
		if s.Fallback.conditional() {
			return errors.New("fallback: must not have conditions")
		}
		if err := check("fallback", s.Fallback); err != nil {
			return err
		}
	}
	return nil
}

// scriptedBackend replays a Script. It is safe for concurrent use; the
// position in the script is shared by every conversation it serves.
type scriptedBackend struct {
	script *Script
	sleep  func(ctx context.Context, d time.Duration) error
	call   caller

	mu     sync.Mutex
	next   int          // the first plain turn not yet played
	played map[int]bool // conditional turns played, for Once
}

// NewScripted returns a backend that replays script. Only Retry, Sleep and
// Logger of opts are used.
func NewScripted(script *Script, opts Options) Backend {
	opts = opts.withDefaults()
	b := &scriptedBackend{script: script, sleep: opts.Sleep, played: map[int]bool{}}
	b.call = newCaller(ProviderScripted, opts, nil)
	return b
}

func (b *scriptedBackend) Provider() string { return ProviderScripted }

func (b *scriptedBackend) Generate(ctx context.Context, req *Request, emit func(Event)) (*Response, error) {
	return b.call.do(ctx, emit, func(ctx context.Context, emit func(Event)) (*Response, error) {
		turn, err := b.pick(req)
		if err != nil {
			return nil, err
		}
		return b.play(ctx, req, turn, emit)
	})
}

// lastUser returns the last user message's text, the output of its tool
// results, and the names of the tools those results answer.
func lastUser(req *Request) (text, results string, tools map[string]bool) {
	tools = map[string]bool{}
	names := map[string]string{} // call id -> tool name
	var last *Message
	for i := range req.Messages {
		m := &req.Messages[i]
		for _, p := range m.Parts {
			if p.Kind == PartToolCall {
				names[p.CallID] = p.ToolName
			}
		}
		if m.Role == RoleUser {
			last = m
		}
	}
	if last == nil {
		return "", "", tools
	}
	var texts, outs []string
	for _, p := range last.Parts {
		switch p.Kind {
		case PartText:
			texts = append(texts, p.Text)
		case PartToolResult:
			outs = append(outs, p.Output)
			if n, ok := names[p.CallID]; ok {
				tools[n] = true
			}
		}
	}
	return strings.Join(texts, "\n"), strings.Join(outs, "\n"), tools
}

func (b *scriptedBackend) pick(req *Request) (*ScriptTurn, error) {
	text, _, tools := lastUser(req)
	lower := strings.ToLower(text)
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.script.Turns {
		t := &b.script.Turns[i]
		if !t.conditional() || (t.Once && b.played[i]) {
			continue
		}
		if t.AfterTool != "" && !tools[t.AfterTool] {
			continue
		}
		if len(t.WhenLastUserContains) > 0 {
			hit := false
			for _, w := range t.WhenLastUserContains {
				hit = hit || (w != "" && strings.Contains(lower, strings.ToLower(w)))
			}
			if !hit {
				continue
			}
		}
		b.played[i] = true
		return t, nil
	}
	for ; b.next < len(b.script.Turns); b.next++ {
		if t := &b.script.Turns[b.next]; !t.conditional() {
			b.next++
			return t, nil
		}
	}
	if b.script.Fallback != nil {
		return b.script.Fallback, nil
	}
	return nil, newError(ProviderScripted, 0, false, "", ErrScriptExhausted)
}

// play streams one turn.
func (b *scriptedBackend) play(ctx context.Context, req *Request, t *ScriptTurn, emit func(Event)) (*Response, error) {
	if err := b.wait(ctx, t.Delay); err != nil {
		return nil, err
	}
	text, results, _ := lastUser(req)
	if text == "" {
		text = results
	}
	out := strings.ReplaceAll(t.Text, "{{last_user}}", strings.TrimSpace(text))

	var parts []Part
	var written int
	if out != "" {
		for i, chunk := range wordChunks(out) {
			if i > 0 {
				if err := b.wait(ctx, b.script.ChunkDelay); err != nil {
					return nil, err
				}
			}
			emit(Event{Kind: EventTextDelta, Text: chunk})
		}
		parts = append(parts, Part{Kind: PartText, Text: out})
		written += len(out)
	}
	if f := t.Failure; f != nil {
		if f.Status == 0 {
			return nil, newError(ProviderScripted, 0, true, "connection dropped (scripted)", ErrStreamIncomplete)
		}
		msg := f.Message
		if msg == "" {
			msg = "scripted failure"
		}
		e := newError(ProviderScripted, f.Status, retryableStatus(f.Status), statusMessage(f.Status, "", msg), nil)
		e.RetryAfter = f.RetryAfter
		return nil, e
	}
	for _, c := range t.ToolCalls {
		id := c.ID
		if id == "" {
			id = newCallID("toolu_scripted_")
		}
		input := c.Input
		if input == nil {
			input = map[string]any{}
		}
		args, err := json.Marshal(input)
		if err != nil {
			return nil, newError(ProviderScripted, 0, false, "", fmt.Errorf("encoding input of %s: %w", c.Name, err))
		}
		emit(Event{Kind: EventToolCallStart, CallID: id, ToolName: c.Name})
		for _, piece := range byteChunks(string(args), 16) {
			emit(Event{Kind: EventToolCallDelta, CallID: id, ToolName: c.Name, ArgsDelta: piece})
		}
		emit(Event{Kind: EventToolCallEnd, CallID: id, ToolName: c.Name, Input: args})
		parts = append(parts, Part{Kind: PartToolCall, CallID: id, ToolName: c.Name, Input: args})
		written += len(args)
	}

	stop := t.StopReason
	if stop == "" {
		stop = StopEndTurn
		if len(t.ToolCalls) > 0 {
			stop = StopToolUse
		}
	}
	name := b.script.Name
	if name == "" {
		name = DemoScriptName
	}
	resp := &Response{
		Parts:      parts,
		StopReason: stop,
		// A rough count (four bytes a token) so usage displays and budgets
		// behave as they would with a real model.
		Usage: Usage{InputTokens: int64(requestBytes(req)/4 + 1), OutputTokens: int64(written/4 + 1)},
		Model: name,
	}
	emit(Event{Kind: EventUsage, Usage: &resp.Usage})
	emit(Event{Kind: EventStop, StopReason: resp.StopReason})
	return resp, nil
}

// wait pauses for d, if there is anything to wait for.
func (b *scriptedBackend) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return b.sleep(ctx, d)
}

func requestBytes(req *Request) int {
	n := len(req.Turn)
	for _, s := range req.System {
		n += len(s.Text)
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Input) + len(p.Output)
		}
	}
	return n
}

// wordChunks splits s into words, each keeping the spaces after it, so the
// chunks concatenate back to s.
func wordChunks(s string) []string {
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

// byteChunks splits s into pieces of at most n bytes (ASCII JSON here, but
// cut on rune boundaries all the same).
func byteChunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
