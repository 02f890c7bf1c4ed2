package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// History: how people find their conversations again. A conversation's
// filing (its folder, archived, deleted) is kept beside it; folders belong
// to a workspace (nil: the operator's, for conversations outside any).
//
//	filed ──(archive)──► archived ──(unarchive)──► filed
//	  │                     │
//	  └──────(delete)───────┴──► deleted (hidden; the parent's child count lowered)
//
// Deleting hides a conversation from every listing and from the API; its
// log is append-only and stays in the database. Deleting a fork lowers its
// parent's ChildCount in the same transaction, once.

// Visibility is which workspaces' rows a reader sees: every row (the
// operator), or those of the listed workspaces (a person; rows outside any
// workspace are never among them).
type Visibility struct {
	All        bool
	Workspaces []uuid.UUID
}

// ConversationSort orders a history listing.
type ConversationSort string

const (
	SortActivity ConversationSort = "activity" // last activity first (the default)
	SortCreated  ConversationSort = "created"  // newest first
	SortTitle    ConversationSort = "title"    // by title, case-insensitive
)

// Valid reports whether s is one of the sorts.
func (s ConversationSort) Valid() bool {
	return s == SortActivity || s == SortCreated || s == SortTitle
}

// PlatformNone is the platform of a conversation no platform is bound to
// (made through the API, the console or the terminal, or by a schedule).
const PlatformNone = "api"

// ConversationSearchParams lists the conversations a reader sees, filtered,
// sorted and paged. Every filter is optional.
type ConversationSearchParams struct {
	Visibility Visibility
	// Query matches the title or the text of a user or assistant entry,
	// case-insensitively, as a substring.
	Query   string
	AgentID *uuid.UUID
	// Platform is "slack", "discord", ... or PlatformNone.
	Platform string
	FolderID *uuid.UUID
	// Unfiled lists only conversations in no folder.
	Unfiled bool
	// Archived: nil lists those not archived; true only archived ones;
	// false only those not archived. WithArchived lists both.
	Archived     *bool
	WithArchived bool
	Sort         ConversationSort // "" means SortActivity
	Offset       int
	Limit        int // 0 means DefaultListLimit

	// Needle is Query lowercased and trimmed, filled in by the rules;
	// callers leave it empty.
	Needle string
}

// ConversationListing is a conversation as the history shows it.
type ConversationListing struct {
	Conversation *Conversation
	WorkspaceID  *uuid.UUID
	FolderID     *uuid.UUID
	ArchivedAt   *time.Time
	// Platform is where the conversation is bound (its first binding), or
	// PlatformNone.
	Platform string
}

// ConversationFiling is where a conversation is filed. A conversation never
// filed has a zero filing (no folder, not archived, not deleted).
type ConversationFiling struct {
	ConversationID uuid.UUID
	FolderID       *uuid.UUID
	ArchivedAt     *time.Time
	DeletedAt      *time.Time
}

// ConversationFileParams changes a conversation's title and filing. Nil
// fields are left as they are.
type ConversationFileParams struct {
	ID       uuid.UUID
	Title    *string
	Archived *bool
	// FolderID moves it to a folder of its workspace; Unfile takes it out of
	// any folder.
	FolderID *uuid.UUID
	Unfile   bool
	Now      time.Time
}

// ConversationDeleteParams deletes (hides) a conversation.
type ConversationDeleteParams struct {
	ID  uuid.UUID
	Now time.Time
}

// Folder groups conversations of one workspace, with a colour.
type Folder struct {
	ID          uuid.UUID
	WorkspaceID *uuid.UUID
	Name        string
	// Color is "#rrggbb" or empty.
	Color     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FolderCreateParams makes a folder.
type FolderCreateParams struct {
	WorkspaceID *uuid.UUID
	Name        string
	Color       string
	Now         time.Time

	ID uuid.UUID // filled in by the rules; callers leave it zero
}

// FolderUpdateParams renames or recolours a folder; nil fields stay.
type FolderUpdateParams struct {
	ID    uuid.UUID
	Name  *string
	Color *string
	Now   time.Time
}

// MaxTitleChars bounds a conversation's or an artifact's title.
const MaxTitleChars = 200

// HistoryQueries are the history's reads and writes.
type HistoryQueries interface {
	// ConversationSearch lists the conversations the reader sees, deleted
	// ones never.
	ConversationSearch(ctx context.Context, p *ConversationSearchParams) ([]*ConversationListing, error)
	// ConversationFilingGet reads a conversation's filing (zero when never
	// filed); ErrNotFound when the conversation does not exist.
	ConversationFilingGet(ctx context.Context, id uuid.UUID) (*ConversationFiling, error)
	// ConversationFile renames, archives, unarchives or moves a
	// conversation. ErrNotFound when it does not exist or was deleted, or
	// the folder does not exist; ErrInvalid when the folder is of another
	// workspace.
	ConversationFile(ctx context.Context, p *ConversationFileParams) (*ConversationListing, error)
	// ConversationDelete hides a conversation and lowers its parent's child
	// count, in one transaction. ErrNotFound when it does not exist or was
	// deleted before.
	ConversationDelete(ctx context.Context, p *ConversationDeleteParams) error

	FolderCreate(ctx context.Context, p *FolderCreateParams) (*Folder, error)
	FolderGet(ctx context.Context, id uuid.UUID) (*Folder, error)
	// FolderList lists the folders the reader sees, by name.
	FolderList(ctx context.Context, v Visibility) ([]*Folder, error)
	FolderUpdate(ctx context.Context, p *FolderUpdateParams) (*Folder, error)
	// FolderDelete deletes a folder; its conversations are left in none.
	FolderDelete(ctx context.Context, id uuid.UUID) error

	// AgentNameGet reads an agent's name by id (a listing shows names);
	// ErrNotFound when absent.
	AgentNameGet(ctx context.Context, id uuid.UUID) (string, error)
}
