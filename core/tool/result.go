package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core/cards"
)

// Result is the outcome of one tool call, as the engine records it.
type Result struct {
	// Output is what the model sees, always a JSON value. For an error it is
	// {"error": "..."}; for a pause it is empty until the answer arrives.
	Output json.RawMessage
	// IsError marks a failed call: bad arguments, a handler error, a panic,
	// an output too large. The model sees it as a tool error and may retry.
	IsError bool
	// Attachments are files for the platform (a chart PNG). They are never
	// shown to the model, which only sees Output.
	Attachments []Attachment
	// Pause is non-nil when the call must wait for a person or a frontend
	// client. The engine leaves the call pending and ends the turn.
	Pause *Pause
	// Err is the underlying error of a failed call (with the stack for a
	// panic), for logs and the audit row. It is not meant for the model:
	// Output holds the message the model sees.
	Err error
}

// Attachment is a file produced by a tool for the platform to upload.
type Attachment struct {
	Name     string // file name, e.g. "revenue.png"
	MimeType string // e.g. "image/png"
	Data     []byte
	Title    string // shown by the platform next to the file; may be empty
	// Caption, when set, is a line of Markdown posted with the file (a
	// link to where it lives, say).
	Caption string
	// Chart, for a chart's image, is its data: a platform that draws
	// charts itself shows that instead (see bots.File.Chart).
	Chart *cards.Chart
}

// Attacher is the optional interface through which a handler returns files:
// when the handler's Out value implements it, Call copies its attachments
// into Result.Attachments. Keep the file bytes out of the JSON encoding of
// Out (an unexported field or `json:"-"`) so the model never sees them.
type Attacher interface {
	Attachments() []Attachment
}

// Pause kinds.
const (
	PauseQuestion = "question" // a person picks one of Choices (buttons)
	PauseConfirm  = "confirm"  // a person approves or denies
	PauseFrontend = "frontend" // a live client runs the call and posts the result
)

// Pause describes what a paused call waits for.
type Pause struct {
	Kind    string          `json:"kind"`
	Prompt  string          `json:"prompt,omitempty"`
	Choices []string        `json:"choices,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"` // kind-specific data, e.g. for the client
}

// PauseError is the error a handler returns to pause its call instead of
// failing it. Call turns it into Result.Pause.
type PauseError struct {
	Pause Pause
}

func (e *PauseError) Error() string {
	return fmt.Sprintf("tool call paused for %s", e.Pause.Kind)
}

// PauseWith returns the error a handler returns to pause its call.
func PauseWith(p Pause) error {
	return &PauseError{Pause: p}
}

// ErrUnknownTool is the Err of the result UnknownTool returns.
var ErrUnknownTool = errors.New("unknown tool")

// UnknownTool is the error result for a call to a tool that is not offered.
// It names only the requested tool (truncated), never the tools that exist,
// so a model probing for names learns nothing.
func UnknownTool(name string) Result {
	shown := truncate(name, maxNameLen)
	return Result{
		Output:  errorOutput(fmt.Sprintf("unknown tool %q: it is not available in this conversation", shown)),
		IsError: true,
		Err:     fmt.Errorf("calling tool %q: %w", shown, ErrUnknownTool),
	}
}

// errorResult builds the error result the model sees, keeping err for logs.
func errorResult(msg string, err error) Result {
	return Result{Output: errorOutput(msg), IsError: true, Err: err}
}

func errorOutput(msg string) json.RawMessage {
	b, err := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	if err != nil {
		// A string always marshals; this is unreachable but keeps the
		// output valid JSON whatever happens.
		return json.RawMessage(`{"error":"tool failed"}`)
	}
	return b
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
