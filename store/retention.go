package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Retention: how long a workspace keeps its conversations. A workspace
// with a retention keeps a conversation KeepDays after its last activity
// (its updated_at: every append, lease and status write moves it); the
// sweep then deletes it for good, exporting it first when ExportDir is
// set. A workspace without one keeps its conversations forever.
//
// The unit the sweep deletes is a tree: a root conversation with its forks
// (every conversation whose RootID is the root). A tree goes only when
// every conversation of it is past the cutoff and none is busy: a turn
// holds its lease, a work item of it is available or running, or an
// approval of it waits for a person. What a conversation's row is
// referenced by goes with it, in one transaction: its entries, files (a
// file shared with a message is kept inside its entry; artifacts with
// their versions and comments), usage, bindings with their posted records
// and live streams, approvals, audit rows, finished work items, tool
// markers, notes of the conversation's scope, rulebook, participants,
// filing, side threads, delegations, runs and card choices. A schedule's
// run that opened the conversation stays, with no conversation.

// MaxKeepDays bounds a retention: a hundred years.
const MaxKeepDays = 36500

// WorkspaceRetention is a workspace's retention setting.
type WorkspaceRetention struct {
	WorkspaceID uuid.UUID
	// KeepDays is how many days after its last activity a conversation is
	// kept; 0: forever (no retention set).
	KeepDays int
	// ExportDir, when set, is a directory on the server where each
	// conversation is exported (the JSON history export) before it is
	// deleted. "" deletes without exporting.
	ExportDir string
	UpdatedAt time.Time // zero when no retention was ever set
}

// WorkspaceRetentionSetParams sets a workspace's retention; KeepDays 0
// takes it off (kept forever), and ExportDir then must be "".
type WorkspaceRetentionSetParams struct {
	WorkspaceID uuid.UUID
	KeepDays    int    // 0 (forever) or 1..MaxKeepDays
	ExportDir   string // "" or an absolute path, cleaned by the rules
	Now         time.Time
}

// RetentionCursor is where a listing of expired trees continues: after the
// root last seen (its updated_at, then its id).
type RetentionCursor struct {
	UpdatedAt time.Time
	RootID    uuid.UUID
}

// ConversationExpiredListParams lists the trees of a workspace that a
// retention may delete at Now: every conversation of the tree last active
// before Before, none of them busy.
type ConversationExpiredListParams struct {
	WorkspaceID uuid.UUID
	Before      time.Time
	Now         time.Time
	// After continues a listing (nil: from the oldest).
	After *RetentionCursor
	Limit int // 1..DefaultListLimit; 0 means DefaultListLimit
}

// ExpiredTree is a root conversation whose tree may be deleted, with the
// ids of every conversation of the tree (the root first, then its forks by
// creation).
type ExpiredTree struct {
	RootID    uuid.UUID
	UpdatedAt time.Time // the root's: the listing's order and cursor
	IDs       []uuid.UUID
}

// Cursor is the place a listing continues after t.
func (t *ExpiredTree) Cursor() *RetentionCursor {
	return &RetentionCursor{UpdatedAt: t.UpdatedAt, RootID: t.RootID}
}

// ConversationPurgeParams deletes one tree, if it is still expired: its
// root is in WorkspaceID, every conversation of it was last active before
// Before, and none is busy at Now.
type ConversationPurgeParams struct {
	RootID      uuid.UUID
	WorkspaceID uuid.UUID
	Before      time.Time
	Now         time.Time
}

// ConversationPurgeResult counts what a purge deleted.
type ConversationPurgeResult struct {
	Conversations int `json:"conversations"` // the root and its forks
	Entries       int `json:"entries"`
	Artifacts     int `json:"artifacts"`
	Usage         int `json:"usage"`
}

// Add adds o's counts to r.
func (r *ConversationPurgeResult) Add(o *ConversationPurgeResult) {
	r.Conversations += o.Conversations
	r.Entries += o.Entries
	r.Artifacts += o.Artifacts
	r.Usage += o.Usage
}

// RetentionQueries keep the workspaces' retention settings and delete
// what has outlived them.
//
// Rules every driver keeps (the conformance suite checks each):
//   - A listing and a purge see the same trees: a purge checks again, in
//     its transaction, what the listing checked, so a message that lands
//     after the listing keeps the tree (ErrConflict).
//   - A purge deletes a tree whole or not at all.
//   - Conversations of other workspaces, and of no workspace, are never
//     listed nor purged.
type RetentionQueries interface {
	// WorkspaceRetentionSet sets (or, with KeepDays 0, takes off) a
	// workspace's retention. ErrNotFound for an unknown workspace.
	WorkspaceRetentionSet(ctx context.Context, p *WorkspaceRetentionSetParams) (*WorkspaceRetention, error)
	// WorkspaceRetentionGet reads a workspace's retention: KeepDays 0 when
	// none is set. ErrNotFound for an unknown workspace.
	WorkspaceRetentionGet(ctx context.Context, workspaceID uuid.UUID) (*WorkspaceRetention, error)
	// WorkspaceRetentionList lists the workspaces that have a retention,
	// by workspace id.
	WorkspaceRetentionList(ctx context.Context) ([]*WorkspaceRetention, error)
	// ConversationExpiredList lists the trees a retention may delete,
	// least recently active root first.
	ConversationExpiredList(ctx context.Context, p *ConversationExpiredListParams) ([]*ExpiredTree, error)
	// ConversationPurge deletes a tree and everything that hangs off it, in
	// one transaction. ErrNotFound when the root is gone (purged before);
	// ErrConflict, deleting nothing, when the tree is no longer expired
	// (active since, busy, or not a root of the workspace).
	ConversationPurge(ctx context.Context, p *ConversationPurgeParams) (*ConversationPurgeResult, error)
}

// PurgeRow is what a driver reads of each conversation of a tree, in the
// purge's transaction, for CheckPurge.
type PurgeRow struct {
	ID             uuid.UUID
	ParentID       *uuid.UUID
	WorkspaceID    *uuid.UUID
	UpdatedAt      time.Time
	LeaseOwner     string
	LeaseExpiresAt *time.Time
}

// CheckPurge is the check every driver makes before it purges a tree,
// with the tree's rows and whether a work item of it is available or
// running or an approval of it pending (busy): ErrNotFound when the tree
// is gone, ErrConflict when it is no longer expired.
func CheckPurge(p *ConversationPurgeParams, tree []PurgeRow, busy bool) error {
	if len(tree) == 0 {
		return ErrNotFound
	}
	for _, r := range tree {
		switch {
		case r.ID == p.RootID && (r.ParentID != nil || r.WorkspaceID == nil || *r.WorkspaceID != p.WorkspaceID):
			return fmt.Errorf("%w: conversation %s is not a root of workspace %s", ErrConflict, p.RootID, p.WorkspaceID)
		case !r.UpdatedAt.Before(p.Before):
			return fmt.Errorf("%w: conversation %s was active at %s, after the cutoff %s", ErrConflict, r.ID, r.UpdatedAt.UTC().Format(time.RFC3339), p.Before.UTC().Format(time.RFC3339))
		case r.LeaseOwner != "" && r.LeaseExpiresAt != nil && r.LeaseExpiresAt.After(p.Now):
			return fmt.Errorf("%w: a turn runs on conversation %s", ErrConflict, r.ID)
		}
	}
	if busy {
		return fmt.Errorf("%w: conversation %s or a fork of it has work or an approval pending", ErrConflict, p.RootID)
	}
	return nil
}
