package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// History: the search, filing (rename, archive, folder), deletion and
// folders. A filing change reads the conversation and the folder and writes
// in one writer transaction, so a folder of another workspace is refused
// against what is committed.

func visibilityArgs(v store.Visibility) (int64, string) {
	if v.All {
		return 1, "[]"
	}
	b, _ := json.Marshal(v.Workspaces) // UUIDs always encode
	return 0, string(b)
}

func archivedMode(p *store.ConversationSearchParams) int64 {
	switch {
	case p.WithArchived:
		return 2
	case p.Archived != nil && *p.Archived:
		return 1
	}
	return 0
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func listing(c dbsqlc.Conversation, folder uuid.NullUUID, archived sql.NullInt64, platform string) *store.ConversationListing {
	if platform == "" {
		platform = store.PlatformNone
	}
	return &store.ConversationListing{
		Conversation: conversation(c), WorkspaceID: nullUUID(c.WorkspaceID),
		FolderID: nullUUID(folder), ArchivedAt: nullMicros(archived), Platform: platform,
	}
}

func (q *queries) ConversationSearch(ctx context.Context, p *store.ConversationSearchParams) ([]*store.ConversationListing, error) {
	all, ws := visibilityArgs(p.Visibility)
	if p.Sort == store.SortActivity {
		// The list's default order has a query of its own: one that walks
		// the index of that order and stops at the page's end.
		rows, err := q.read().ConversationSearch(ctx, dbsqlc.ConversationSearchParams{
			AllWorkspaces: all, Workspaces: ws, AgentID: uuidArg(p.AgentID), Platform: p.Platform,
			FolderID: uuidArg(p.FolderID), Unfiled: boolInt(p.Unfiled), ArchivedMode: archivedMode(p),
			Needle: p.Needle, Skip: int64(p.Offset), MaxRows: limitArg(p.Limit),
		})
		if err != nil {
			return nil, wrap(err, "searching conversations")
		}
		out := make([]*store.ConversationListing, len(rows))
		for i, r := range rows {
			out[i] = listing(r.Conversation, r.FolderID, r.ArchivedAt, r.Platform)
		}
		return out, nil
	}
	rows, err := q.read().ConversationSearchSorted(ctx, dbsqlc.ConversationSearchSortedParams{
		AllWorkspaces: all, Workspaces: ws, AgentID: uuidArg(p.AgentID), Platform: p.Platform,
		FolderID: uuidArg(p.FolderID), Unfiled: boolInt(p.Unfiled), ArchivedMode: archivedMode(p),
		Needle: p.Needle, Sort: string(p.Sort), Skip: int64(p.Offset), MaxRows: limitArg(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "searching conversations")
	}
	out := make([]*store.ConversationListing, len(rows))
	for i, r := range rows {
		out[i] = listing(r.Conversation, r.FolderID, r.ArchivedAt, r.Platform)
	}
	return out, nil
}

func (q *queries) ConversationFilingGet(ctx context.Context, id uuid.UUID) (*store.ConversationFiling, error) {
	f, err := q.filing(ctx, q.read(), id)
	if err != nil {
		return nil, wrap(err, "reading the filing of conversation %s", id)
	}
	return f, nil
}

// filing reads a conversation's filing, zero when never filed.
func (q *queries) filing(ctx context.Context, db *dbsqlc.Queries, id uuid.UUID) (*store.ConversationFiling, error) {
	r, err := db.FilingGet(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		n, err := db.ConversationExists(ctx, id)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return &store.ConversationFiling{ConversationID: id}, err
	}
	if err != nil {
		return nil, err
	}
	return &store.ConversationFiling{
		ConversationID: id, FolderID: nullUUID(r.FolderID), ArchivedAt: nullMicros(r.ArchivedAt), DeletedAt: nullMicros(r.DeletedAt),
	}, nil
}

func putFiling(ctx context.Context, db *dbsqlc.Queries, f *store.ConversationFiling, now int64) error {
	return db.FilingPut(ctx, dbsqlc.FilingPutParams{
		ConversationID: f.ConversationID, FolderID: uuidArg(f.FolderID),
		ArchivedAt: microsArg(f.ArchivedAt), DeletedAt: microsArg(f.DeletedAt), Now: now,
	})
}

func (q *queries) ConversationFile(ctx context.Context, p *store.ConversationFileParams) (*store.ConversationListing, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.ConversationListingGetRow, error) {
		var zero dbsqlc.ConversationListingGetRow
		cur, err := t.tx.ConversationListingGet(ctx, p.ID) // ErrNoRows when deleted
		if err != nil {
			return zero, err
		}
		f, err := t.filing(ctx, t.tx, p.ID)
		if err != nil {
			return zero, err
		}
		if p.FolderID != nil {
			folder, err := t.tx.FolderGet(ctx, *p.FolderID)
			if errors.Is(err, sql.ErrNoRows) {
				return zero, fmt.Errorf("folder %s: %w", *p.FolderID, store.ErrNotFound)
			} else if err != nil {
				return zero, err
			}
			if folder.WorkspaceID != cur.Conversation.WorkspaceID {
				return zero, fmt.Errorf("%w: folder %s is of another workspace than conversation %s", store.ErrInvalid, folder.ID, p.ID)
			}
			f.FolderID = p.FolderID
		}
		if p.Unfile {
			f.FolderID = nil
		}
		if p.Archived != nil {
			switch {
			case *p.Archived && f.ArchivedAt == nil:
				f.ArchivedAt = &p.Now
			case !*p.Archived:
				f.ArchivedAt = nil
			}
		}
		if err := putFiling(ctx, t.tx, f, micros(p.Now)); err != nil {
			return zero, err
		}
		if p.Title != nil {
			if _, err := t.tx.ConversationRename(ctx, dbsqlc.ConversationRenameParams{ID: p.ID, Title: *p.Title}); err != nil {
				return zero, err
			}
		}
		return t.tx.ConversationListingGet(ctx, p.ID)
	})
	if err != nil {
		return nil, wrap(err, "filing conversation %s", p.ID)
	}
	return listing(r.Conversation, r.FolderID, r.ArchivedAt, r.Platform), nil
}

