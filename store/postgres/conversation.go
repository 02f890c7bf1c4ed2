package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) ConversationCreate(ctx context.Context, p *store.ConversationCreateParams) (*store.Conversation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ConversationCreate, &dbsqlc.ConversationCreateParams{
		ID: p.ID, AgentID: p.AgentID, Title: p.Title, Provider: p.Provider, Model: p.Model,
		Thinking: p.Thinking, Metadata: p.Metadata, Now: ts(p.Now),
	})
	if errors.Is(err, errNoRow) {
		return nil, fmt.Errorf("creating conversation %s: %w: id already exists", p.ID, store.ErrConflict)
	}
	if err != nil {
		return nil, wrap(err, "creating conversation %s", p.ID)
	}
	return conversation(&row), nil
}

func (q *queries) ConversationGet(ctx context.Context, id uuid.UUID) (*store.Conversation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).ConversationGet, id)
	if err != nil {
		return nil, wrap(err, "getting conversation %s", id)
	}
	return conversation(&row), nil
}

func (q *queries) ConversationForks(ctx context.Context, id uuid.UUID) ([]*store.Conversation, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ConversationForks, &id)
	if err != nil {
		return nil, wrap(err, "listing forks of conversation %s", id)
	}
	return each(rows, conversation), nil
}

func (q *queries) ConversationSetStatus(ctx context.Context, p *store.ConversationStatusParams) (*store.Conversation, error) {
	var attempts *int32
	if p.TurnAttempts != nil {
		attempts = new(int32(*p.TurnAttempts))
	}
	row, err := call(ctx, q, (*dbsqlc.Queries).ConversationSetStatus, &dbsqlc.ConversationSetStatusParams{
		ID: p.ConversationID, Status: string(p.Status), TurnAttempts: attempts, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "setting status of conversation %s", p.ConversationID)
	}
	return conversation(&row), nil
}

func (q *queries) ConversationLeaseRelease(ctx context.Context, p *store.ConversationLeaseParams) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).ConversationLeaseRelease, &dbsqlc.ConversationLeaseReleaseParams{
		ID: p.ConversationID, Owner: p.Owner, Now: ts(p.Now),
	})
	if err == nil && n == 0 {
		// Not the holder: nothing to release, unless there is no such conversation.
		err = q.mustExist(ctx, p.ConversationID)
	}
	return wrap(err, "releasing lease on conversation %s", p.ConversationID)
}

func (q *queries) ConversationListExpiredLeases(ctx context.Context, p *store.ConversationListExpiredLeasesParams) ([]*store.Conversation, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ConversationListExpiredLeases, &dbsqlc.ConversationListExpiredLeasesParams{
		Now: ts(p.Now), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing expired conversation leases")
	}
	return each(rows, conversation), nil
}

// mustExist is ErrNotFound when the conversation does not exist.
func (q *queries) mustExist(ctx context.Context, id uuid.UUID) error {
	ok, err := call(ctx, q, (*dbsqlc.Queries).ConversationExists, id)
	if err == nil && !ok {
		err = store.ErrNotFound
	}
	return err
}

func conversation(r *dbsqlc.Conversation) *store.Conversation {
	return &store.Conversation{
		ID:             r.ID,
		ParentID:       r.ParentID,
		RootID:         r.RootID,
		ForkSeq:        r.ForkSeq,
		ChildCount:     int(r.ChildCount),
		AgentID:        r.AgentID,
		WorkspaceID:    r.WorkspaceID,
		ContentRev:     r.ContentRev,
		Title:          r.Title,
		TitleAuto:      r.TitleAuto,
		Provider:       r.Provider,
		Model:          r.Model,
		Thinking:       r.Thinking,
		Status:         store.ConversationStatus(r.Status),
		Metadata:       r.Metadata,
		LeaseOwner:     r.LeaseOwner,
		LeaseExpiresAt: r.LeaseExpiresAt,
		HeartbeatAt:    r.HeartbeatAt,
		TurnAttempts:   int(r.TurnAttempts),
		LastSeq:        r.LastSeq,
		CreatedAt:      r.CreatedAt,
		UpdatedAt:      r.UpdatedAt,
	}
}

func (q *queries) ConversationList(ctx context.Context, p *store.ConversationListParams) ([]*store.Conversation, error) {
	arg := &dbsqlc.ConversationListParams{AllWorkspaces: p.All, WorkspaceIds: uuidStrings(p.Workspaces), MaxRows: int32(p.Limit)}
	if p.Before != nil {
		arg.BeforeUpdated, arg.BeforeID = tsPtr(&p.Before.UpdatedAt), p.Before.ID
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).ConversationList, arg)
	if err != nil {
		return nil, wrap(err, "listing conversations")
	}
	return each(rows, conversation), nil
}
