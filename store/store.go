package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
)

// Sentinel errors. Drivers map their database's errors to these at their
// boundary; compare with errors.Is.
var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a uniqueness or state rule refused the write.
	ErrConflict = errors.New("store: conflict")
	// ErrLeaseLost: the caller no longer holds the lease it acted under
	// (it expired and was reclaimed, or was never held).
	ErrLeaseLost = errors.New("store: lease lost")
	// ErrInvalid: the parameters are malformed; the message says which.
	ErrInvalid = errors.New("store: invalid parameters")
	// ErrTransient: the database could not do the work right now (the
	// connection was lost, the server is restarting, a lock or a
	// serialization conflict got in the way) and nothing of it took effect,
	// so the same call may succeed later. Drivers retry these themselves for
	// a while (see each driver's RetryFor option); one reaches a caller only
	// when the fault outlasted that. Test with IsTransient.
	ErrTransient = errors.New("store: transient failure")
	// ErrOutcomeUnknown: a commit was sent but its answer was lost, and the
	// driver could not find out whether it took effect. The call is not
	// retried, because running it again could do it twice.
	ErrOutcomeUnknown = errors.New("store: commit outcome unknown")
)

// IsTransient reports whether err is a fault that running the same call
// again may get past: one a driver marked with ErrTransient.
func IsTransient(err error) bool { return errors.Is(err, ErrTransient) }

// EntryKind names what an entry in the log holds.
type EntryKind string

const (
	EntryUser       EntryKind = "user"        // a message from a person (or another agent)
	EntryAssistant  EntryKind = "assistant"   // the agent's text
	EntryToolCall   EntryKind = "tool_call"   // the model asked for a tool
	EntryToolResult EntryKind = "tool_result" // a tool's answer
	EntryCard       EntryKind = "card"        // a structured result, layout stamped
	EntryAction     EntryKind = "action"      // a button click handed back to the agent
	EntrySystem     EntryKind = "system"      // a system note
	EntryError      EntryKind = "error"       // shown, never sent to a model; seq is NULL
	// EntrySummary condenses the log up to a seq for the model (see
	// SummaryQueries); it has a seq like every entry but errors, so it
	// forks, streams and time-travels with the rest of the log.
	EntrySummary EntryKind = "summary"
	// EntrySideThread marks a side thread in its parent conversation: the
	// marker people see under the message that opened it, and the summary
	// posted back when it ends (see SideThreadQueries).
	EntrySideThread EntryKind = "side_thread"
	// EntryFeedback is a person's rating of a reply (feedback buttons):
	// kept for the record and counted, never sent to a model.
	EntryFeedback EntryKind = "feedback"
	// EntryDeleted marks that a person deleted a message on the platform;
	// the message's entry stays in the log.
	EntryDeleted EntryKind = "deleted"
)

// Valid reports whether k is one of the known kinds. The store's rules
// check it on every append; the database only refuses an empty kind, so a
// new kind is a new constant here and no migration.
func (k EntryKind) Valid() bool {
	switch k {
	case EntryUser, EntryAssistant, EntryToolCall, EntryToolResult, EntryCard,
		EntryAction, EntrySystem, EntryError, EntrySummary, EntrySideThread, EntryFeedback,
		EntryDeleted:
		return true
	}
	return false
}

// ConversationStatus is the coarse state of a conversation's turn.
type ConversationStatus string

const (
	ConversationIdle    ConversationStatus = "idle"    // no turn in progress
	ConversationRunning ConversationStatus = "running" // a worker holds the lease
	ConversationPaused  ConversationStatus = "paused"  // waiting for tool results from a person or client
)

// Conversation is one thread of the log: a Slack thread, a DM, a Discord
// channel, a scheduled run. Forks point back at their parent.
type Conversation struct {
	ID         uuid.UUID
	ParentID   *uuid.UUID // nil for a root
	RootID     uuid.UUID  // itself for a root
	ForkSeq    *int64     // the seq at which this fork diverged from its parent
	ChildCount int
	AgentID    *uuid.UUID
	// WorkspaceID is the team workspace the conversation belongs to; nil
	// for none. Set once (ConversationWorkspaceSet) and never moved, so a
	// turn reads it with the conversation instead of on its own.
	WorkspaceID *uuid.UUID
	Title       string
	// TitleAuto is whether Title was taken automatically, from a person's
	// first message by an append (EntryAppendParams.Title); false for a
	// title set by a person (a rename), given at creation, or none. Only an
	// automatic title gives way to a fork's own (EntryAppendParams.Retitle).
	TitleAuto bool
	Provider  string
	Model     string
	Thinking  string
	Status    ConversationStatus
	// Metadata is free-form JSON owned by the caller (platform binding hints and
	// the like). Never nil when read back: at least "{}".
	Metadata json.RawMessage

	// The lease of the turn running on this conversation.
	LeaseOwner     string // empty when free
	LeaseExpiresAt *time.Time
	HeartbeatAt    *time.Time
	// TurnAttempts counts automatic retries of the current turn; reset when a
	// turn finishes.
	TurnAttempts int

	LastSeq int64 // the highest seq in the log; 0 when empty
	// ContentRev counts the rewrites of its entries' stored content in
	// place (PersonForget); appends leave it. A reader that keeps entries
	// it read (a stream's cache of encoded frames) keeps them only while
	// the conversation's ContentRev is the one it read them at.
	ContentRev int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// LeaseHeld reports whether a live lease is held on the conversation at now.
func (c *Conversation) LeaseHeld(now time.Time) bool {
	return c.LeaseOwner != "" && c.LeaseExpiresAt != nil && c.LeaseExpiresAt.After(now)
}

// Entry is one immutable row of the log.
type Entry struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	// Seq is the log index and the stream cursor, from 1. Nil for error entries.
	Seq *int64
	// AfterSeq is the highest seq of the log when the entry was written. For an
	// error entry it places the error in the display order.
	AfterSeq  int64
	Kind      EntryKind
	Author    Author          // who wrote it: a person, an agent, the system
	Content   json.RawMessage // kind-specific JSON, never nil
	TurnID    *uuid.UUID      // the work item that produced it, when a turn did
	CreatedAt time.Time
}

