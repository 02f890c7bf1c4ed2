package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) WorkEnqueue(ctx context.Context, p *store.WorkEnqueueParams) (*store.WorkEnqueueResult, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkEnqueue, &dbsqlc.WorkEnqueueParams{
		ID: newID(), Kind: p.Kind, Payload: p.Payload, ConversationID: p.ConversationID, AgentID: p.AgentID,
		RunAt: ts(p.RunAt), Priority: int32(p.Priority), MaxAttempts: int32(p.MaxAttempts),
		UniqueKey: p.UniqueKey, OrderingKey: p.OrderingKey, Now: ts(p.Now),
	})
	switch {
	case err == nil:
		q.notify(store.TopicWork, p.Kind)
		return &store.WorkEnqueueResult{Item: workItem(&row), Inserted: true}, nil
	case errors.Is(err, errNoRow) && p.UniqueKey != nil:
		// The key exists. In READ COMMITTED this statement sees the row that
		// won, even one committed while our insert waited on it.
		row, err := call(ctx, q, (*dbsqlc.Queries).WorkGetByUniqueKey, p.UniqueKey)
		if err != nil {
			return nil, wrap(err, "enqueueing %s work: reading the item with key %q", p.Kind, *p.UniqueKey)
		}
		return &store.WorkEnqueueResult{Item: workItem(&row)}, nil
	default:
		return nil, wrap(err, "enqueueing %s work", p.Kind)
	}
}

// claimConns caps the claim pool: claims are one statement each, and each
// claim loop (a worker lane) runs one at a time.
const claimConns = 4

// WorkClaim outside a transaction commits asynchronously (its transaction
// runs with synchronous_commit off, see claimDB): a claim waits for no WAL
// flush, which halves its time, and the claim loop, one claim at a time,
// is what bounds a busy worker. Nothing is lost by it. Visibility is at
// commit as always, so no other claimer can take the items. Only a server
// crash can lose the claim, within about wal_writer_delay of it, and then
// the items are as if never claimed: available, the attempt not counted.
// Anything their handlers commit durably (an entry, a post intent, the
// completion) flushes the WAL up to that commit, which includes the
// claim's, so no durable effect of a handler can outlive its claim.
func (q *queries) WorkClaim(ctx context.Context, p *store.WorkClaimParams) ([]*store.WorkItem, error) {
	now := ts(p.Now)
	if !q.tx {
		c := *q
		c.db = q.d.claims
		q = &c
	}
	args := &dbsqlc.WorkClaimParams{
		Worker: p.Worker, Kinds: p.Kinds, MaxItems: int32(p.Limit), Now: now, LeaseExpiresAt: ts(now.Add(p.LeaseTTL)),
	}
	var rows []dbsqlc.WorkItem
	var err error
	if p.AvailableOnly {
		rows, err = call(ctx, q, (*dbsqlc.Queries).WorkClaimAvailable, (*dbsqlc.WorkClaimAvailableParams)(args))
	} else {
		rows, err = call(ctx, q, (*dbsqlc.Queries).WorkClaim, args)
	}
	if err != nil {
		return nil, wrap(err, "claiming work for %s", p.Worker)
	}
	// RETURNING has no order; hand items out in claim order.
	slices.SortFunc(rows, func(a, b dbsqlc.WorkItem) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.RunAt.Compare(b.RunAt),
			a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID.String(), b.ID.String()))
	})
	return each(rows, workItem), nil
}

func (q *queries) WorkHeartbeat(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	now := ts(p.Now)
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkHeartbeat, &dbsqlc.WorkHeartbeatParams{
		ID: p.ID, Worker: p.Worker, Now: now, LeaseExpiresAt: ts(now.Add(p.LeaseTTL)),
	})
	if err != nil {
		return nil, q.leaseErr(ctx, err, p.ID, "heartbeating work %s", p.ID)
	}
	return workItem((*dbsqlc.WorkItem)(&row)), nil
}

func (q *queries) WorkComplete(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkComplete, &dbsqlc.WorkCompleteParams{
		ID: p.ID, Worker: p.Worker, Now: ts(p.Now),
	})
	if err != nil {
		return nil, q.leaseErr(ctx, err, p.ID, "completing work %s", p.ID)
	}
	return q.released(&row), nil
}

func (q *queries) WorkCompleteMany(ctx context.Context, p *store.WorkCompleteManyParams) ([]*store.WorkItem, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).WorkCompleteMany, &dbsqlc.WorkCompleteManyParams{
		Ids: uuidStrings(p.IDs), Worker: p.Worker, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "completing %d work items for %s", len(p.IDs), p.Worker)
	}
	return each(rows, func(r *dbsqlc.WorkCompleteManyRow) *store.WorkItem {
		return q.released((*dbsqlc.WorkCompleteRow)(r))
	}), nil
}

