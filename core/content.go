package core

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/store"
)

// The JSON held in an entry's Content, by kind. These shapes are what
// platforms render and what the prompt is rebuilt from, so they only grow.

// UserContent is a message from a person or another agent.
type UserContent struct {
	Text      string `json:"text"`
	UserID    string `json:"user_id,omitempty"`
	UserName  string `json:"user_name,omitempty"`
	Platform  string `json:"platform,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	// Workspace is the Slack team or Discord guild: with Platform and
	// UserID it names the person (see IdentityOf).
	Workspace string `json:"workspace,omitempty"`
	// PageContext is what the person was looking at in the web console
	// when they sent the message; it reaches the per-turn prompt block of
	// the turn that answers it, not the history.
	PageContext string `json:"page_context,omitempty"`

	// Files are the files shared with the message. They are kept in the
	// log, bytes and all, so that a restart, a retried turn or a fork
	// shows the model the same message.
	Files []UserFile `json:"files,omitempty"`

	// Spoken, when set, says the message was spoken: Text is what the
	// transcriber heard, and the recording is kept among Files.
	Spoken *Spoken `json:"spoken,omitempty"`
}

// Spoken is how a spoken message was heard.
type Spoken struct {
	// Engine is the transcriber: "offline" or "openai:MODEL".
	Engine string `json:"engine"`
	// AudioMs is how long the speech lasted.
	AudioMs int64 `json:"audio_ms"`
	// File names the recording among the message's files; the model is
	// given its transcript, never the file.
	File string `json:"file,omitempty"`
	// Live: heard as it was spoken (the console's microphone, a voice
	// channel), not from a voice note.
	Live bool `json:"live,omitempty"`
	// Agent is the agent whose transcriber heard it.
	Agent string `json:"agent,omitempty"`
}

// modelFiles are the message's files the model is shown: all but the
// spoken message's recording, whose words are the text.
func (c UserContent) modelFiles() []UserFile {
	if c.Spoken == nil || c.Spoken.File == "" {
		return c.Files
	}
	out := make([]UserFile, 0, len(c.Files))
	for _, f := range c.Files {
		if f.Name != c.Spoken.File {
			out = append(out, f)
		}
	}
	return out
}

// UserFile is a file a person shared with a message. With Data it reaches
// the model (an image as an image, a PDF as a document, text as text);
// without, it is listed by name with Note, the reason it was left out.
type UserFile struct {
	Name     string `json:"name"`
	MimeType string `json:"mime_type,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Data     []byte `json:"data,omitempty"` // base64 in JSON
	Note     string `json:"note,omitempty"`
}

// AssistantContent is the agent's text, with the reasoning blocks that
// preceded it when the provider requires them back (Anthropic's signed
// thinking must accompany the tool calls it led to).
type AssistantContent struct {
	Text     string          `json:"text"`
	Agent    string          `json:"agent,omitempty"`
	Thinking []ThinkingBlock `json:"thinking,omitempty"`
	// DMs are the <dm> tags the reply carried, taken out of Text: people
	// never see them, the agent's own history shows them again, and each
	// went to a side thread (see sidethread.go).
	DMs []DM `json:"dms,omitempty"`
	// SeenThrough is the seq up to which the model call that wrote the
	// reply had read the log: entries after it and before the reply, other
	// than the turn's own, landed while the reply was being written and
	// were not seen (see inSeenOrder). 0: not recorded.
	SeenThrough int64 `json:"seen_through,omitempty"`
	// Session is the coding CLI session (Claude Code, Codex) the reply
	// was written in; the agent's next turn resumes it.
	Session *CLISession `json:"cli_session,omitempty"`
	// Buttons go under a message posted without a turn (a reminder's
	// Snooze and Done); never shown to the model.
	Buttons []ActionButton `json:"buttons,omitempty"`
}

// CLISession names a coding CLI's session: its backend and its id.
type CLISession struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	// Totals is the session's usage so far, for a CLI that reports usage
	// per session (see model.Session.Totals).
	Totals *model.Usage `json:"totals,omitempty"`
}

// ThinkingBlock is one block of the model's reasoning as the provider
// returned it; never shown to people.
type ThinkingBlock struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
}

