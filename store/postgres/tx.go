package postgres

import (
	"context"
	"fmt"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/internal/retry"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// InTx runs fn in one transaction. Notifications caused inside are sent only
// once the commit succeeded. A transient fault rolls the transaction back and
// runs fn again (see the package comment).
func (d *driver) InTx(ctx context.Context, fn func(q store.Queries) error) error {
	return d.inTx(ctx, func(q *queries) error { return fn(q) })
}

// inTx runs fn in a transaction, again after a transient fault, until it
// commits or the retry budget is spent.
//
// Before COMMIT it reads the transaction's id (one more round trip, saved
// when a write inside returned it already: the hot append does). If the
// COMMIT's answer is lost (the connection died while it was in flight, so the
// server may or may not have committed) it asks the server, on another
// connection, what became of that id: committed means done, aborted means
// run fn again. Only when that cannot be learnt does it give up with
// store.ErrOutcomeUnknown, never running fn twice blindly.
func (d *driver) inTx(ctx context.Context, fn func(q *queries) error) error {
	return retry.Do(ctx, d.retryPolicy(), "transaction", store.IsTransient, func() error {
		xid, pending, err := d.tryTx(ctx, fn)
		if err == nil {
			d.notifier.add(pending...)
			return nil
		}
		if xid == 0 {
			return err
		}
		committed, rerr := d.txOutcome(ctx, xid)
		switch {
		case rerr != nil:
			// %v, not %w: the faults are transient, the error must not be,
			// or it would be retried and fn could run twice.
			return fmt.Errorf("%w: transaction %d: %v (finding out: %v)",
				store.ErrOutcomeUnknown, xid, err, rerr)
		case committed:
			d.logger.InfoContext(ctx, "store: the answer to a commit was lost but it had committed",
				"xid", xid, "err", err)
			d.notifier.add(pending...)
			return nil
		default:
			d.logger.DebugContext(ctx, "store: the answer to a commit was lost and it had not committed",
				"xid", xid, "err", err)
			return err // aborted: nothing took effect, fn may run again
		}
	})
}

// tryTx is one attempt. When COMMIT was sent and its answer lost it returns
// the transaction's id (0 when the transaction wrote nothing, so nothing can
// have committed) along with the error.
func (d *driver) tryTx(ctx context.Context, fn func(q *queries) error) (xid int64, pending []note, err error) {
	pool := d.pool
	if store.GroupAhead(ctx) {
		pool = d.groupPool
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("beginning transaction: %w", mapErr(err))
	}
	committed := false
	defer func() {
		if !committed {
			// Rollback on a context already cancelled still releases the
			// connection; its own error adds nothing to fn's.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	db := dbsqlc.New(tx)
	var id int64
	if err := fn(&queries{d: d, db: db, tx: true, pending: &pending, xid: &id}); err != nil {
		return 0, nil, err
	}
	if id == 0 {
		if id, err = db.TxID(ctx); err != nil {
			return 0, nil, fmt.Errorf("reading the transaction id: %w", mapErr(err))
		}
	}
	err = tx.Commit(ctx)
	committed = true // Commit has ended the transaction either way
	if err != nil {
		err = fmt.Errorf("committing transaction: %w", mapErr(err))
		if id != 0 && commitAnswerLost(err) {
			return id, pending, err
		}
		return 0, nil, err
	}
	return 0, pending, nil
}

// txOutcome asks the server whether transaction xid committed. It waits
// (within the retry budget) while the transaction is still in progress,
// which it is until the server has noticed the lost connection.
func (d *driver) txOutcome(ctx context.Context, xid int64) (committed bool, err error) {
	var status string
	err = retry.Do(ctx, d.retryPolicy(), "reading a transaction's outcome", store.IsTransient, func() error {
		var err error
		if status, err = dbsqlc.New(d.pool).TxStatus(ctx, xid); err != nil {
			return mapErr(err)
		}
		if status == "in progress" {
			return fmt.Errorf("%w: transaction %d still in progress", store.ErrTransient, xid)
		}
		return nil
	})
	switch {
	case err != nil:
		return false, err
	case status == "":
		return false, fmt.Errorf("transaction %d is too old for the server to remember", xid)
	}
	return status == "committed", nil
}

func (d *driver) retryPolicy() retry.Policy {
	return retry.Policy{For: d.opts.RetryFor, Logger: d.logger}
}
