package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/internal/retry"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// queries implements store.Queries: outside a transaction (tx nil) reads go
// to the read pool and each write takes a writer transaction of its own;
// inside one, everything runs on it.
type queries struct {
	d   *driver
	tx  *dbsqlc.Queries // the transaction's queries; nil outside one
	raw *sql.Tx
	// savepoints wraps each write call in a savepoint (inside a caller's InTx).
	savepoints bool
	notes      *notes
}

var _ store.Queries = (*queries)(nil)

// read returns the queries a plain read runs on.
func (q *queries) read() *dbsqlc.Queries {
	if q.tx != nil {
		return q.tx
	}
	return q.d.rq
}

func (q *queries) notify(topic, payload string) { q.notes.add(topic, payload) }

// write runs fn so that either all of its writes happen or none: in a
// writer transaction of its own, or inside the caller's (in a savepoint when
// that is an InTx, whose function may go on and commit after a failed call).
// Errors come back mapped to the store's sentinels.
func write[T any](ctx context.Context, q *queries, fn func(t *queries) (T, error)) (T, error) {
	if q.tx == nil {
		return transact(ctx, q.d, false, fn)
	}
	if !q.savepoints {
		out, err := fn(q)
		return out, mapErr(err)
	}
	var zero T
	if _, err := q.raw.ExecContext(ctx, savepointSQL); err != nil {
		return zero, fmt.Errorf("opening savepoint: %w", mapErr(err))
	}
	mark := len(q.notes.list)
	out, err := fn(q)
	if err != nil {
		q.notes.list = q.notes.list[:mark]
		bg := context.WithoutCancel(ctx)
		if _, rbErr := q.raw.ExecContext(bg, savepointRollbackSQL); rbErr != nil {
			return zero, errors.Join(mapErr(err), fmt.Errorf("rolling back savepoint: %w", mapErr(rbErr)))
		}
		if _, rbErr := q.raw.ExecContext(bg, savepointReleaseSQL); rbErr != nil {
			return zero, errors.Join(mapErr(err), fmt.Errorf("releasing savepoint: %w", mapErr(rbErr)))
		}
		return zero, mapErr(err)
	}
	if _, err := q.raw.ExecContext(ctx, savepointReleaseSQL); err != nil {
		return zero, fmt.Errorf("releasing savepoint: %w", mapErr(err))
	}
	return out, nil
}

// transact runs fn in a transaction on the writer, commits, then publishes
// the notifications collected.
//
// A transient fault (the lock busy past BusyTimeout) rolls the transaction
// back and runs fn again, in a new one, until the retry budget is spent. A
// commit here is local: when COMMIT fails nothing was written, so there is
// no outcome to guess.
func transact[T any](ctx context.Context, d *driver, savepoints bool, fn func(q *queries) (T, error)) (T, error) {
	var out T
	err := retry.Do(ctx, d.retry, "write transaction", store.IsTransient, func() error {
		var err error
		out, err = transactOnce(ctx, d, savepoints, fn)
		return err
	})
	return out, err
}

func transactOnce[T any](ctx context.Context, d *driver, savepoints bool, fn func(q *queries) (T, error)) (_ T, err error) {
	var zero T
	if err := d.gate.acquire(ctx, store.GroupAhead(ctx)); err != nil {
		return zero, fmt.Errorf("waiting for the writer: %w", err)
	}
	defer d.gate.release()
	// The statements this transaction met unprepared are prepared once it
	// has ended, while the gate still keeps the writer free.
	defer d.wstmts.preparePending(context.WithoutCancel(ctx))
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return zero, fmt.Errorf("beginning write transaction: %w", mapErr(err))
	}
	committed := false
	defer func() {
		if !committed {
			// Also on panic: a transaction left open would hold the only
			// writer connection forever.
			_ = tx.Rollback()
		}
	}()
	q := &queries{d: d, tx: dbsqlc.New(txDB{tx: tx, c: d.wstmts}), raw: tx, savepoints: savepoints, notes: &notes{}}
	out, err := fn(q)
	if err != nil {
		return zero, mapErr(err)
	}
	if err := tx.Commit(); err != nil {
		return zero, fmt.Errorf("committing write transaction: %w", mapErr(err))
	}
	committed = true
	d.hub.publish(ctx, q.notes.list)
	return out, nil
}

// notes collects the notifications of one write transaction, published after
// it commits.
type notes struct {
	list []store.Notification
}

func (n *notes) add(topic, payload string) {
	for _, x := range n.list {
		if x.Topic == topic && x.Payload == payload {
			return // one wake-up per (topic, payload) per transaction is enough
		}
	}
	n.list = append(n.list, store.Notification{Topic: topic, Payload: payload})
}

// mapErr turns database errors into the store's sentinels so that no driver
// type reaches a caller. Context errors pass through for errors.Is, and so
// do errors already mapped (it is safe to apply twice).
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		// The primary code is the low byte: SQLITE_BUSY_SNAPSHOT,
		// SQLITE_LOCKED_SHAREDCACHE and the like are kinds of these two.
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("%w: %s", store.ErrTransient, se.Error())
		}
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %s", store.ErrConflict, se.Error())
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			// Every foreign key points at a row the caller named (a
			// conversation, a binding): it does not exist.
			return fmt.Errorf("%w: %s", store.ErrNotFound, se.Error())
		case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL:
			return fmt.Errorf("%w: %s", store.ErrInvalid, se.Error())
		}
		return errors.New(se.Error())
	}
	return err
}

// wrap says what was being done, over the mapped error.
func wrap(err error, format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, mapErr(err))...)
}