// SeqValue returns the seq, or 0 for an entry without one.
func (e *Entry) SeqValue() int64 {
	if e.Seq == nil {
		return 0
	}
	return *e.Seq
}

// WorkState is the lifecycle state of a work item.
type WorkState string

const (
	WorkAvailable WorkState = "available"
	WorkRunning   WorkState = "running"
	WorkDone      WorkState = "done"
	WorkFailed    WorkState = "failed"
	WorkCancelled WorkState = "cancelled" // final; nothing cancels items today, but the schema and Sweep know it
)

// WorkItem is a durable unit of work: a turn, a delivery, a scheduled fire.
type WorkItem struct {
	ID             uuid.UUID
	Kind           string
	Payload        json.RawMessage // never nil: at least "{}"
	ConversationID *uuid.UUID
	AgentID        *uuid.UUID
	RunAt          time.Time
	Priority       int // higher runs first
	Attempts       int // claims so far
	MaxAttempts    int
	UniqueKey      *string
	// OrderingKey, when set, runs the item only after every item of the
	// same key inserted before it has finished, and never beside another
	// item of that key (see WorkEnqueueParams.OrderingKey).
	OrderingKey    *string
	State          WorkState
	ClaimedBy      string
	LeaseExpiresAt *time.Time
	LastError      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	FinishedAt     *time.Time
}

// Agent is a configured agent, upserted from the config file at start.
type Agent struct {
	ID        uuid.UUID
	Name      string          // unique
	Config    json.RawMessage // the agent's declaration as loaded
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Usage records what one model call cost.
type Usage struct {
	ID              uuid.UUID
	ConversationID  uuid.UUID
	TurnID          *uuid.UUID
	AgentID         *uuid.UUID
	Provider        string
	Model           string
	InputTokens     int64
	OutputTokens    int64
	CachedTokens    int64 // read from the provider's prompt cache
	ReasoningTokens int64
	CostMicroUSD    int64 // cost in millionths of a US dollar
	CreatedAt       time.Time
	WorkspaceID     *uuid.UUID // stamped from the conversation when recorded
	// CacheWriteTokens were written to the prompt cache (Anthropic bills
	// them apart); InputTokens, CachedTokens and these make the prompt.
	CacheWriteTokens int64
	// Kind is what was used: UsageModel (a model call, priced by tokens;
	// "" reads as it), UsageTranscription (priced by AudioMs) or
	// UsageSpeech (priced by SpeechChars).
	Kind string
	// AudioMs is the audio a transcription heard, in milliseconds.
	AudioMs int64
	// SpeechChars are the characters a speech spoke.
	SpeechChars int64
}

// Usage kinds.
const (
	UsageModel         = "model"
	UsageTranscription = "transcription"
	UsageSpeech        = "speech"
)

// Binding ties a conversation to a place on a platform (a Slack thread, a
// Discord channel or thread) and tracks what has been delivered there.
type Binding struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	Place          Place
	// DeliveredSeq is the highest seq delivered to the platform.
	DeliveredSeq int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Posted records the platform messages an entry became, so an entry is posted
// once and later edits reach the same message.
type Posted struct {
	BindingID uuid.UUID
	EntryID   uuid.UUID
	// MessageIDs are the platform's ids in order (a long reply may be split).
	MessageIDs []string
	// Pending marks a post intent: it is recorded before the platform is
	// called, and cleared with the message ids after. A pending record found
	// later means the post may or may not have reached the platform: the
	// delivery looks for it (or posts with the same idempotency key) before
	// posting again.
	Pending bool
	// Undeliverable is the reason the platform refused the entry for good
	// (bots.RefusedError), "" for an entry delivered as itself. The entry
	// is then passed: MessageIDs are the notice shown in its place, and a
	// Pending record is a notice being posted.
	Undeliverable string
	CreatedAt     time.Time
}

// LiveStream is the in-progress reply on a binding: the platform messages a
// live stream has made so far. It is recorded as they are made, so a retried
// model call, a retried turn or a recovery after a crash takes over or
// finishes the same messages instead of leaving a cut one behind.
type LiveStream struct {
	BindingID  uuid.UUID
	TurnID     *uuid.UUID
	MessageIDs []string // "channel/id", in order
	UpdatedAt  time.Time
}

// ApprovalKind says what a person is asked for.
type ApprovalKind string

const (
	ApprovalConfirm  ApprovalKind = "confirm"  // run a risky tool or not
	ApprovalQuestion ApprovalKind = "question" // ask_user: pick a choice
)

// ApprovalStatus is the lifecycle of a request to a person.
type ApprovalStatus string

const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved" // for a question: answered
	ApprovalDenied   ApprovalStatus = "denied"
	ApprovalExpired  ApprovalStatus = "expired"
)

