package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) ConversationCreate(ctx context.Context, p *store.ConversationCreateParams) (*store.Conversation, error) {
	c, err := write(ctx, q, func(t *queries) (*store.Conversation, error) { return t.conversationInsert(ctx, p, nil, 0, false) })
	if err != nil {
		return nil, wrap(err, "creating conversation %s", p.ID)
	}
	return c, nil
}

// conversationInsert inserts a root conversation, or a fork of parent at
// forkSeq (whose log then ends at forkSeq). titleAuto says whether p's
// Title was taken automatically (store.Conversation.TitleAuto).
func (q *queries) conversationInsert(ctx context.Context, p *store.ConversationCreateParams, parent *store.Conversation, forkSeq int64, titleAuto bool) (*store.Conversation, error) {
	arg := dbsqlc.ConversationInsertParams{
		ID: p.ID, RootID: p.ID, AgentID: uuidArg(p.AgentID),
		Title: p.Title, TitleAuto: boolInt(titleAuto && p.Title != ""), Provider: p.Provider, Model: p.Model, Thinking: p.Thinking,
		Metadata: string(p.Metadata), Now: micros(p.Now),
	}
	if parent != nil {
		arg.RootID, arg.ParentID = parent.RootID, uuid.NullUUID{UUID: parent.ID, Valid: true}
		arg.ForkSeq, arg.LastSeq = sql.NullInt64{Int64: forkSeq, Valid: true}, forkSeq
	}
	r, err := q.tx.ConversationInsert(ctx, arg)
	if err != nil {
		return nil, err
	}
	return conversation(r), nil
}

func (q *queries) ConversationGet(ctx context.Context, id uuid.UUID) (*store.Conversation, error) {
	r, err := q.read().ConversationGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "getting conversation %s", id)
	}
	return conversation(r), nil
}

func (q *queries) ConversationForks(ctx context.Context, id uuid.UUID) ([]*store.Conversation, error) {
	rows, err := q.read().ConversationForks(ctx, uuid.NullUUID{UUID: id, Valid: true})
	out, err := all(rows, err, conversation)
	if err != nil {
		return nil, wrap(err, "listing forks of conversation %s", id)
	}
	return out, nil
}

func (q *queries) ConversationSetStatus(ctx context.Context, p *store.ConversationStatusParams) (*store.Conversation, error) {
	arg := dbsqlc.ConversationSetStatusParams{ID: p.ConversationID, Status: string(p.Status), Now: micros(p.Now)}
	if p.TurnAttempts != nil {
		arg.TurnAttempts = sql.NullInt64{Int64: int64(*p.TurnAttempts), Valid: true}
	}
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Conversation, error) { return t.tx.ConversationSetStatus(ctx, arg) })
	if err != nil {
		return nil, wrap(err, "setting status of conversation %s", p.ConversationID)
	}
	return conversation(r), nil
}

func (q *queries) ConversationLeaseRelease(ctx context.Context, p *store.ConversationLeaseParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		n, err := t.releaseLease(ctx, p.ConversationID, p.Owner, p.Now)
		if err != nil || n > 0 {
			return struct{}{}, err
		}
		return struct{}{}, t.mustExist(ctx, p.ConversationID) // not held by Owner: a no-op
	})
	if err != nil {
		return wrap(err, "releasing lease on conversation %s for %s", p.ConversationID, p.Owner)
	}
	return nil
}

func (q *queries) releaseLease(ctx context.Context, id uuid.UUID, owner string, now time.Time) (int64, error) {
	return q.tx.ConversationLeaseRelease(ctx, dbsqlc.ConversationLeaseReleaseParams{ID: id, Owner: owner, Now: micros(now)})
}

func (q *queries) ConversationListExpiredLeases(ctx context.Context, p *store.ConversationListExpiredLeasesParams) ([]*store.Conversation, error) {
	rows, err := q.read().ConversationListExpiredLeases(ctx, dbsqlc.ConversationListExpiredLeasesParams{Now: micros(p.Now), Limit: limitArg(p.Limit)})
	out, err := all(rows, err, conversation)
	if err != nil {
		return nil, wrap(err, "listing expired conversation leases")
	}
	return out, nil
}

// mustExist returns ErrNotFound when the conversation does not exist.
func (q *queries) mustExist(ctx context.Context, id uuid.UUID) error {
	n, err := q.tx.ConversationExists(ctx, id)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	return err
}

// fence refuses a write by owner unless owner holds the conversation's lease,
// unexpired at now. Callers run it in the writing transaction, on the single
// writer, so the lease cannot change before their write.
func (q *queries) fence(ctx context.Context, id uuid.UUID, owner string, now time.Time) error {
	if owner == "" {
		return nil
	}
	n, err := q.tx.ConversationLeaseHeldBy(ctx, dbsqlc.ConversationLeaseHeldByParams{ID: id, Owner: owner, Now: micros(now)})
	if err != nil || n > 0 {
		return err
	}
	if err := q.mustExist(ctx, id); err != nil {
		return err
	}
	return fmt.Errorf("%w: %q does not hold the lease of conversation %s", store.ErrLeaseLost, owner, id)
}

// orMissing tells "no row changed" apart: ErrNotFound when the row is not
// there (get fails), else err.
func orMissing[T any](err error, get func() (T, error), otherwise error) error {
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if _, gerr := get(); gerr != nil {
		return gerr
	}
	return otherwise
}

func (q *queries) ConversationList(ctx context.Context, p *store.ConversationListParams) ([]*store.Conversation, error) {
	ws, _ := json.Marshal(p.Workspaces) // UUIDs always encode
	arg := dbsqlc.ConversationListedParams{WorkspaceIds: string(ws), Limit: limitArg(p.Limit)}
	if p.All {
		arg.AllWorkspaces = 1
	}
	if p.Before != nil {
		arg.BeforeUpdated, arg.BeforeID = micros(p.Before.UpdatedAt), p.Before.ID.String()
	}
	rows, err := q.read().ConversationListed(ctx, arg)
	out, err := all(rows, err, conversation)
	if err != nil {
		return nil, wrap(err, "listing conversations")
	}
	return out, nil
}
