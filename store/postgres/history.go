package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// History: the search, filing (rename, archive, folder), deletion and
// folders. A filing change locks the conversation's row first, so a delete
// and a move of one conversation take turns and a parent's child count is
// lowered once.

func archivedMode(p *store.ConversationSearchParams) int32 {
	switch {
	case p.WithArchived:
		return 2
	case p.Archived != nil && *p.Archived:
		return 1
	}
	return 0
}

func listing(c *dbsqlc.Conversation, folder *uuid.UUID, archived *time.Time, platform string) *store.ConversationListing {
	if platform == "" {
		platform = store.PlatformNone
	}
	return &store.ConversationListing{
		Conversation: conversation(c), WorkspaceID: c.WorkspaceID, FolderID: folder, ArchivedAt: archived, Platform: platform,
	}
}

func (q *queries) ConversationSearch(ctx context.Context, p *store.ConversationSearchParams) ([]*store.ConversationListing, error) {
	if p.Sort == store.SortActivity {
		// The list's default order has a query of its own: one that walks
		// the index of that order and stops at the page's end.
		rows, err := call(ctx, q, (*dbsqlc.Queries).ConversationSearch, &dbsqlc.ConversationSearchParams{
			AllWorkspaces: p.Visibility.All, Workspaces: idStrings(p.Visibility.Workspaces), AgentID: p.AgentID, Platform: p.Platform,
			FolderID: p.FolderID, Unfiled: p.Unfiled, ArchivedMode: archivedMode(p), Needle: p.Needle,
			Skip: int32(p.Offset), MaxRows: int32(p.Limit),
		})
		if err != nil {
			return nil, wrap(err, "searching conversations")
		}
		out := make([]*store.ConversationListing, len(rows))
		for i := range rows {
			r := &rows[i]
			out[i] = listing(&r.Conversation, r.FolderID, r.ArchivedAt, r.Platform)
		}
		return out, nil
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).ConversationSearchSorted, &dbsqlc.ConversationSearchSortedParams{
		AllWorkspaces: p.Visibility.All, Workspaces: idStrings(p.Visibility.Workspaces), AgentID: p.AgentID, Platform: p.Platform,
		FolderID: p.FolderID, Unfiled: p.Unfiled, ArchivedMode: archivedMode(p), Needle: p.Needle, Sort: string(p.Sort),
		Skip: int32(p.Offset), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "searching conversations")
	}
	out := make([]*store.ConversationListing, len(rows))
	for i := range rows {
		r := &rows[i]
		out[i] = listing(&r.Conversation, r.FolderID, r.ArchivedAt, r.Platform)
	}
	return out, nil
}

func (q *queries) ConversationFilingGet(ctx context.Context, id uuid.UUID) (*store.ConversationFiling, error) {
	f, err := q.filing(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading the filing of conversation %s", id)
	}
	return f, nil
}

