// Package bots is the contract between core and the chat platforms. Each
// platform lives in its own package (bots/slack, bots/discord, bots/console)
// and implements Adapter plus whichever optional abilities it has: streaming,
// status, buttons, files. Core asks for an ability with a type assertion and
// falls back when a platform lacks it.
package bots

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/voice"
)

// ErrGone is what a platform answers for a target it can no longer reach
// for good (the app was uninstalled from that workspace): delivery there
// stops instead of being retried.
var ErrGone = errors.New("the platform can no longer reach this workspace")

// ErrRefused is what a platform answers for a message it will never take
// as it is: the app lacks a scope or a permission, is not in the channel,
// the channel is gone or archived, a file is too large or of a refused
// type. Sending it again cannot help, and waiting for it would hold up
// every later message of the conversation: delivery records the entry as
// undeliverable, shows a short notice in its place and goes on. Errors
// that may pass (rate limits, timeouts, a platform's internal errors) are
// not refusals: they are retried.
var ErrRefused = errors.New("the platform refused the message for good")

// RefusedError is an ErrRefused with the reason, in a few words people
// can act on ("the app lacks the files:write scope"). Platforms wrap their
// client's error in it (Refused); delivery reads it with errors.As.
type RefusedError struct {
	// Reason is shown in the notice that stands in for the message.
	Reason string
	Err    error
}

func (e *RefusedError) Error() string { return e.Reason + ": " + e.Err.Error() }

// Unwrap makes a RefusedError match ErrRefused and the platform's error.
func (e *RefusedError) Unwrap() []error { return []error{ErrRefused, e.Err} }

// Refused wraps err as a refusal for reason; a nil err stays nil.
func Refused(reason string, err error) error {
	if err == nil {
		return nil
	}
	return &RefusedError{Reason: reason, Err: err}
}

// Target is where a message goes on a platform.
type Target struct {
	Platform  string
	Workspace string // Slack team, Discord guild
	Channel   string
	Thread    string // Slack thread_ts, Discord thread channel id; "" for none
	// UserID is the person to DM when Channel is empty (reminders, pulses).
	UserID string
}

// MessageRef names a message that was posted, so it can be edited later.
type MessageRef struct {
	Channel string
	ID      string // Slack ts, Discord message id
}

// Identity is the name and icon an agent posts with when several agents share
// one app.
type Identity struct {
	Name    string
	IconURL string
}

// Button is one choice offered under a message.
type Button struct {
	// ActionID and Value come back in the click. ActionID is limited to what
	// both platforms accept (Discord custom_id: 100 characters in all).
	ActionID string
	Value    string
	Label    string
	Style    string // "", "primary", "danger"
}

// File is an attachment, such as a chart rendered on the server.
type File struct {
	Name     string
	MimeType string
	Data     []byte
	Title    string
	// Caption is a line of Markdown shown with the file (a link to where it
	// lives). Platforms post it in the same call as the file, so a retried
	// delivery never finds one without the other.
	Caption string
	// Chart, on a chart's image, is the chart's data: a platform that
	// draws charts natively (Slack's data_visualization block) posts that
	// instead, and the image when it cannot. Data is always the image.
	Chart *cards.Chart
}

// Message is what core asks a platform to show. Text is Markdown as the model
// wrote it; the platform converts it (Slack mrkdwn) and splits it within its
// limits. Card, when set, is a stamped card (core/cards) that the platform
// renders natively; Text is then the plain fallback.
type Message struct {
	Text     string
	Buttons  []Button
	Files    []File
	Card     *Card
	Identity *Identity
	// Ephemeral, with UserID on the target, shows the message to one person.
	Ephemeral bool
	// Feedback asks people to rate the message (an agent's final reply):
	// platforms that can show rating buttons do (Slack's feedback_buttons),
	// and a click comes back as a FeedbackFunc call.
	Feedback bool
	// Markdown says Text is standard Markdown a model wrote: platforms
	// that show Markdown as written do (Slack's markdown block); the others
	// convert it as they convert any text.
	Markdown bool
	// Voice is the reply spoken, on an agent's answer to a voice note
	// when the agent answers with its voice too (voice.reply_with_voice):
	// Discord posts it as a voice message after the text, Slack uploads
	// it as an audio file. A platform that cannot post it logs why and
	// posts the rest: the text is the answer.
	Voice *voice.Audio
	// Key is the idempotency key of the post (the entry id it delivers).
	// Platforms that can make a post idempotent use it (Discord: a nonce
	// with enforce_nonce) or tag the message with it so it can be found
	// again (Slack: message metadata, see Finder).
	Key string
}

