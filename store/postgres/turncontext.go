package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// TurnContextGet sends the turn's reads in one batch: one round trip
// instead of one each. The agent's personality is found through the
// conversation's row in the same statement, since the batch cannot wait
// for the conversation's answer to name the agent.
func (q *queries) TurnContextGet(ctx context.Context, conversationID uuid.UUID) (*store.TurnContext, error) {
	var tc *store.TurnContext
	err := q.do(ctx, (*queries).TurnContextGet, func() error {
		var err error
		tc, err = q.turnContext(ctx, conversationID)
		return err
	})
	if err != nil {
		return nil, wrap(err, "reading the turn context of %s", conversationID)
	}
	return tc, nil
}

func (q *queries) turnContext(ctx context.Context, id uuid.UUID) (*store.TurnContext, error) {
	var (
		conv     dbsqlc.Conversation
		summary  dbsqlc.Entry
		bindings []dbsqlc.Binding
		rules    dbsqlc.ConversationRulebook
		side     dbsqlc.SideThread
		deleg    dbsqlc.Delegation
		persona  dbsqlc.AgentPersonality
	)
	found := make([]bool, 7)
	reads := []func(*dbsqlc.Queries) error{
		func(db *dbsqlc.Queries) (err error) { conv, err = db.ConversationGet(ctx, id); return err },
		func(db *dbsqlc.Queries) (err error) { summary, err = db.EntryLatestSummary(ctx, id); return err },
		func(db *dbsqlc.Queries) (err error) {
			bindings, err = db.BindingListByConversation(ctx, id)
			return err
		},
		func(db *dbsqlc.Queries) (err error) { rules, err = db.RulebookGet(ctx, id); return err },
		func(db *dbsqlc.Queries) (err error) { side, err = db.SideThreadByChild(ctx, id); return err },
		func(db *dbsqlc.Queries) (err error) { deleg, err = db.DelegationByChild(ctx, id); return err },
		func(db *dbsqlc.Queries) (err error) { persona, err = db.PersonalityOfConversation(ctx, id); return err },
	}
	err := batchRead(ctx, q.db.DB(), reads, func(i int, err error) error {
		switch {
		case err == nil:
			found[i] = true
			return nil
		case errors.Is(err, pgx.ErrNoRows) && i > 0:
			return nil // an optional row: absent
		default:
			return err
		}
	})
	if err != nil {
		return nil, err
	}
	tc := &store.TurnContext{Conversation: conversation(&conv), Bindings: each(bindings, binding)}
	if found[1] {
		tc.LatestSummary = entry(&summary)
	}
	if found[3] {
		tc.Rulebook = rulebook(&rules)
	}
	if found[4] {
		tc.SideThread = sideThread(&side)
	}
	if found[5] {
		tc.Delegation = delegation(&deleg)
	}
	if found[6] {
		tc.Personality = personality(&persona)
	}
	return tc, nil
}

// batchRead runs generated read queries in one pgx.Batch: one round trip
// for all of them, each still scanned by its generated code. Each read is
// called twice: first against a recorder that queues its statement and
// arguments, then, once the batch is sent, against the batch's results in
// the same order. result sees each read's error (nil on success) and
// decides what stops the batch.
func batchRead(ctx context.Context, db dbsqlc.DBTX, reads []func(*dbsqlc.Queries) error, result func(i int, err error) error) error {
	rec := &batchDB{}
	recQ := dbsqlc.New(rec)
	for i, r := range reads {
		if err := r(recQ); !errors.Is(err, errQueued) {
			return fmt.Errorf("batching read %d: %w", i, err)
		}
		if rec.batch.Len() != i+1 {
			return fmt.Errorf("batching read %d: it queued %d statements, want 1", i, rec.batch.Len()-i)
		}
	}
	rec.results = db.SendBatch(ctx, &rec.batch)
	var err error
	for i, r := range reads {
		if err = result(i, r(recQ)); err != nil {
			break
		}
	}
	if cerr := rec.results.Close(); err == nil {
		err = cerr
	}
	return err
}

// errQueued is what a read returns while batchRead records it.
var errQueued = errors.New("queued in a batch")

// batchDB is the dbsqlc.DBTX batchRead hands the generated queries:
// recording while results is nil, answering from results after.
type batchDB struct {
	batch   pgx.Batch
	results pgx.BatchResults
}

func (b *batchDB) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errors.New("batchRead takes reads only")
}

func (b *batchDB) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	if b.results == nil {
		b.batch.Queue(sql, args...)
		return nil, errQueued
	}
	return b.results.Query()
}

func (b *batchDB) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	if b.results == nil {
		b.batch.Queue(sql, args...)
		return queuedRow{}
	}
	return b.results.QueryRow()
}

func (b *batchDB) SendBatch(context.Context, *pgx.Batch) pgx.BatchResults {
	panic("batchRead does not nest batches")
}

type queuedRow struct{}

func (queuedRow) Scan(...any) error { return errQueued }