// Approval is a paused tool call waiting for a person's decision.
type Approval struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	CallID         string // the tool call it answers
	Tool           string
	Kind           ApprovalKind
	Risk           string
	Request        json.RawMessage // what is shown: the question, the choices, the arguments
	// Deciders may decide; empty means anyone in the conversation.
	Deciders  []string
	Status    ApprovalStatus
	Decision  json.RawMessage // the choice made, when decided
	DecidedBy string
	ExpiresAt time.Time
	DecidedAt *time.Time
	CreatedAt time.Time
}

// ---- parameters ----

// ConversationCreateParams creates a root conversation.
type ConversationCreateParams struct {
	ID       uuid.UUID // optional; a new UUID when zero
	AgentID  *uuid.UUID
	Title    string
	Provider string
	Model    string
	Thinking string
	Metadata json.RawMessage // optional; "{}" when nil
	Now      time.Time
}

// EntryAppendParams appends one entry.
type EntryAppendParams struct {
	ConversationID uuid.UUID
	// ExpectSeq, when set, is the seq the caller believes is next. If that seq
	// is already taken the append forks: a new conversation is seeded with the
	// entries before ExpectSeq and the entry lands there at ExpectSeq. An edit
	// of an earlier message is an append with ExpectSeq at that message's seq.
	// When nil the entry takes the next seq. Ignored for error entries.
	ExpectSeq *int64
	Kind      EntryKind
	Author    Author
	Content   json.RawMessage
	TurnID    *uuid.UUID
	// LeaseOwner, when set, fences the append: it is refused with
	// ErrLeaseLost unless LeaseOwner holds the conversation's lease, unexpired
	// at Now. The check and the append are one statement or transaction, so a
	// turn whose lease was taken over can never write after the new owner.
	LeaseOwner string
	// Title, when set, becomes the title of the conversation the entry
	// lands in if that has none yet (a title given at creation or by a
	// rename stays), in the same write as the append, and is then
	// automatic (Conversation.TitleAuto). Ignored for error entries.
	Title string
	// Retitle, for an edit of the conversation's first message that changed
	// its text: when the append forks and the parent's title is automatic,
	// the fork takes Title (automatic too) in place of the parent's. Without
	// it, or when the parent's title is a rename's or was given at creation,
	// the fork keeps the parent's title (and its TitleAuto).
	Retitle bool
	Now     time.Time
}

// EntryAppendResult says where an append landed.
type EntryAppendResult struct {
	Entry *Entry
	// ConversationID is where the entry landed: the requested conversation, or
	// the new fork when Forked.
	ConversationID uuid.UUID
	Forked         bool
}

// EntryListInChannelParams names a channel (Place's platform, workspace
// and channel; its thread is ignored) and how many messages to read.
type EntryListInChannelParams struct {
	Place Place
	Limit int // at least 1
}

// EntryRow is an entry as EntryScan hands it over: the columns a display
// needs, as the driver read them. Its byte slices are the driver's and
// valid only during the call that receives the row; copy what is kept.
type EntryRow struct {
	ID       uuid.UUID
	Seq      int64 // 0 for an error entry, which has no seq
	AfterSeq int64 // the seq an error entry follows
	Kind     []byte
	Author   []byte
	// Content is the stored JSON as it is: valid JSON, checked on append,
	// but not re-encoded (its whitespace and escaping are whatever wrote
	// it).
	Content   []byte
	CreatedAt time.Time
}

// EntryListParams reads entries in seq order.
type EntryListParams struct {
	ConversationID uuid.UUID
	AfterSeq       int64 // exclusive cursor; 0 reads from the start
	UpToSeq        int64 // inclusive; 0 means no upper bound (time travel when set)
	Limit          int   // 0 means no limit
	// WithErrors includes error entries (seq NULL) for display: those whose
	// AfterSeq is >= the AfterSeq cursor and, when UpToSeq is set, <= UpToSeq.
	// An error sorts after the entry it followed. Never set this for the read
	// that builds a model's context.
	WithErrors bool
}

// ConversationListExpiredLeasesParams lists conversations whose lease
// expired before Now.
type ConversationListExpiredLeasesParams struct {
	Now   time.Time
	Limit int // 0 means 100
}