// Card is a stamped card to render natively (Block Kit, embeds). EntryID is
// the card entry's id: buttons carry it (cards.ActionID) so a click finds the
// card and its declared action.
type Card struct {
	EntryID uuid.UUID
	Stamped *cards.Stamped
}

// FormOpener is a platform that opens a card's form (cards.Form) in a
// modal window when its button is clicked (Slack's views.open, Discord's
// MODAL response) and hands the submission to core.Act with the answers
// in Action.Values. OpensForms reports whether it does. To every adapter
// without it, deliver sends the card with each form asked in text
// instead (cards.Stamped.WithoutForms), so the person answers in a
// message.
type FormOpener interface {
	OpensForms() bool
}

// CardFor is the card as the adapter ad shows it: itself on a platform
// that opens forms, else with its forms asked in text.
func CardFor(ad any, st *cards.Stamped) *cards.Stamped {
	if fo, ok := ad.(FormOpener); ok && fo.OpensForms() {
		return st
	}
	return st.WithoutForms()
}

// Adapter is what every platform implements.
type Adapter interface {
	// Name is the platform name used in bindings ("slack", "discord").
	Name() string
	Start(ctx context.Context) error
	Stop()
	// Post posts a new message and returns references to every message it
	// made (a long text may be split into several).
	Post(ctx context.Context, to Target, m *Message) ([]MessageRef, error)
}

// Editor can replace a posted message.
type Editor interface {
	Update(ctx context.Context, ref MessageRef, m *Message) error
}

// ThreadOpener opens a thread of its own on a message already posted (a
// Discord thread started from the message) and returns the target that
// posts into it. Opening it again returns the same thread.
type ThreadOpener interface {
	OpenThread(ctx context.Context, to Target, ref MessageRef, name string) (Target, error)
}

// Streamer shows a reply as it is written.
type Streamer interface {
	// StartStream opens an in-progress reply in the target thread.
	StartStream(ctx context.Context, to Target, id *Identity) (Stream, error)
}

// Stream is one in-progress reply.
type Stream interface {
	// Append adds text as the model writes it. Platforms throttle as they need.
	Append(ctx context.Context, delta string) error
	// Reset starts the reply over: the model call is being retried, and what
	// was shown so far is replaced by what comes next, in the same message
	// where the platform allows it. It never appends to the old text.
	Reset(ctx context.Context) error
	// Refs lists the platform messages the stream has made so far, so the
	// delivery can record them and a later process can take them over.
	Refs() []MessageRef
	// Finish replaces the in-progress reply with the final message and
	// returns the messages it now consists of. A closed live stream is
	// closed on the platform too (nothing is left "streaming").
	Finish(ctx context.Context, final *Message) ([]MessageRef, error)
}

// StreamResumer takes over the messages of a live stream that another
// attempt or process opened (recorded with Stream.Refs): the returned stream
// edits them in place, and Finish replaces them with the final message.
type StreamResumer interface {
	ResumeStream(ctx context.Context, to Target, refs []MessageRef, id *Identity) (Stream, error)
}

// StreamKeyer is a Stream whose messages can be made idempotent: given the
// same key, a stream started again (by a process that took over a dead
// one's stream before its first message was recorded) gets the messages
// the dead one made back instead of new ones (Discord: nonces with
// enforce_nonce).
type StreamKeyer interface {
	SetKey(key string)
}

// StreamFinder finds the messages of a live stream whose ids were never
// recorded (the process died between the platform creating the message and
// the delivery recording it): the bot's messages in the target's thread,
// made since the stream was about to start, that are not tagged posts.
type StreamFinder interface {
	FindStream(ctx context.Context, to Target, since time.Time) ([]MessageRef, error)
}

// Finder looks for the messages a post with an idempotency key made since a
// time, for a platform whose posts are not idempotent by themselves (Slack).
// It returns no refs, and no error, when the post never arrived.
type Finder interface {
	FindPosted(ctx context.Context, to Target, key string, since time.Time) ([]MessageRef, error)
}

// ThreadStarter is a platform where a posted message starts a thread that
// replies join (Slack: the thread is the message's ts). A scheduled run's
// place becomes the thread under its first post, so that a reply there
// reaches the run's conversation without a mention.
type ThreadStarter interface {
	ThreadOf(ref MessageRef) (channel, thread string)
}

