package sqlite

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) WorkspaceRetentionSet(ctx context.Context, p *store.WorkspaceRetentionSetParams) (*store.WorkspaceRetention, error) {
	out, err := write(ctx, q, func(t *queries) (*store.WorkspaceRetention, error) {
		// An unknown workspace is ErrNotFound, also when clearing.
		if _, err := t.tx.WorkspaceGet(ctx, p.WorkspaceID); err != nil {
			return nil, err
		}
		if p.KeepDays == 0 {
			return &store.WorkspaceRetention{WorkspaceID: p.WorkspaceID}, t.tx.RetentionClear(ctx, p.WorkspaceID)
		}
		r, err := t.tx.RetentionSet(ctx, dbsqlc.RetentionSetParams{
			WorkspaceID: p.WorkspaceID, KeepDays: int64(p.KeepDays), ExportDir: p.ExportDir, Now: micros(p.Now),
		})
		return retention(r), err
	})
	if err != nil {
		return nil, wrap(err, "setting the retention of workspace %s", p.WorkspaceID)
	}
	return out, nil
}

func (q *queries) WorkspaceRetentionGet(ctx context.Context, id uuid.UUID) (*store.WorkspaceRetention, error) {
	r, err := q.read().RetentionGet(ctx, id)
	if err == nil {
		return retention(r), nil
	}
	if err = mapErr(err); !errors.Is(err, store.ErrNotFound) {
		return nil, wrap(err, "reading the retention of workspace %s", id)
	}
	if _, err := q.read().WorkspaceGet(ctx, id); err != nil {
		return nil, wrap(err, "reading the retention of workspace %s", id)
	}
	return &store.WorkspaceRetention{WorkspaceID: id}, nil
}

func (q *queries) WorkspaceRetentionList(ctx context.Context) ([]*store.WorkspaceRetention, error) {
	rows, err := q.read().RetentionList(ctx)
	out, err := all(rows, err, retention)
	if err != nil {
		return nil, wrap(err, "listing retentions")
	}
	return out, nil
}

func retention(r dbsqlc.WorkspaceRetention) *store.WorkspaceRetention {
	w := &store.WorkspaceRetention{WorkspaceID: r.WorkspaceID, KeepDays: int(r.KeepDays), ExportDir: r.ExportDir}
	if r.UpdatedAt != 0 {
		w.UpdatedAt = fromMicros(r.UpdatedAt)
	}
	return w
}

func (q *queries) ConversationExpiredList(ctx context.Context, p *store.ConversationExpiredListParams) ([]*store.ExpiredTree, error) {
	arg := dbsqlc.RetentionExpiredRootsParams{
		WorkspaceID: uuidArg(&p.WorkspaceID), Before: micros(p.Before), Now: micros(p.Now), Limit: limitArg(p.Limit),
	}
	if p.After != nil {
		arg.HasAfter, arg.AfterAt, arg.AfterID = 1, micros(p.After.UpdatedAt), p.After.RootID.String()
	}
	roots, err := q.read().RetentionExpiredRoots(ctx, arg)
	if err != nil {
		return nil, wrap(err, "listing expired conversations of workspace %s", p.WorkspaceID)
	}
	out := make([]*store.ExpiredTree, 0, len(roots))
	for _, r := range roots {
		ids, err := q.read().RetentionTree(ctx, r.ID)
		if err != nil {
			return nil, wrap(err, "listing the forks of conversation %s", r.ID)
		}
		out = append(out, &store.ExpiredTree{RootID: r.ID, UpdatedAt: fromMicros(r.UpdatedAt), IDs: ids})
	}
	return out, nil
}

func (q *queries) ConversationPurge(ctx context.Context, p *store.ConversationPurgeParams) (*store.ConversationPurgeResult, error) {
	out, err := write(ctx, q, func(t *queries) (*store.ConversationPurgeResult, error) {
		tree, err := t.tx.RetentionLockTree(ctx, p.RootID)
		if err != nil {
			return nil, err
		}
		rows := make([]store.PurgeRow, len(tree))
		for i, r := range tree {
			rows[i] = store.PurgeRow{
				ID: r.ID, ParentID: nullUUID(r.ParentID), WorkspaceID: nullUUID(r.WorkspaceID), UpdatedAt: fromMicros(r.UpdatedAt),
				LeaseOwner: r.LeaseOwner, LeaseExpiresAt: nullMicros(r.LeaseExpiresAt),
			}
		}
		busy, err := t.tx.RetentionTreeBusy(ctx, p.RootID)
		if err != nil {
			return nil, err
		}
		if err := store.CheckPurge(p, rows, busy != 0); err != nil {
			return nil, err
		}
		return t.purge(ctx, p.RootID)
	})
	if err != nil {
		return nil, wrap(err, "purging conversation %s", p.RootID)
	}
	return out, nil
}

// purge deletes the tree's rows, what refers to them first.
func (q *queries) purge(ctx context.Context, root uuid.UUID) (*store.ConversationPurgeResult, error) {
	res := &store.ConversationPurgeResult{}
	var err error
	n := func(query func(context.Context, uuid.UUID) (int64, error)) int {
		if err != nil {
			return 0
		}
		var c int64
		c, err = query(ctx, root)
		return int(c)
	}
	do := func(query func(context.Context, uuid.UUID) error) {
		if err == nil {
			err = query(ctx, root)
		}
	}
	db := q.tx
	res.Entries = n(db.PurgeEntries)
	do(db.PurgeDiscardedEntries)
	do(db.PurgeWork)
	do(db.PurgePosted)
	do(db.PurgeLiveStreams)
	do(db.PurgeBindings)
	do(db.PurgeApprovals)
	do(db.PurgeAudit)
	res.Usage = n(db.PurgeUsage)
	do(db.PurgeScheduleRuns)
	do(db.PurgeToolExecutions)
	do(db.PurgeRulebooks)
	do(db.PurgeFiling)
	do(db.PurgeNotes)
	res.Artifacts = n(db.PurgeArtifacts)
	res.Conversations = n(db.PurgeConversations)
	return res, err
}