// WorkEnqueueParams adds a work item.
type WorkEnqueueParams struct {
	Kind           string
	Payload        json.RawMessage // optional; "{}" when nil
	ConversationID *uuid.UUID
	AgentID        *uuid.UUID
	RunAt          time.Time // zero means Now
	Priority       int
	MaxAttempts    int     // 0 means 3
	UniqueKey      *string // when set, a second enqueue with the same key returns the first item
	// OrderingKey serialises the items that share it, across instances, as
	// a conversation does its own: WorkClaim hands out an item of a key only
	// while no other item of that key runs and every one inserted before it
	// has finished (done, failed or cancelled; one waiting for its retry
	// still holds the rest back). Insertion order is the order of the
	// inserts on SQLite (one writer) and Now, then the time-ordered id, on
	// Postgres: an item enqueued after another committed comes after it.
	// For what has no conversation yet, such as an inbound event of a
	// thread that is bound only when it runs. nil: no such rule.
	OrderingKey *string
	Now         time.Time
}

// WorkEnqueueResult is the item and whether this call inserted it.
type WorkEnqueueResult struct {
	Item     *WorkItem
	Inserted bool // false when UniqueKey matched an existing item
}

// WorkClaimParams claims up to Limit runnable items for Worker.
type WorkClaimParams struct {
	Worker   string
	Kinds    []string // empty means any kind
	Limit    int
	LeaseTTL time.Duration
	Now      time.Time
	// AvailableOnly claims only available items, from conversations no
	// lease is held on: running items whose lease expired are neither taken
	// over nor failed (nor is an available item of their conversation
	// handed out before them). A busy worker's claims set it, and one claim
	// in a while leaves it unset (core.Worker), so the hot claim does not
	// read the running items every time. false: the whole claim.
	AvailableOnly bool
}

// WorkLeaseParams identifies a claimed item and its holder.
type WorkLeaseParams struct {
	ID       uuid.UUID
	Worker   string
	LeaseTTL time.Duration // for heartbeat
	Now      time.Time
}

// WorkCompleteManyParams completes several items held by one worker at
// once: the batch completer's flush.
type WorkCompleteManyParams struct {
	IDs    []uuid.UUID
	Worker string
	Now    time.Time
}

// WorkReclaimParams hands back what an instance's previous run held.
type WorkReclaimParams struct {
	Worker string // the instance id the previous run claimed under
	Now    time.Time
}

// WorkFailParams records a failed attempt.
type WorkFailParams struct {
	ID     uuid.UUID
	Worker string
	Error  string
	// RetryAt is when the item may run again. Ignored once attempts reach
	// MaxAttempts: the item is then failed for good.
	RetryAt time.Time
	Now     time.Time
}

// WorkListParams lists work items for inspection.
type WorkListParams struct {
	States         []WorkState // empty means all
	Kind           string
	ConversationID *uuid.UUID
	Limit          int
}

// PruneParams deletes rows that are no longer needed: those older than
// Before, at most Limit of them.
type PruneParams struct {
	Before time.Time // required
	Limit  int       // 0 means 1000
}

// SweepParams says what Sweep deletes.
type SweepParams struct {
	Now time.Time
	// WorkRetention is how long finished work items are kept; zero means
	// DefaultWorkRetention.
	WorkRetention time.Duration
}

// SweepResult counts what Sweep deleted.
type SweepResult struct {
	Inbound int // platform event ids past InboundRetention
	Work    int // finished work items past WorkRetention
	Leases  int // named and instance leases expired for longer than LeaseRetention
	// LinkCodes are !link codes past their expiry (used or not).
	LinkCodes int
}

// WorkPruneParams deletes finished work items.
type WorkPruneParams struct {
	// FinishedBefore: done, failed and cancelled items that finished before
	// it are deleted, those with a UniqueKey too. Required. A key is spent
	// once its item finished and the cutoff is past: every key names one
	// occurrence (a schedule's fire time, an iteration, an approval), and
	// nothing enqueues an occurrence of the past again, so the cutoff need
	// only be later than any duplicate enqueue could arrive.
	FinishedBefore time.Time
	// Limit bounds the rows deleted by one call; 0 means 1000.
	Limit int
}

// ToolExecutionState is where a server tool call's run stands.
type ToolExecutionState string

const (
	// ToolExecuting: the handler was started and has not been seen to end.
	// Found on a call without a result, it means the process died (or the
	// turn was cut off) while the tool ran: it may or may not have finished.
	ToolExecuting ToolExecutionState = "executing"
	// ToolFinished: the handler returned (its result follows in the log, or
	// it paused for a person or a client).
	ToolFinished ToolExecutionState = "finished"
	// ToolInterrupted: the run was cut off (a crash, a stop) before its
	// result was recorded; a later attempt recorded it as interrupted and
	// never ran it again.
	ToolInterrupted ToolExecutionState = "interrupted"
)

// ToolExecution is the durable marker of one tool call's run: written before
// the handler starts, so that no call is ever started twice.
type ToolExecution struct {
	ConversationID uuid.UUID
	CallID         string
	State          ToolExecutionState
	StartedAt      time.Time
	FinishedAt     *time.Time
}

