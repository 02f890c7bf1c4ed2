package core

import "github.com/switchboardhq/switchboard/store"

// The store's domain types, constants and errors that the parts built on
// core reach through core. A package under bots/ imports core, never store
// (internal/archtest holds the rule): it calls core's methods for what it
// reads, takes one of core's narrow store interfaces (DeliveryStore) for
// what it keeps, and names the values those pass through these aliases.
//
// They are aliases, not copies: a *core.Entry is a *store.Entry, so a value
// goes between the store, core and the bots unchanged, and errors.Is
// matches core.ErrNotFound against what a driver returns. Only what a caller
// outside core needs is listed here; a type whose rules move out of store
// into the core package that owns it stops being an alias then.

// Conversations, their log and their work.
type (
	Conversation    = store.Conversation
	Entry           = store.Entry
	EntryKind       = store.EntryKind
	EntryListParams = store.EntryListParams
	WorkItem        = store.WorkItem
)

// The kinds of entry a log holds that people see or that delivery reads.
const (
	EntryUser       = store.EntryUser
	EntryAssistant  = store.EntryAssistant
	EntryToolCall   = store.EntryToolCall
	EntryToolResult = store.EntryToolResult
	EntryCard       = store.EntryCard
	EntrySystem     = store.EntrySystem
	EntryError      = store.EntryError
	EntrySideThread = store.EntrySideThread
)

// Where a conversation is delivered, and what delivery records there.
type (
	Binding               = store.Binding
	BindingAdvanceParams  = store.BindingAdvanceParams
	BindingRelocateParams = store.BindingRelocateParams
	Place                 = store.Place
	Posted                = store.Posted
	PostedGetParams       = store.PostedGetParams
	LiveStream            = store.LiveStream
)

// Approvals: what a person is asked, and how it stands.
type Approval = store.Approval

const (
	ApprovalConfirm = store.ApprovalConfirm
	ApprovalExpired = store.ApprovalExpired
)

// Side threads. Their statuses are named SideThreadStatus… here: core's
// SideThreadOpened, SideThreadResolved and SideThreadAbandoned are the
// events a side thread writes to its parent's log (SideThreadEvent).
type (
	SideThread       = store.SideThread
	SideThreadStatus = store.SideThreadStatus
)

const (
	SideThreadStatusInProgress = store.SideThreadInProgress
	SideThreadStatusResolved   = store.SideThreadResolved
	SideThreadStatusAbandoned  = store.SideThreadAbandoned
)

// A run's steps, and the message that shows a run's progress on a binding.
type (
	RunMessage             = store.RunMessage
	RunMessageKey          = store.RunMessageKey
	RunMessageState        = store.RunMessageState
	RunMessageCreateParams = store.RunMessageCreateParams
	RunMessageSaveParams   = store.RunMessageSaveParams
)

const (
	StepDone          = store.StepDone
	RunMessagePosting = store.RunMessagePosting
	RunMessageLive    = store.RunMessageLive
	RunMessageEnded   = store.RunMessageEnded
)

// The store's sentinel errors, for errors.Is.
var (
	// ErrNotFound: no such row.
	ErrNotFound = store.ErrNotFound
	// ErrConflict: the row changed, or its key is taken (a lost race).
	ErrConflict = store.ErrConflict
)
