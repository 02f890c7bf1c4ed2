package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) WorkspaceRetentionSet(ctx context.Context, p *store.WorkspaceRetentionSetParams) (*store.WorkspaceRetention, error) {
	var out *store.WorkspaceRetention
	err := q.atomic(ctx, func(t *queries) error {
		// An unknown workspace is ErrNotFound, also when clearing.
		if _, err := call(ctx, t, (*dbsqlc.Queries).WorkspaceGet, p.WorkspaceID); err != nil {
			return err
		}
		if p.KeepDays == 0 {
			out = &store.WorkspaceRetention{WorkspaceID: p.WorkspaceID}
			return exec(ctx, t, (*dbsqlc.Queries).RetentionClear, p.WorkspaceID)
		}
		row, err := call(ctx, t, (*dbsqlc.Queries).RetentionSet, &dbsqlc.RetentionSetParams{
			WorkspaceID: p.WorkspaceID, KeepDays: int32(p.KeepDays), ExportDir: p.ExportDir, Now: ts(p.Now),
		})
		out = retention(&row)
		return err
	})
	if err != nil {
		return nil, wrap(err, "setting the retention of workspace %s", p.WorkspaceID)
	}
	return out, nil
}

func (q *queries) WorkspaceRetentionGet(ctx context.Context, id uuid.UUID) (*store.WorkspaceRetention, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).RetentionGet, id)
	if err == nil {
		return retention(&row), nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, wrap(err, "reading the retention of workspace %s", id)
	}
	if _, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceGet, id); err != nil {
		return nil, wrap(err, "reading the retention of workspace %s", id)
	}
	return &store.WorkspaceRetention{WorkspaceID: id}, nil
}

func (q *queries) WorkspaceRetentionList(ctx context.Context) ([]*store.WorkspaceRetention, error) {
	rows, err := call(ctx, q, func(db *dbsqlc.Queries, ctx context.Context, _ struct{}) ([]dbsqlc.WorkspaceRetention, error) {
		return db.RetentionList(ctx)
	}, struct{}{})
	if err != nil {
		return nil, wrap(err, "listing retentions")
	}
	out := make([]*store.WorkspaceRetention, len(rows))
	for i := range rows {
		out[i] = retention(&rows[i])
	}
	return out, nil
}

func retention(r *dbsqlc.WorkspaceRetention) *store.WorkspaceRetention {
	return &store.WorkspaceRetention{WorkspaceID: r.WorkspaceID, KeepDays: int(r.KeepDays), ExportDir: r.ExportDir, UpdatedAt: r.UpdatedAt}
}

func (q *queries) ConversationExpiredList(ctx context.Context, p *store.ConversationExpiredListParams) ([]*store.ExpiredTree, error) {
	arg := &dbsqlc.RetentionExpiredRootsParams{WorkspaceID: &p.WorkspaceID, Before: ts(p.Before), Now: ts(p.Now), MaxRows: int32(p.Limit)}
	if p.After != nil {
		at := ts(p.After.UpdatedAt)
		arg.AfterAt, arg.AfterID = &at, &p.After.RootID
	}
	roots, err := call(ctx, q, (*dbsqlc.Queries).RetentionExpiredRoots, arg)
	if err != nil {
		return nil, wrap(err, "listing expired conversations of workspace %s", p.WorkspaceID)
	}
	out := make([]*store.ExpiredTree, 0, len(roots))
	for _, r := range roots {
		ids, err := call(ctx, q, (*dbsqlc.Queries).RetentionTree, r.ID)
		if err != nil {
			return nil, wrap(err, "listing the forks of conversation %s", r.ID)
		}
		out = append(out, &store.ExpiredTree{RootID: r.ID, UpdatedAt: r.UpdatedAt, IDs: ids})
	}
	return out, nil
}

func (q *queries) ConversationPurge(ctx context.Context, p *store.ConversationPurgeParams) (*store.ConversationPurgeResult, error) {
	res := &store.ConversationPurgeResult{}
	err := q.atomic(ctx, func(t *queries) error {
		tree, err := call(ctx, t, (*dbsqlc.Queries).RetentionLockTree, p.RootID)
		if err != nil {
			return err
		}
		rows := make([]store.PurgeRow, len(tree))
		for i, r := range tree {
			rows[i] = store.PurgeRow{ID: r.ID, ParentID: r.ParentID, WorkspaceID: r.WorkspaceID, UpdatedAt: r.UpdatedAt, LeaseOwner: r.LeaseOwner, LeaseExpiresAt: r.LeaseExpiresAt}
		}
		busy, err := call(ctx, t, (*dbsqlc.Queries).RetentionTreeBusy, p.RootID)
		if err != nil {
			return err
		}
		if err := store.CheckPurge(p, rows, busy != nil && *busy); err != nil {
			return err
		}
		return t.purge(ctx, p.RootID, res)
	})
	if err != nil {
		return nil, wrap(err, "purging conversation %s", p.RootID)
	}
	return res, nil
}

// purge deletes the tree's rows, what refers to them first.
func (q *queries) purge(ctx context.Context, root uuid.UUID, res *store.ConversationPurgeResult) error {
	var err error
	n := func(query func(*dbsqlc.Queries, context.Context, uuid.UUID) (int64, error)) int {
		if err != nil {
			return 0
		}
		var c int64
		c, err = call(ctx, q, query, root)
		return int(c)
	}
	do := func(query func(*dbsqlc.Queries, context.Context, uuid.UUID) error) {
		if err == nil {
			err = exec(ctx, q, query, root)
		}
	}
	res.Entries = n((*dbsqlc.Queries).PurgeEntries)
	do((*dbsqlc.Queries).PurgeDiscardedEntries)
	do((*dbsqlc.Queries).PurgeWork)
	do((*dbsqlc.Queries).PurgePosted)
	do((*dbsqlc.Queries).PurgeLiveStreams)
	do((*dbsqlc.Queries).PurgeBindings)
	do((*dbsqlc.Queries).PurgeApprovals)
	do((*dbsqlc.Queries).PurgeAudit)
	res.Usage = n((*dbsqlc.Queries).PurgeUsage)
	do((*dbsqlc.Queries).PurgeScheduleRuns)
	do((*dbsqlc.Queries).PurgeToolExecutions)
	do((*dbsqlc.Queries).PurgeRulebooks)
	do((*dbsqlc.Queries).PurgeFiling)
	do((*dbsqlc.Queries).PurgeNotes)
	res.Artifacts = n((*dbsqlc.Queries).PurgeArtifacts)
	res.Conversations = n((*dbsqlc.Queries).PurgeConversations)
	return err
}