func (q *queries) WorkFail(ctx context.Context, p *store.WorkFailParams) (*store.WorkItem, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkFail, &dbsqlc.WorkFailParams{
		ID: p.ID, Worker: p.Worker, LastError: p.Error, Now: ts(p.Now), RetryAt: ts(p.RetryAt),
	})
	if err != nil {
		return nil, q.leaseErr(ctx, err, p.ID, "failing work %s", p.ID)
	}
	if row.State == string(store.WorkAvailable) {
		q.notify(store.TopicWork, row.Kind)
	}
	return q.released((*dbsqlc.WorkCompleteRow)(&row)), nil
}

func (q *queries) WorkRelease(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkRelease, &dbsqlc.WorkReleaseParams{
		ID: p.ID, Worker: p.Worker, Now: ts(p.Now),
	})
	if err != nil {
		return nil, q.leaseErr(ctx, err, p.ID, "releasing work %s", p.ID)
	}
	// The item itself is claimable again, before any other of its conversation.
	q.notify(store.TopicWork, row.Kind)
	return workItem((*dbsqlc.WorkItem)(&row)), nil
}

func (q *queries) WorkReclaim(ctx context.Context, p *store.WorkReclaimParams) ([]*store.WorkItem, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).WorkReclaim, &dbsqlc.WorkReclaimParams{Worker: p.Worker, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "reclaiming the work of %s", p.Worker)
	}
	return each(rows, func(r *dbsqlc.WorkReclaimRow) *store.WorkItem {
		if r.State == string(store.WorkAvailable) {
			q.notify(store.TopicWork, r.Kind)
		}
		return workItem((*dbsqlc.WorkItem)(r))
	}), nil
}

func (q *queries) WorkGet(ctx context.Context, id uuid.UUID) (*store.WorkItem, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkGet, id)
	if err != nil {
		return nil, wrap(err, "getting work %s", id)
	}
	return workItem(&row), nil
}

func (q *queries) WorkList(ctx context.Context, p *store.WorkListParams) ([]*store.WorkItem, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).WorkList, &dbsqlc.WorkListParams{
		States: strs(p.States), Kind: p.Kind, ConversationID: p.ConversationID, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing work")
	}
	return each(rows, workItem), nil
}

func (q *queries) WorkPrune(ctx context.Context, p *store.WorkPruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).WorkPrune, &dbsqlc.WorkPruneParams{
		FinishedBefore: ts(p.FinishedBefore), MaxRows: int32(p.Limit),
	})
	return int(n), wrap(err, "pruning work finished before %s", p.FinishedBefore)
}

// leaseErr explains why a statement guarded by "running and claimed by the
// worker" matched no row: the item is gone, or the lease is not ours.
func (q *queries) leaseErr(ctx context.Context, err error, id uuid.UUID, format string, args ...any) error {
	if errors.Is(err, errNoRow) {
		ok, xerr := call(ctx, q, (*dbsqlc.Queries).WorkExists, id)
		switch {
		case xerr != nil:
			err = xerr
		case ok:
			err = store.ErrLeaseLost
		default:
			err = store.ErrNotFound
		}
	}
	return wrap(err, format, args...)
}

// released maps the row of a statement that released a conversation's
// lease or ended an item of an ordering key, and wakes workers for the item
// that made claimable.
func (q *queries) released(r *dbsqlc.WorkCompleteRow) *store.WorkItem {
	if r.NextKind != "" {
		q.notify(store.TopicWork, r.NextKind)
	}
	return workItem(&dbsqlc.WorkItem{
		ID: r.ID, Kind: r.Kind, Payload: r.Payload, ConversationID: r.ConversationID, AgentID: r.AgentID,
		RunAt: r.RunAt, Priority: r.Priority, Attempts: r.Attempts, MaxAttempts: r.MaxAttempts,
		UniqueKey: r.UniqueKey, OrderingKey: r.OrderingKey, State: r.State, ClaimedBy: r.ClaimedBy, LeaseExpiresAt: r.LeaseExpiresAt,
		LastError: r.LastError, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt,
	})
}

func workItem(r *dbsqlc.WorkItem) *store.WorkItem {
	return &store.WorkItem{
		ID:             r.ID,
		Kind:           r.Kind,
		Payload:        r.Payload,
		ConversationID: r.ConversationID,
		AgentID:        r.AgentID,
		RunAt:          r.RunAt,
		Priority:       int(r.Priority),
		Attempts:       int(r.Attempts),
		MaxAttempts:    int(r.MaxAttempts),
		UniqueKey:      r.UniqueKey,
		OrderingKey:    r.OrderingKey,
		State:          store.WorkState(r.State),
		ClaimedBy:      r.ClaimedBy,
		LeaseExpiresAt: r.LeaseExpiresAt,
		LastError:      r.LastError,
		CreatedAt:      r.CreatedAt,
		UpdatedAt:      r.UpdatedAt,
		FinishedAt:     r.FinishedAt,
	}
}