// ToolExecutionStartParams marks a call as executing.
type ToolExecutionStartParams struct {
	ConversationID uuid.UUID
	CallID         string
	// LeaseOwner, when set, fences the start like EntryAppendParams.LeaseOwner:
	// ErrLeaseLost unless LeaseOwner holds the conversation's live lease.
	LeaseOwner string
	Now        time.Time
}

// ToolExecutionStartResult is the call's marker and whether this call
// created it. Started false means an earlier run already started the call.
type ToolExecutionStartResult struct {
	Execution *ToolExecution
	Started   bool
}

// ToolExecutionFinishParams ends a started call's run.
type ToolExecutionFinishParams struct {
	ConversationID uuid.UUID
	CallID         string
	// State is how the run ended: ToolFinished (the default when empty) or
	// ToolInterrupted.
	State ToolExecutionState
	Now   time.Time
}

// ToolExecutionGetParams names one call's marker.
type ToolExecutionGetParams struct {
	ConversationID uuid.UUID
	CallID         string
}

// ConversationLeaseParams acts on a conversation's lease outside the queue.
type ConversationLeaseParams struct {
	ConversationID uuid.UUID
	Owner          string
	LeaseTTL       time.Duration
	Now            time.Time
}

// ConversationStatusParams changes the coarse state (pause, idle) and the
// turn attempt count.
type ConversationStatusParams struct {
	ConversationID uuid.UUID
	Status         ConversationStatus
	// TurnAttempts, when set, replaces the conversation's turn attempt count.
	TurnAttempts *int
	Now          time.Time
}

// InboundRecordParams records a platform event id.
type InboundRecordParams struct {
	Platform string
	EventID  string
	Now      time.Time
}

// AgentUpsertParams inserts or updates an agent by name.
type AgentUpsertParams struct {
	Name   string
	Config json.RawMessage
	Now    time.Time
}

// BindingEnsureParams finds the binding for a place, creating it (and a new
// conversation with Conversation's fields) when absent.
type BindingEnsureParams struct {
	Place        Place
	Conversation ConversationCreateParams // used only when creating
	Now          time.Time
}

// BindingFindParams looks a binding up by its place.
type BindingFindParams struct {
	Place Place
}

// PostedGetParams names what an entry became on a binding.
type PostedGetParams struct {
	BindingID uuid.UUID
	EntryID   uuid.UUID
}

// BindingEnsureResult is the binding and whether this call created it.
type BindingEnsureResult struct {
	Binding *Binding
	Created bool
}

// BindingAdvanceParams moves the delivered cursor forward (never back).
type BindingAdvanceParams struct {
	ID           uuid.UUID
	DeliveredSeq int64
	Now          time.Time
}

// ApprovalCreateParams records a request to a person.
type ApprovalCreateParams struct {
	ConversationID uuid.UUID
	CallID         string
	Tool           string
	Kind           ApprovalKind
	Risk           string
	Request        json.RawMessage
	Deciders       []string
	ExpiresAt      time.Time
	Now            time.Time
}

// ApprovalFindByCallParams names the tool call an approval answers.
type ApprovalFindByCallParams struct {
	ConversationID uuid.UUID
	CallID         string
}

// ApprovalExpireParams expires pending approvals whose expiry is before Now.
type ApprovalExpireParams struct {
	Now   time.Time
	Limit int // 0 means 100
}

// ApprovalDecideParams decides a pending approval. It succeeds only while the
// approval is pending and not expired at Now: a second decision gets
// ErrConflict, and so does one after expiry.
type ApprovalDecideParams struct {
	ID        uuid.UUID
	Status    ApprovalStatus // approved or denied
	Decision  json.RawMessage
	DecidedBy string
	Now       time.Time
}

// NamedLeaseParams takes or renews a named lease, such as the scheduler's
// leadership. Acquire succeeds when the lease is free, expired, or already
// held by Owner (then it is renewed).
type NamedLeaseParams struct {
	Name  string
	Owner string
	TTL   time.Duration
	Now   time.Time
}

// ---- notifications ----

// Topics for wake-up notifications. The payload is a pointer (an id or a
// kind), never data: a woken listener re-reads the store.
const (
	TopicWork    = "switchboard_work"    // payload: the work kind
	TopicEntries = "switchboard_entries" // payload: the conversation id
)

// MaxPublishPayload bounds a Publish payload (Postgres NOTIFY takes under
// 8000 bytes).
const MaxPublishPayload = 7000

// LiveTopic is the topic carrying a conversation's live turn events across
// instances (Publish, Subscribe): one per conversation, so an instance
// hears only the conversations someone follows there.
func LiveTopic(conv uuid.UUID) string {
	return "sb_live_" + base64.RawURLEncoding.EncodeToString(conv[:])
}

// Notification is one wake-up.
type Notification struct {
	Topic   string
	Payload string
}