// ToolCallContent is one call the model asked for.
type ToolCallContent struct {
	CallID string          `json:"call_id"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	// Then are the agents queued to answer after the caller's turn
	// (TurnArgs.Then), kept with the call so that a turn that pauses on it
	// (an approval, a frontend tool) still hands over to them when it
	// resumes: the resume is queued by whoever decides, who knows nothing
	// of the queue. Never shown to the model.
	Then []string `json:"then,omitempty"`
}

// Attachment is a file produced by a tool (a chart), kept with its result.
type Attachment struct {
	Name     string `json:"name"`
	MimeType string `json:"mime_type"`
	Data     []byte `json:"data"` // base64 in JSON
	Title    string `json:"title,omitempty"`
	// Caption is a line of Markdown posted with the file.
	Caption string `json:"caption,omitempty"`
	// Chart is a chart image's data, for platforms that draw it natively.
	Chart *cards.Chart `json:"chart,omitempty"`
}

// ToolResultContent is a tool's answer to one call.
type ToolResultContent struct {
	CallID      string          `json:"call_id"`
	Name        string          `json:"name"`
	Output      json.RawMessage `json:"output"`
	IsError     bool            `json:"is_error,omitempty"`
	Attachments []Attachment    `json:"attachments,omitempty"`
	// DecidedBy names the person who answered a question or approval.
	DecidedBy string `json:"decided_by,omitempty"`
}

// CardContent is a structured result with its layout stamped at save time
// (see core/cards); Card holds the stamped card JSON.
type CardContent struct {
	CallID string          `json:"call_id,omitempty"`
	Card   json.RawMessage `json:"card"`
	Text   string          `json:"text,omitempty"` // plain fallback
}

// ActionContent is a button click handed back to the agent.
type ActionContent struct {
	EntryID  string `json:"entry_id,omitempty"` // the card clicked
	ActionID string `json:"action_id"`
	Value    string `json:"value,omitempty"`
	UserID   string `json:"user_id,omitempty"`
	UserName string `json:"user_name,omitempty"`
	Label    string `json:"label,omitempty"`
	// Tool and Args are set for a card's tool action: the turn runs it
	// through the guard as a call of its own.
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	// Values are a form's answers (the button opened a form): a JSON
	// object keyed by input name, typed (numbers, arrays, YYYY-MM-DD).
	Values json.RawMessage `json:"values,omitempty"`
}

// SystemContent is a note from the system.
type SystemContent struct {
	Text string `json:"text"`
	// Notice marks a line for people only ("ran `tool` with …", the guard's
	// notify): delivered like a message, never shown to the model, which
	// has the call and its result already.
	Notice bool `json:"notice,omitempty"`
	// Stop names the turn (its work item) a person stopped with a
	// platform's stop button. The worker running that turn, on any
	// instance, cuts it off when it reads this entry (see Service.Stop).
	// The model sees the line, so it knows its reply was cut short.
	Stop *uuid.UUID `json:"stop,omitempty"`
	// By is the display name of who stopped it (with Stop), so the
	// stopped reply can say so.
	By string `json:"by,omitempty"`
}

// ErrorContent is shown to people and never sent to a model.
type ErrorContent struct {
	Message string `json:"message"`
	// Retryable errors invite the user to send again.
	Retryable bool `json:"retryable,omitempty"`
	// Interim marks a notice that a retry follows; platforms need not show it.
	Interim bool `json:"interim,omitempty"`
}

// SummaryContent condenses the log up to ThroughSeq for the model (see
// summary.go). The model is sent the latest summary in place of every entry
// up to ThroughSeq; the log keeps them all. A summary folds in the one
// before it (Previous), so each covers the whole log from seq 1.
type SummaryContent struct {
	Text string `json:"text"`
	// FromSeq is the first seq this summary read from the log itself; the
	// entries before it came through the Previous summary.
	FromSeq int64 `json:"from_seq"`
	// ThroughSeq is the last seq it covers: the model's context is this
	// summary plus the entries after ThroughSeq.
	ThroughSeq int64 `json:"through_seq"`
	// Previous is the seq of the summary folded in (0: none).
	Previous int64 `json:"previous,omitempty"`
	// Model wrote it ("provider:model").
	Model string `json:"model,omitempty"`
	// Tokens is the estimate of what it replaced (the previous summary and
	// the entries FromSeq..ThroughSeq).
	Tokens int `json:"tokens,omitempty"`
}

// SideThreadEvent says what a side_thread entry marks.
type SideThreadEvent string

const (
	// SideThreadOpened is the marker under the message that opened the
	// side thread; its platform message is edited as the status changes.
	SideThreadOpened SideThreadEvent = "opened"
	// SideThreadResolved posts the resolver's summary back.
	SideThreadResolved SideThreadEvent = "resolved"
	// SideThreadAbandoned says the side thread stopped with no progress.
	SideThreadAbandoned SideThreadEvent = "abandoned"
)

// SideThreadContent is a side_thread entry in a parent conversation.
type SideThreadContent struct {
	SideThreadID uuid.UUID       `json:"side_thread_id"`
	Event        SideThreadEvent `json:"event"`
	Opener       string          `json:"opener"`
	Peer         string          `json:"peer"`
	// ChildID is the side conversation, readable over the API.
	ChildID uuid.UUID `json:"child_id"`
	// Summary is the resolver's, on a resolved entry.
	Summary string `json:"summary,omitempty"`
	// By resolved it (an agent), or "system" for the sweep.
	By string `json:"by,omitempty"`
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("core: marshalling %T: %v", v, err))
	}
	return b
}

// Decode reads an entry's content into v.
func Decode[T any](e *store.Entry) (T, error) {
	var v T
	if err := json.Unmarshal(e.Content, &v); err != nil {
		return v, fmt.Errorf("decoding %s entry %s: %w", e.Kind, e.ID, err)
	}
	return v, nil
}