// filing reads a conversation's filing, zero when never filed.
func (q *queries) filing(ctx context.Context, id uuid.UUID) (*store.ConversationFiling, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).FilingGet, id)
	if errors.Is(err, store.ErrNotFound) {
		return &store.ConversationFiling{ConversationID: id}, q.mustExist(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	return &store.ConversationFiling{ConversationID: id, FolderID: r.FolderID, ArchivedAt: r.ArchivedAt, DeletedAt: r.DeletedAt}, nil
}

func (q *queries) putFiling(ctx context.Context, f *store.ConversationFiling, now time.Time) error {
	return exec(ctx, q, (*dbsqlc.Queries).FilingPut, &dbsqlc.FilingPutParams{
		ConversationID: f.ConversationID, FolderID: f.FolderID, ArchivedAt: tsPtr(f.ArchivedAt), DeletedAt: tsPtr(f.DeletedAt), Now: ts(now),
	})
}

// lockFiled locks a conversation that exists and is not deleted, and reads
// its filing.
func (q *queries) lockFiled(ctx context.Context, id uuid.UUID) (*dbsqlc.ConversationListingLockRow, *store.ConversationFiling, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ConversationListingLock, id)
	if err != nil {
		return nil, nil, err
	}
	f, err := q.filing(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if f.DeletedAt != nil {
		return nil, nil, fmt.Errorf("conversation %s was deleted: %w", id, store.ErrNotFound)
	}
	return &row, f, nil
}

func (q *queries) ConversationFile(ctx context.Context, p *store.ConversationFileParams) (*store.ConversationListing, error) {
	var out *store.ConversationListing
	err := q.atomic(ctx, func(t *queries) error {
		conv, f, err := t.lockFiled(ctx, p.ID)
		if err != nil {
			return err
		}
		if p.FolderID != nil {
			folder, err := call(ctx, t, (*dbsqlc.Queries).FolderGet, *p.FolderID)
			if err != nil {
				return fmt.Errorf("folder %s: %w", *p.FolderID, err)
			}
			if !sameID(folder.WorkspaceID, conv.WorkspaceID) {
				return fmt.Errorf("%w: folder %s is of another workspace than conversation %s", store.ErrInvalid, folder.ID, p.ID)
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
		if err := t.putFiling(ctx, f, p.Now); err != nil {
			return err
		}
		if p.Title != nil {
			if _, err := call(ctx, t, (*dbsqlc.Queries).ConversationRename, &dbsqlc.ConversationRenameParams{ID: p.ID, Title: *p.Title}); err != nil {
				return err
			}
		}
		r, err := call(ctx, t, (*dbsqlc.Queries).ConversationListingGet, p.ID)
		if err != nil {
			return err
		}
		out = listing(&r.Conversation, r.FolderID, r.ArchivedAt, r.Platform)
		return nil
	})
	if err != nil {
		return nil, wrap(err, "filing conversation %s", p.ID)
	}
	return out, nil
}

func sameID(a, b *uuid.UUID) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func (q *queries) ConversationDelete(ctx context.Context, p *store.ConversationDeleteParams) error {
	err := q.atomic(ctx, func(t *queries) error {
		conv, f, err := t.lockFiled(ctx, p.ID)
		if err != nil {
			return err
		}
		f.DeletedAt = &p.Now
		if err := t.putFiling(ctx, f, p.Now); err != nil {
			return err
		}
		if conv.ParentID != nil {
			return exec(ctx, t, (*dbsqlc.Queries).ConversationChildGone, *conv.ParentID)
		}
		return nil
	})
	if err != nil {
		return wrap(err, "deleting conversation %s", p.ID)
	}
	return nil
}

func folder(r *dbsqlc.Folder) *store.Folder {
	return &store.Folder{ID: r.ID, WorkspaceID: r.WorkspaceID, Name: r.Name, Color: r.Color, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func (q *queries) FolderCreate(ctx context.Context, p *store.FolderCreateParams) (*store.Folder, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).FolderInsert, &dbsqlc.FolderInsertParams{
		ID: p.ID, WorkspaceID: p.WorkspaceID, Name: p.Name, Color: p.Color, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "creating folder %q", p.Name)
	}
	return folder(&r), nil
}

func (q *queries) FolderGet(ctx context.Context, id uuid.UUID) (*store.Folder, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).FolderGet, id)
	if err != nil {
		return nil, wrap(err, "reading folder %s", id)
	}
	return folder(&r), nil
}

func (q *queries) FolderList(ctx context.Context, v store.Visibility) ([]*store.Folder, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).FolderList, &dbsqlc.FolderListParams{AllWorkspaces: v.All, Workspaces: idStrings(v.Workspaces)})
	if err != nil {
		return nil, wrap(err, "listing folders")
	}
	return each(rows, folder), nil
}

func (q *queries) FolderUpdate(ctx context.Context, p *store.FolderUpdateParams) (*store.Folder, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).FolderUpdate, &dbsqlc.FolderUpdateParams{ID: p.ID, Name: p.Name, Color: p.Color, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "changing folder %s", p.ID)
	}
	return folder(&r), nil
}

func (q *queries) FolderDelete(ctx context.Context, id uuid.UUID) error {
	err := q.atomic(ctx, func(t *queries) error {
		if err := exec(ctx, t, (*dbsqlc.Queries).FolderUnfileAll, &id); err != nil {
			return err
		}
		n, err := call(ctx, t, (*dbsqlc.Queries).FolderDelete, id)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return err
	})
	if err != nil {
		return wrap(err, "deleting folder %s", id)
	}
	return nil
}

// idStrings passes ids as text[]: the simple protocol cannot encode uuid[].
func idStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

func (q *queries) AgentNameGet(ctx context.Context, id uuid.UUID) (string, error) {
	name, err := call(ctx, q, (*dbsqlc.Queries).AgentNameGet, id)
	if err != nil {
		return "", wrap(err, "reading the name of agent %s", id)
	}
	return name, nil
}
