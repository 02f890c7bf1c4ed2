package postgres

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/internal/retry"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// queries implements store.Queries with the generated queries, on the pool
// (each call its own transaction) or on a transaction (InTx).
type queries struct {
	d  *driver
	db *dbsqlc.Queries
	tx bool
	// pending collects the notifications of a transaction until it commits;
	// nil outside one, where each call has committed before it notifies.
	pending *[]note
	// xid is the transaction's id once a write returned it (0: not yet);
	// nil outside a transaction. tryTx reads it before COMMIT when no
	// write did (see wrote).
	xid *int64
}

// wrote records the transaction id a write returned along with its rows,
// which saves tryTx reading it before COMMIT: a transaction's id, once it
// has one, never changes.
func (q *queries) wrote(xid int64) {
	if q.xid != nil && xid != 0 {
		*q.xid = xid
	}
}

var _ store.Queries = (*queries)(nil)

// call runs one generated query with arg. Inside a transaction it runs once:
// a fault there is the transaction's to retry, whole. Outside one, the
// statement is its own transaction and is run again after a transient fault.
//
// Such a statement is run again even when the connection died after it was
// sent, so it may have committed. That window (the server ending the session
// between committing the statement and answering it) is narrow, and every
// statement here either converges when repeated (upserts, renewals, reads)
// or reports what it then finds: ErrLeaseLost for a completion that had gone
// through, Inserted false for a keyed enqueue, ErrConflict for a decision
// already recorded or for an insert (its id is made in Go before the first
// try, so a repeat hits the primary key instead of adding a second row).
// Work that must happen exactly once (an append with the turn it causes, an
// inbound message with its dedupe row) runs in InTx, whose commit outcome is
// checked rather than guessed.
//
// The error returned is mapped (mapErr); callers say what they were doing.
func call[A, T any](ctx context.Context, q *queries, query func(*dbsqlc.Queries, context.Context, A) (T, error), arg A) (T, error) {
	var out T
	err := q.do(ctx, query, func() (err error) {
		out, err = query(q.db, ctx, arg)
		return err
	})
	return out, err
}

// exec is call for a query that returns nothing.
func exec[A any](ctx context.Context, q *queries, query func(*dbsqlc.Queries, context.Context, A) error, arg A) error {
	return q.do(ctx, query, func() error { return query(q.db, ctx, arg) })
}

func (q *queries) do(ctx context.Context, query any, fn func() error) error {
	err := fn()
	if err == nil || q.tx || !transient(err) {
		return mapErr(err)
	}
	// retry.Do starts with a call; hand it the fault already met.
	fault, met := err, false
	err = retry.Do(ctx, q.d.retryPolicy(), queryName(query), transient, func() error {
		if !met {
			met = true
			return fault
		}
		return fn()
	})
	return mapErr(err)
}

// queryName is the name of a generated query's method, for the retry log.
func queryName(query any) string {
	name := runtime.FuncForPC(reflect.ValueOf(query).Pointer()).Name()
	return strings.TrimSuffix(name[strings.LastIndex(name, ".")+1:], "-fm")
}

// notify queues wake-ups: for the commit of the surrounding transaction, or
// at once when the statement that caused them has already committed.
func (q *queries) notify(topic, payload string) {
	if q.pending != nil {
		*q.pending = append(*q.pending, note{topic: topic, payload: payload})
		return
	}
	q.d.notifier.add(note{topic: topic, payload: payload})
}

// atomic runs fn in a transaction: the caller's when there is one, else a new
// one whose notifications are sent after its commit.
func (q *queries) atomic(ctx context.Context, fn func(q *queries) error) error {
	if q.tx {
		return fn(q)
	}
	return q.d.inTx(ctx, fn)
}

// ts prepares a time for writing: UTC, truncated (not rounded, as Postgres
// would) to microseconds, so what is read back equals what was written.
func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func tsPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := ts(*t)
	return &u
}

// newID returns a time-ordered UUID (v7), which keeps primary-key inserts at
// the right edge of the index and sorts rows created at one instant in
// creation order.
func newID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system's random source does.
		return uuid.New()
	}
	return id
}

// each maps rows to domain values.
func each[R, T any](rows []R, f func(*R) *T) []*T {
	out := make([]*T, len(rows))
	for i := range rows {
		out[i] = f(&rows[i])
	}
	return out
}

// strs converts typed strings (states, kinds) for a text[] parameter.
func strs[S ~string](in []S) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}

// optStr passes a typed optional string: NULL for nil.
func optStr[S ~string](p *S) *string {
	if p == nil {
		return nil
	}
	s := string(*p)
	return &s
}
