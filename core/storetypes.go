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
	Conversation       = store.Conversation
	ConversationStatus = store.ConversationStatus
	Entry              = store.Entry
	EntryKind          = store.EntryKind
	EntryListParams    = store.EntryListParams
	EntryRow           = store.EntryRow
	EntryAppendResult  = store.EntryAppendResult
	Author             = store.Author
	WorkItem           = store.WorkItem
	Delegation         = store.Delegation
	Rulebook           = store.Rulebook
)

// ConversationRunning: a turn runs under the conversation's lease.
const ConversationRunning = store.ConversationRunning

// The history: conversations listed and searched, filed in folders, and
// what a caller may see of them.
type (
	ConversationListing      = store.ConversationListing
	ConversationSearchParams = store.ConversationSearchParams
	ConversationSort         = store.ConversationSort
	ConversationFileParams   = store.ConversationFileParams
	ConversationDeleteParams = store.ConversationDeleteParams
	Folder                   = store.Folder
	FolderCreateParams       = store.FolderCreateParams
	FolderUpdateParams       = store.FolderUpdateParams
	Visibility               = store.Visibility
)

// Workspaces, their members and roles, and how long they keep things.
type (
	Workspace          = store.Workspace
	WorkspaceKind      = store.WorkspaceKind
	WorkspaceMember    = store.WorkspaceMember
	WorkspaceBinding   = store.WorkspaceBinding
	Membership         = store.Membership
	Role               = store.Role
	WorkspaceRetention = store.WorkspaceRetention
	PersonForgetResult = store.PersonForgetResult
)

// The roles a person holds in a workspace.
const (
	RoleOwner  = store.RoleOwner
	RoleAdmin  = store.RoleAdmin
	RoleMember = store.RoleMember
)

// People, as the store keeps them.
type Person = store.Person

// Agents, and where they answer.
type (
	Agent        = store.Agent
	AgentSharing = store.AgentSharing
	Listing      = store.Listing
)

// Artifacts, their versions and the comments on them.
type (
	Artifact           = store.Artifact
	ArtifactKind       = store.ArtifactKind
	ArtifactVersion    = store.ArtifactVersion
	ArtifactComment    = store.ArtifactComment
	ArtifactListParams = store.ArtifactListParams
)

// Credentials: keys and tokens, sign-in links and sessions, pairings,
// grants and connections.
type (
	Key        = store.Key
	KeyKind    = store.KeyKind
	Login      = store.Login
	Pairing    = store.Pairing
	Grant      = store.Grant
	Connection = store.Connection
)

// The kinds of key.
const (
	KeyAgent    = store.KeyAgent
	KeyHost     = store.KeyHost
	KeyPersonal = store.KeyPersonal
	KeySession  = store.KeySession
)

// Runs, schedules, skills and personalities.
type (
	Run         = store.Run
	RunStatus   = store.RunStatus
	RunStep     = store.RunStep
	RunEvent    = store.RunEvent
	Schedule    = store.Schedule
	Skill       = store.Skill
	Personality = store.Personality
)

// The audit and the usage.
type (
	AuditOutcome = store.AuditOutcome
	UsageTotal   = store.UsageTotal
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
type (
	Approval                  = store.Approval
	ApprovalFindByCallParams  = store.ApprovalFindByCallParams
	ApprovalListVisibleParams = store.ApprovalListVisibleParams
)

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
	// ErrInvalidParams: the store refused what it was asked (a value out
	// of range, a name not allowed). core's own refusals wrap ErrInvalid.
	ErrInvalidParams = store.ErrInvalid
)

// NormalizePairingCode is a pairing code as it is stored: upper case,
// without separators.
func NormalizePairingCode(code string) string { return store.NormalizePairingCode(code) }
