package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/cards"
)

// Inbound is one message from a platform, normalised. Every adapter turns its
// platform's event into exactly this before handing it to Submit; a message
// from an agent takes the same path.
type Inbound struct {
	Platform  string // "slack", "discord", "api", "console", "scheduler"
	EventID   string // the platform's id for dedupe (Slack event_id, Discord message id)
	Workspace string // Slack team id, Discord guild id ("" for a Discord DM)
	Channel   string
	// Thread is the thread the message belongs to: the Slack thread_ts (the
	// message's own ts when it starts one), the Discord thread channel id, or ""
	// where the platform has no thread.
	Thread    string
	MessageID string // the platform's id of this message (Slack ts, Discord message id)
	UserID    string
	// UserWorkspace is the sender's own platform workspace when the
	// platform says it (the Slack event's user_team): in a channel shared
	// between Slack teams it differs from Workspace, the channel's.
	UserWorkspace string `json:",omitempty"`
	UserName      string
	Text          string
	IsDM          bool
	Mentioned     bool // the bot was mentioned by name
	// Files are the files shared with the message, read by the platform
	// adapter within its limits (see UserFile).
	Files []UserFile `json:",omitempty"`
	// Spoken, when set, says Text was spoken and heard (see
	// Service.TranscribeFor and Heard.Apply); its recording is among Files.
	Spoken *Spoken `json:",omitempty"`
	Agent  string  // the agent addressed, when the platform knows ("" for the default)
	At     time.Time
	// TimeZone is the person's time zone, filled in by core from their
	// profile before a command runs ("" when unknown).
	TimeZone string `json:",omitempty"`
	// Deferred is the adapter's own part of an event taken by Accept, left
	// for after the ack (Slack's shared files to download); its
	// InboundFinisher reads it. The log never keeps it.
	Deferred json.RawMessage `json:",omitempty"`
}

// SubmitResult says what Submit did with an Inbound.
type SubmitResult struct {
	ConversationID uuid.UUID
	Seq            int64
	// Accepted: Accept stored the event; the rest of Submit runs in its
	// work item (RunInbound), after the ack.
	Accepted bool
	// Duplicate: the event id was seen before; nothing was stored.
	Duplicate bool
	// Ignored: the message is not for the bot (not mentioned, not in a thread
	// it is engaged in); nothing was stored.
	Ignored bool
	// Refused: the access policy keeps the sender from the agents, or the
	// agent is pinned away from this workspace; nothing was stored. Notice, when not empty, is the one reply the platform
	// sends them (privately where it can).
	Refused bool
	Notice  string
}

// Action is a button click or a choice made on a platform, handed to core.
type Action struct {
	Platform       string
	EventID        string // for dedupe
	ConversationID uuid.UUID
	// CallID is the pending tool call the click answers (ask_user, approval),
	// or "" for a card's signal button.
	CallID   string
	ActionID string // the button's declared action
	Value    string // the choice made
	UserID   string
	UserName string
	// Workspace is the clicker's own platform workspace (their Slack team,
	// which differs from the channel's in a shared channel); "" for the
	// conversation's.
	Workspace string
	At        time.Time
	// Operator: the decision comes from the service's operator (the API's
	// operator token), who may decide any approval.
	Operator bool
	// Values are a form's answers as the platform sent them, keyed by
	// input name (several for a multi-select): set when a card's form is
	// submitted, nil when its button was clicked to open it.
	Values map[string][]string
}

// ActionResult says what happened to an Action.
type ActionResult struct {
	// Refused is set when the user may not decide; Reason says why, for an
	// ephemeral reply.
	Refused bool
	Reason  string
	// Duplicate: already decided (by this click or another).
	Duplicate bool
	// Settled, on a Duplicate, is what settled the buttons before this
	// click (the choice made first, or the request's expiry), for an
	// ephemeral answer to the clicker. Nil when this very click was seen
	// before (a platform's retry).
	Settled *Settled
	// Form, on a click of a card button that opens a form, is the form
	// to show, FormTitle its heading; nothing was recorded.
	Form      *cards.Form
	FormTitle string
	// Invalid, on a form's submission, says what is wrong with its
	// answers, keyed by input name, for the person to fix (Form is set
	// again); nothing was recorded.
	Invalid map[string]string
	// Outcome, when set, is what the click did, shown in place of the
	// buttons instead of the button's label ("Snoozed until 15:30").
	Outcome string
}

// Settled is how a message's buttons were settled before a click.
type Settled struct {
	// Expired: nobody chose before the request expired at At.
	Expired bool
	// By is who chose (a name, else a platform user id); ByUserID their
	// platform user id on Platform when known.
	By       string
	ByUserID string
	Platform string
	// Choice is what was chosen, as its button read.
	Choice string
	At     time.Time
}

// Submitter is the inbound half of core that adapters call.
type Submitter interface {
	Submit(ctx context.Context, in *Inbound) (*SubmitResult, error)
	Act(ctx context.Context, a *Action) (*ActionResult, error)
}