// Queries is everything that can run inside or outside a transaction.
//
// Rules every driver keeps (the conformance suite checks each):
//   - Times come back in UTC, truncated to the microsecond.
//   - Creating a conversation with an existing ID is ErrConflict; an unknown
//     entry kind is ErrInvalid.
//   - An unknown id is ErrNotFound, also for ConversationSetStatus and
//     BindingAdvance.
//   - WorkComplete, WorkFail, WorkRelease and WorkHeartbeat by a worker that
//     no longer holds the item (or a second time) are ErrLeaseLost.
//   - An append or tool execution start fenced by a LeaseOwner that does not
//     hold the conversation's live lease is ErrLeaseLost and writes nothing.
//   - A fork's ForkSeq equals the ExpectSeq that caused it.
//   - A heartbeat sets HeartbeatAt and renews the conversation's lease.
//   - A conversation is claimable whenever its lease is free or expired:
//     ConversationLeaseRelease by its owner frees it even while the item
//     that took it is still running (the sweep releases only leases nothing
//     runs under).
//   - A running item whose lease expired on its last allowed attempt is never
//     handed out again: the next claim marks it failed.
type Queries interface {
	ConversationCreate(ctx context.Context, p *ConversationCreateParams) (*Conversation, error)
	ConversationGet(ctx context.Context, id uuid.UUID) (*Conversation, error)
	// ConversationForks lists the direct forks of a conversation, oldest
	// first; deleted forks (ConversationDelete) are left out.
	ConversationForks(ctx context.Context, id uuid.UUID) ([]*Conversation, error)
	ConversationSetStatus(ctx context.Context, p *ConversationStatusParams) (*Conversation, error)
	// ConversationLeaseRelease frees the lease if Owner holds it.
	ConversationLeaseRelease(ctx context.Context, p *ConversationLeaseParams) error
	// ConversationListExpiredLeases lists conversations whose lease expired
	// before Now (for the sweep that frees leases nothing runs under).
	ConversationListExpiredLeases(ctx context.Context, p *ConversationListExpiredLeasesParams) ([]*Conversation, error)

	// EntryAppend appends at the next seq, or forks (see EntryAppendParams).
	// ErrNotFound when the conversation does not exist.
	EntryAppend(ctx context.Context, p *EntryAppendParams) (*EntryAppendResult, error)
	EntryList(ctx context.Context, p *EntryListParams) ([]*Entry, error)
	// EntryScan is the display read (EntryList with WithErrors, which it
	// implies) for readers that write what they read straight out, a
	// stream's catch-up: each entry is handed to each as its columns'
	// bytes (EntryRow), in display order, with no Entry built for it. An
	// error from each stops the read and is returned. It is never retried
	// once a row was handed over.
	EntryScan(ctx context.Context, p *EntryListParams, each func(*EntryRow) error) error
	EntryGet(ctx context.Context, id uuid.UUID) (*Entry, error)
	// EntryListInChannel lists a channel's newest messages (user and
	// assistant entries of every conversation bound to the channel, its
	// threads included), newest first.
	EntryListInChannel(ctx context.Context, p *EntryListInChannelParams) ([]*Entry, error)

	WorkEnqueue(ctx context.Context, p *WorkEnqueueParams) (*WorkEnqueueResult, error)
	// WorkEnqueueMany is WorkEnqueue for several items, one result each in
	// the order of ps, in one statement where the driver can. Two items of
	// one call with the same UniqueKey: the first is inserted, the second
	// gets it.
	WorkEnqueueMany(ctx context.Context, ps []*WorkEnqueueParams) ([]*WorkEnqueueResult, error)
	// WorkClaim claims runnable items: available with run_at <= now, or running
	// with an expired lease. It never hands out an item whose conversation has a
	// live lease held by someone else, nor two items of one conversation, and
	// takes the conversation's lease for each item it returns.
	WorkClaim(ctx context.Context, p *WorkClaimParams) ([]*WorkItem, error)
	// WorkHeartbeat extends the item's lease and its conversation's;
	// ErrLeaseLost when Worker no longer holds it.
	WorkHeartbeat(ctx context.Context, p *WorkLeaseParams) (*WorkItem, error)
	// WorkComplete marks the item done and releases the leases.
	WorkComplete(ctx context.Context, p *WorkLeaseParams) (*WorkItem, error)
	// WorkCompleteMany is WorkComplete for several items in one statement
	// (one round trip, one commit). It returns the items it completed, in no
	// particular order; an id missing from the answer was not running under
	// Worker (its lease was lost, or it was never claimed) and nothing of it
	// changed. An unknown id is not an error.
	WorkCompleteMany(ctx context.Context, p *WorkCompleteManyParams) ([]*WorkItem, error)
	// WorkFail records a failed attempt: back to available at RetryAt, or failed
	// once attempts reach MaxAttempts. Releases the leases.
	WorkFail(ctx context.Context, p *WorkFailParams) (*WorkItem, error)
	// WorkRelease gives a running item back without counting the attempt:
	// it is available again at Now with its attempt count lowered by one,
	// and the item's and its conversation's leases are released. A graceful
	// stop uses it for items it cut off. ErrLeaseLost when Worker does not
	// hold the item.
	WorkRelease(ctx context.Context, p *WorkLeaseParams) (*WorkItem, error)
	// WorkReclaim hands back at once every item still running under Worker
	// (an instance restarting under the same id after a crash): each becomes
	// available at Now, or failed when that claim was its last allowed
	// attempt (the crashed attempt counts), and every conversation lease
	// Worker holds is released. It returns the items it changed.
	WorkReclaim(ctx context.Context, p *WorkReclaimParams) ([]*WorkItem, error)
	WorkGet(ctx context.Context, id uuid.UUID) (*WorkItem, error)
	WorkList(ctx context.Context, p *WorkListParams) ([]*WorkItem, error)
	// WorkPrune deletes finished items (see the params) and returns how many.
	// Items not finished are never touched.
	WorkPrune(ctx context.Context, p *WorkPruneParams) (int, error)

	// InboundPrune deletes platform event ids recorded before p.Before and
	// returns how many.
	InboundPrune(ctx context.Context, p *PruneParams) (int, error)
	// LeasePrune deletes named leases that expired before p.Before and
	// returns how many.
	LeasePrune(ctx context.Context, p *PruneParams) (int, error)

	// InboundRecord records a platform event id; false when it was seen before.
	InboundRecord(ctx context.Context, p *InboundRecordParams) (bool, error)

	AgentUpsert(ctx context.Context, p *AgentUpsertParams) (*Agent, error)
	AgentGetByName(ctx context.Context, name string) (*Agent, error)

	// BindingEnsure returns the binding for a place, creating it and its
	// conversation when absent. Safe when two callers race: both get the
	// same binding.
	BindingEnsure(ctx context.Context, p *BindingEnsureParams) (*BindingEnsureResult, error)
	// BindingFind looks a binding up by its place; ErrNotFound when absent.
	BindingFind(ctx context.Context, p *BindingFindParams) (*Binding, error)
	// BindingListByConversation lists every binding of a conversation.
	BindingListByConversation(ctx context.Context, conversationID uuid.UUID) ([]*Binding, error)
	// BindingAdvance moves the delivered cursor forward; a lower seq is a no-op.
	BindingAdvance(ctx context.Context, p *BindingAdvanceParams) (*Binding, error)
	// BindingMove points a binding at another conversation (a fork made by
	// an edit) with the cursor set to p.DeliveredSeq; ErrNotFound when
	// there is no such binding.
	BindingMove(ctx context.Context, p *BindingMoveParams) (*Binding, error)
	// BindingRelocate gives a binding another place (its channel and
	// thread; the platform and workspace stay); ErrConflict when that place
	// is bound already, ErrNotFound when there is no such binding.
	BindingRelocate(ctx context.Context, p *BindingRelocateParams) (*Binding, error)
	// PostedRecord records the messages an entry became; recording the same
	// (binding, entry) again replaces the message ids.
	PostedRecord(ctx context.Context, p *Posted) error
	// PostedGet returns what an entry became on a binding; ErrNotFound if never posted.
	PostedGet(ctx context.Context, p *PostedGetParams) (*Posted, error)

	// LiveStreamSave records the messages of a binding's live stream,
	// replacing any earlier record of that binding.
	LiveStreamSave(ctx context.Context, l *LiveStream) error
	// LiveStreamGet returns the binding's live stream; ErrNotFound if none.
	LiveStreamGet(ctx context.Context, bindingID uuid.UUID) (*LiveStream, error)
	// LiveStreamDelete forgets the binding's live stream (no error if none).
	LiveStreamDelete(ctx context.Context, bindingID uuid.UUID) error

	ApprovalCreate(ctx context.Context, p *ApprovalCreateParams) (*Approval, error)
	ApprovalGet(ctx context.Context, id uuid.UUID) (*Approval, error)
	// ApprovalFindByCall returns the approval for a tool call; ErrNotFound if none.
	ApprovalFindByCall(ctx context.Context, p *ApprovalFindByCallParams) (*Approval, error)
	// ApprovalListPending lists a conversation's pending approvals, oldest
	// first (what delivery shows as prompts, without reading the log).
	ApprovalListPending(ctx context.Context, conversationID uuid.UUID) ([]*Approval, error)
	ApprovalDecide(ctx context.Context, p *ApprovalDecideParams) (*Approval, error)
	// ApprovalExpire marks pending approvals whose expiry is before Now as
	// expired and returns them.
	ApprovalExpire(ctx context.Context, p *ApprovalExpireParams) ([]*Approval, error)

	// ToolExecutionStart records that a tool call is about to run, unless it
	// was started before: then it returns the existing marker with Started
	// false and changes nothing.
	ToolExecutionStart(ctx context.Context, p *ToolExecutionStartParams) (*ToolExecutionStartResult, error)
	// ToolExecutionFinish ends a started call's run as finished or
	// interrupted (Params.State); ErrNotFound when it was never started. The
	// first end is kept: ending twice changes neither the state nor the time.
	ToolExecutionFinish(ctx context.Context, p *ToolExecutionFinishParams) (*ToolExecution, error)
	// ToolExecutionGet reads a call's marker; ErrNotFound when the call was
	// never started.
	ToolExecutionGet(ctx context.Context, p *ToolExecutionGetParams) (*ToolExecution, error)

	// LeaseAcquire takes or renews a named lease; false when someone else
	// holds a live one.
	LeaseAcquire(ctx context.Context, p *NamedLeaseParams) (bool, error)
	// LeaseRelease frees a named lease if Owner holds it.
	LeaseRelease(ctx context.Context, p *NamedLeaseParams) error

	UsageRecord(ctx context.Context, u *Usage) error
	UsageList(ctx context.Context, conversationID uuid.UUID) ([]*Usage, error)

	ScheduleQueries
	UsageQueries
	BudgetQueries
	FeedbackQueries
	SlackInstallationQueries
	GrantQueries
	KeyQueries
	WorkspaceQueries
	AuditQueries
	AccessQueries
	PeopleQueries
	PersonalityQueries
	SkillQueries
	ParticipantQueries
	StatsQueries
	NoteQueries
	SummaryQueries
	RulebookQueries
	TurnContextQueries
	SyncCursorQueries
	ConnectionQueries
	MCPGrantQueries
	InstanceLeaseQueries
	SideThreadQueries
	RunQueries
	RunMessageQueries
	CardChoiceQueries
	HistoryQueries
	ArtifactQueries
	LoginQueries
	SSOQueries
	ConversationListQueries
	ApprovalInboxQueries
	RetentionQueries
}