// enqueueRow is one item of WorkEnqueueMany's statement: a row of its
// json_to_recordset, n its place in the call.
type enqueueRow struct {
	ID             uuid.UUID       `json:"id"`
	Kind           string          `json:"kind"`
	Payload        json.RawMessage `json:"payload"`
	ConversationID *uuid.UUID      `json:"conversation_id"`
	AgentID        *uuid.UUID      `json:"agent_id"`
	RunAt          time.Time       `json:"run_at"`
	Priority       int             `json:"priority"`
	MaxAttempts    int             `json:"max_attempts"`
	UniqueKey      *string         `json:"unique_key"`
	OrderingKey    *string         `json:"ordering_key"`
	Now            time.Time       `json:"now"`
	N              int             `json:"n"`
}

// WorkEnqueueMany inserts every item in one statement. Outside a
// transaction it is one commit, and a statement whose answer was lost is
// sent again (an item it had inserted then comes back as its key's existing
// item); that is safe only for keyed items, so a call with an unkeyed item
// runs in a transaction, whose lost commit inTx settles. Under GroupAhead
// (EnqueueGroup) it runs on the group commit's connections.
func (q *queries) WorkEnqueueMany(ctx context.Context, ps []*store.WorkEnqueueParams) ([]*store.WorkEnqueueResult, error) {
	if !q.tx && slices.ContainsFunc(ps, func(p *store.WorkEnqueueParams) bool { return p.UniqueKey == nil }) {
		var out []*store.WorkEnqueueResult
		err := q.d.inTx(ctx, func(t *queries) (err error) {
			out, err = t.WorkEnqueueMany(ctx, ps)
			return err
		})
		return out, err
	}
	if !q.tx && store.GroupAhead(ctx) {
		c := *q
		c.db = dbsqlc.New(q.d.groupPool)
		q = &c
	}
	rows := make([]enqueueRow, len(ps))
	for i, p := range ps {
		rows[i] = enqueueRow{
			ID: newID(), Kind: p.Kind, Payload: p.Payload, ConversationID: p.ConversationID, AgentID: p.AgentID,
			RunAt: ts(p.RunAt), Priority: p.Priority, MaxAttempts: p.MaxAttempts,
			UniqueKey: p.UniqueKey, OrderingKey: p.OrderingKey, Now: ts(p.Now), N: i,
		}
	}
	enc, err := json.Marshal(rows)
	if err != nil {
		return nil, fmt.Errorf("enqueueing %d work items: encoding them: %w", len(ps), err)
	}
	got, err := call(ctx, q, (*dbsqlc.Queries).WorkEnqueueMany, json.RawMessage(enc))
	if err != nil {
		return nil, wrap(err, "enqueueing %d work items", len(ps))
	}
	byID := make(map[uuid.UUID]*dbsqlc.WorkItem, len(got))
	for i := range got {
		byID[got[i].ID] = &got[i]
	}
	out := make([]*store.WorkEnqueueResult, len(ps))
	var taken []string
	for i, p := range ps {
		if r, ok := byID[rows[i].ID]; ok {
			q.notify(store.TopicWork, p.Kind)
			out[i] = &store.WorkEnqueueResult{Item: workItem(r), Inserted: true}
		} else if p.UniqueKey != nil {
			taken = append(taken, *p.UniqueKey)
		}
	}
	if len(taken) == 0 {
		return out, nil
	}
	// In READ COMMITTED this statement sees the rows that won, even those
	// committed while the insert waited on them.
	existing, err := call(ctx, q, (*dbsqlc.Queries).WorkListByUniqueKeys, taken)
	if err != nil {
		return nil, wrap(err, "enqueueing %d work items: reading the %d whose keys exist", len(ps), len(taken))
	}
	byKey := make(map[string]*dbsqlc.WorkItem, len(existing))
	for i := range existing {
		byKey[*existing[i].UniqueKey] = &existing[i]
	}
	for i, p := range ps {
		if out[i] != nil {
			continue
		}
		r, ok := byKey[*p.UniqueKey]
		if !ok {
			return nil, fmt.Errorf("enqueueing %s work: the item with key %q was neither inserted nor found", p.Kind, *p.UniqueKey)
		}
		out[i] = &store.WorkEnqueueResult{Item: workItem(r)}
	}
	return out, nil
}