func (q *queries) ConversationDelete(ctx context.Context, p *store.ConversationDeleteParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		cur, err := t.tx.ConversationListingGet(ctx, p.ID) // ErrNoRows when deleted
		if err != nil {
			return struct{}{}, err
		}
		f, err := t.filing(ctx, t.tx, p.ID)
		if err != nil {
			return struct{}{}, err
		}
		f.DeletedAt = &p.Now
		if err := putFiling(ctx, t.tx, f, micros(p.Now)); err != nil {
			return struct{}{}, err
		}
		if cur.Conversation.ParentID.Valid {
			return struct{}{}, t.tx.ConversationChildGone(ctx, cur.Conversation.ParentID.UUID)
		}
		return struct{}{}, nil
	})
	if err != nil {
		return wrap(err, "deleting conversation %s", p.ID)
	}
	return nil
}

func folder(r dbsqlc.Folder) *store.Folder {
	return &store.Folder{
		ID: r.ID, WorkspaceID: nullUUID(r.WorkspaceID), Name: r.Name, Color: r.Color,
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func (q *queries) FolderCreate(ctx context.Context, p *store.FolderCreateParams) (*store.Folder, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Folder, error) {
		return t.tx.FolderInsert(ctx, dbsqlc.FolderInsertParams{
			ID: p.ID, WorkspaceID: uuidArg(p.WorkspaceID), Name: p.Name, Color: p.Color, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "creating folder %q", p.Name)
	}
	return folder(r), nil
}

func (q *queries) FolderGet(ctx context.Context, id uuid.UUID) (*store.Folder, error) {
	r, err := q.read().FolderGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading folder %s", id)
	}
	return folder(r), nil
}

func (q *queries) FolderList(ctx context.Context, v store.Visibility) ([]*store.Folder, error) {
	all, ws := visibilityArgs(v)
	rows, err := q.read().FolderList(ctx, dbsqlc.FolderListParams{AllWorkspaces: all, Workspaces: ws})
	out, err := allOf(rows, err, folder)
	if err != nil {
		return nil, wrap(err, "listing folders")
	}
	return out, nil
}

func (q *queries) FolderUpdate(ctx context.Context, p *store.FolderUpdateParams) (*store.Folder, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Folder, error) {
		return t.tx.FolderUpdate(ctx, dbsqlc.FolderUpdateParams{ID: p.ID, Name: textArg(p.Name), Color: textArg(p.Color), Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "changing folder %s", p.ID)
	}
	return folder(r), nil
}

func (q *queries) FolderDelete(ctx context.Context, id uuid.UUID) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		if err := t.tx.FolderUnfileAll(ctx, uuid.NullUUID{UUID: id, Valid: true}); err != nil {
			return struct{}{}, err
		}
		n, err := t.tx.FolderDelete(ctx, id)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return struct{}{}, err
	})
	if err != nil {
		return wrap(err, "deleting folder %s", id)
	}
	return nil
}

// allOf is all for a converter that returns a pointer.
func allOf[R, T any](rows []R, err error, conv func(R) *T) ([]*T, error) {
	return all(rows, err, conv)
}

func (q *queries) AgentNameGet(ctx context.Context, id uuid.UUID) (string, error) {
	name, err := q.read().AgentNameGet(ctx, id)
	if err != nil {
		return "", wrap(err, "reading the name of agent %s", id)
	}
	return name, nil
}