// Store is a database: a driver's queries behind the rules every driver
// shares (see New). Methods of the embedded Queries run in their own
// transaction; InTx runs several in one.
type Store interface {
	Driver

	// InTxGroup is InTx with group commit: concurrent calls share one
	// transaction and one commit, so a burst of small writes (inbound
	// messages acknowledged to a platform) costs a few commits, not one
	// each. Each call returns only after the commit that holds its writes,
	// with fn's own error when fn failed (its writes are then not
	// committed, and the others' are not affected). fn may run more than
	// once, as under InTx, and must not wait on another InTxGroup call.
	// A write that fails inside fn must end fn with its error: the group
	// takes no savepoint per write for fn to go on after it. Calls under
	// GroupBehind(ctx) are grouped apart, behind the others (GroupAhead).
	InTxGroup(ctx context.Context, fn func(q Queries) error) error

	// EnqueueGroup is WorkEnqueue with group commit, for what an
	// acknowledgement waits on: the calls running at once are enqueued by
	// one WorkEnqueueMany outside a transaction, one statement and one
	// commit for them all, ahead of other writers as InTxGroup's. p needs a
	// UniqueKey (only a keyed insert is safe to send again after a lost
	// answer); an item whose first sending committed unanswered comes back
	// with Inserted false. Each call returns once its item is stored.
	EnqueueGroup(ctx context.Context, p *WorkEnqueueParams) (*WorkEnqueueResult, error)

	// Sweep deletes the spine's rows that are no longer needed as of
	// p.Now: platform event ids past InboundRetention, finished work items
	// past p.WorkRetention, named leases expired for longer than
	// LeaseRetention. It deletes in batches until none is left or
	// SweepBudget has passed, so it keeps up with any rate a store can
	// write at; a later sweep takes what the budget left. Like Dex's
	// GarbageCollect, it is safe to run on every instance at once.
	Sweep(ctx context.Context, p *SweepParams) (*SweepResult, error)
}