// DoneMarker marks the message a turn answered once the turn's reply is
// delivered (the acknowledgement reaction becomes a done reaction). It is
// called again when a turn retried after a crash ends, so it must be
// idempotent.
type DoneMarker interface {
	MarkDone(ctx context.Context, to Target, messageID string) error
}

// StatusSetter shows what the agent is doing (Slack's assistant status,
// Discord's typing indicator). An empty status clears it.
type StatusSetter interface {
	SetStatus(ctx context.Context, to Target, status string) error
}

// Task is a step of the agent's work shown beside a streamed reply: a tool
// call, with a short title, where it stands and what it was asked and
// answered. A later Task with the same ID replaces the earlier one.
type Task struct {
	ID      string
	Title   string
	Status  string // "in_progress", "complete" or "error"
	Details string
	Output  string
}

// TaskStreamer is a Streamer whose streams can show tasks (Slack's
// task_update chunks). ShowsTasks reports whether a stream to the target
// would: deliver opens a stream for a task only then.
type TaskStreamer interface {
	Streamer
	ShowsTasks(to Target) bool
}

// TaskStream is a Stream that shows tasks in order with its text.
type TaskStream interface {
	Task(ctx context.Context, t Task) error
}

// RunView is a run as a platform shows its progress: its steps with where
// each stands. Status is the run's (running, done, failed, cancelled);
// a step's is pending, working, done, failed or cancelled.
type RunView struct {
	ID     string
	Title  string // the goal, or the run's short id
	Status string
	Steps  []RunStepView
	// Text is the whole run as text, for platforms that show it as one
	// message.
	Text string
}

// RunStepView is one step of a RunView.
type RunStepView struct {
	Key    string
	Title  string
	Agent  string
	Status string
	Detail string // tokens and cost once done, the error once failed
}

// Final reports whether the run has ended.
func (v *RunView) Final() bool { return v.Status != "running" }

// RunShower shows runs' progress in one message per run and target that
// it updates as the steps move (Slack: a stream of plan_update and
// task_update chunks). A platform without it gets a text message edited
// in place. Which message shows the run is read from and written to rec,
// never kept in the process: after a restart, or on another instance, the
// next change edits the same message.
type RunShower interface {
	ShowRun(ctx context.Context, to Target, v *RunView, rec RunMessages) error
}

// RunMessage is the message that shows a run in one place, as a
// RunShower records it.
type RunMessage struct {
	// Ref names the message; zero while its first post is under way.
	Ref MessageRef
	// Kind is the platform's word for how the message shows the run
	// (Slack: "stream" or "text").
	Kind string
	// Ended says the message shows how the run ended (a Slack stream is
	// stopped).
	Ended bool
	// Sent is the platform's note of what it last sent, a JSON object (the
	// chunk last sent per step), so a change sends only what moved.
	Sent json.RawMessage
	// Since is when the record last changed: for a post under way, when
	// it was about to be made.
	Since time.Time
}

// Posting reports a record whose first post is under way, or whose
// process died between the platform call and recording its answer.
func (m *RunMessage) Posting() bool { return m.Ref.ID == "" }

// RunMessages keeps which message shows one run in one place, across
// restarts and instances (deliver keeps it in the store). A RunShower
// loads it first; before it asks the platform for a message it claims
// the record, which only one process can do, and it saves the message as
// soon as the platform answers. The window in which a crash loses a
// posted message is that one save.
type RunMessages interface {
	// Load returns the record; nil when the run was never shown here.
	// While the record is an intent another process made moments ago (its
	// post under way), Load waits for its message, or until the intent is
	// older than a post takes (its process died).
	Load(ctx context.Context) (*RunMessage, error)
	// Claim records the intent to post a message showing the run: the
	// first one; a new one in place of the one Load returned (a retried
	// run's); or, for an intent Load returned (older than a post takes:
	// its process died before recording the message), that intent taken
	// over. It returns false when another process made or changed the
	// record first: that one shows the run, and the caller must not post
	// (its work is retried).
	Claim(ctx context.Context, kind string) (*RunMessage, bool, error)
	// Save records m as what shows the run, over the record last loaded,
	// claimed or saved; an error when another process changed it since.
	Save(ctx context.Context, m *RunMessage) error
}