// Driver is what a database driver implements: it runs the queries and maps
// its database's errors to this package's, trusting that the rules in front
// of it (New) have checked every params struct and filled in its defaults.
type Driver interface {
	Queries

	InTx(ctx context.Context, fn func(q Queries) error) error

	// Subscribe delivers wake-ups for topic until ctx ends. Delivery is best
	// effort: a slow receiver loses notifications rather than blocking others,
	// so a listener must also poll.
	Subscribe(ctx context.Context, topic string) (<-chan Notification, error)

	// Publish sends payload to every subscriber of topic, on every instance
	// sharing the database: the way ephemeral data (a turn's token deltas,
	// see LiveTopic) reaches another instance without being stored. Best
	// effort like Subscribe, outside any transaction, batched with the
	// wake-ups; payloads are small (under MaxPublishPayload bytes).
	Publish(ctx context.Context, topic, payload string) error

	// Migrate applies pending migrations and returns the schema version,
	// recording with each the binary that applied it and its floor. It
	// returns an ErrSchemaTooNew, and applies nothing, when the schema is
	// past this binary's by a migration that leaves it behind; when it is
	// past but compatible, it logs a warning and returns the version.
	Migrate(ctx context.Context) (int, error)
	// SchemaVersion returns the applied version and the version this binary
	// ships.
	SchemaVersion(ctx context.Context) (applied, latest int, err error)
	// SchemaState reads what the applied migrations say about the binaries
	// that may run on the schema (see SchemaState.Err). Migrate refuses a
	// schema whose Err is not nil; a running service reads it again for
	// its readiness, as a newer binary may migrate under it.
	SchemaState(ctx context.Context) (*SchemaState, error)
	Ping(ctx context.Context) error
	// Dialect is "postgres" or "sqlite".
	Dialect() string
	Close() error
}
