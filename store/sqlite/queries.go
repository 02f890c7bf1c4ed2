package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/switchboardhq/switchboard/store"
)

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

// queries implements store.Queries over a transaction or the read pool.
type queries struct {
	db dbtx
	s  *Store
	// savepoints wraps each write call in a savepoint (inside a caller's InTx).
	savepoints bool
	// notes is nil on the read pool, which never writes.
	notes *notes
}

var _ store.Queries = (*queries)(nil)

func (q *queries) now(t time.Time) time.Time {
	if t.IsZero() {
		return q.s.nowFunc()
	}
	return t
}

func (q *queries) notify(topic, payload string) {
	if q.notes != nil {
		q.notes.add(topic, payload)
	}
}

// atomic runs fn so that either all of its writes happen or none: inside a
// caller's transaction through a savepoint, otherwise the call's own
// transaction already rolls back on error.
func (q *queries) atomic(ctx context.Context, fn func() error) error {
	if q.notes == nil {
		return errors.New("sqlite store: write on the read pool") // a driver bug
	}
	if !q.savepoints {
		return fn()
	}
	if _, err := exec(ctx, q.db, "SavepointBegin"); err != nil {
		return fmt.Errorf("opening savepoint: %w", err)
	}
	mark := len(q.notes.list)
	if err := fn(); err != nil {
		q.notes.list = q.notes.list[:mark]
		bg := context.WithoutCancel(ctx)
		if _, rbErr := exec(bg, q.db, "SavepointRollback"); rbErr != nil {
			return errors.Join(err, fmt.Errorf("rolling back savepoint: %w", rbErr))
		}
		if _, rbErr := exec(bg, q.db, "SavepointRelease"); rbErr != nil {
			return errors.Join(err, fmt.Errorf("releasing savepoint: %w", rbErr))
		}
		return err
	}
	if _, err := exec(ctx, q.db, "SavepointRelease"); err != nil {
		return fmt.Errorf("releasing savepoint: %w", err)
	}
	return nil
}

// mapErr turns database errors into the store's sentinels so that no driver
// type reaches a caller. Context errors pass through for errors.Is.
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

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", store.ErrInvalid, fmt.Sprintf(format, args...))
}

// ---- conversions between Go values and columns ----

// newID returns a time-ordered UUID (v7), which keeps inserts at the end of
// the primary key index.
func newID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.New()
	}
	return id
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

func uuidArg(id *uuid.UUID) any {
	if id == nil {
		return nil
	}
	return id.String()
}

func nullUUID(v uuid.NullUUID) *uuid.UUID {
	if !v.Valid {
		return nil
	}
	id := v.UUID
	return &id
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	n := v.Int64
	return &n
}

func int64Arg(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func strArg(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// jsonArg validates raw JSON for a column, defaulting nil to def.
func jsonArg(field string, raw json.RawMessage, def string) (string, error) {
	if len(raw) == 0 {
		return def, nil
	}
	if !json.Valid(raw) {
		return "", invalid("%s is not valid JSON", field)
	}
	return string(raw), nil
}

// limitArg maps "0 means no limit" to SQLite's LIMIT -1.
func limitArg(n int) int64 {
	if n <= 0 {
		return -1
	}
	return int64(n)
}

type scanner interface{ Scan(dest ...any) error }

func scanConversation(r scanner) (*store.Conversation, error) {
	var (
		c                store.Conversation
		parent, agent    uuid.NullUUID
		forkSeq          sql.NullInt64
		leaseExp, hb     sql.NullInt64
		status, meta     string
		created, updated int64
	)
	if err := r.Scan(&c.ID, &parent, &c.RootID, &forkSeq, &c.ChildCount, &agent,
		&c.Title, &c.Provider, &c.Model, &c.Thinking, &status, &meta,
		&c.LeaseOwner, &leaseExp, &hb, &c.TurnAttempts, &c.LastSeq, &created, &updated); err != nil {
		return nil, err
	}
	c.ParentID = nullUUID(parent)
	c.AgentID = nullUUID(agent)
	c.ForkSeq = nullInt(forkSeq)
	c.Status = store.ConversationStatus(status)
	c.Metadata = json.RawMessage(meta)
	c.LeaseExpiresAt = nullMicros(leaseExp)
	c.HeartbeatAt = nullMicros(hb)
	c.CreatedAt = fromMicros(created)
	c.UpdatedAt = fromMicros(updated)
	return &c, nil
}

func scanEntry(r scanner, extra ...any) (*store.Entry, error) {
	var (
		e             store.Entry
		seq           sql.NullInt64
		kind, content string
		turn          uuid.NullUUID
		created       int64
	)
	dest := append([]any{&e.ID, &e.ConversationID, &seq, &e.AfterSeq, &kind, &e.Author, &content, &turn, &created}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	e.Seq = nullInt(seq)
	e.Kind = store.EntryKind(kind)
	e.Content = json.RawMessage(content)
	e.TurnID = nullUUID(turn)
	e.CreatedAt = fromMicros(created)
	return &e, nil
}

func scanWork(r scanner) (*store.WorkItem, error) {
	var (
		w                       store.WorkItem
		payload, state          string
		conv, agent             uuid.NullUUID
		runAt, created, updated int64
		unique                  sql.NullString
		leaseExp, finished      sql.NullInt64
	)
	if err := r.Scan(&w.ID, &w.Kind, &payload, &conv, &agent, &runAt, &w.Priority,
		&w.Attempts, &w.MaxAttempts, &unique, &state, &w.ClaimedBy, &leaseExp,
		&w.LastError, &created, &updated, &finished); err != nil {
		return nil, err
	}
	w.Payload = json.RawMessage(payload)
	w.ConversationID = nullUUID(conv)
	w.AgentID = nullUUID(agent)
	w.RunAt = fromMicros(runAt)
	if unique.Valid {
		k := unique.String
		w.UniqueKey = &k
	}
	w.State = store.WorkState(state)
	w.LeaseExpiresAt = nullMicros(leaseExp)
	w.CreatedAt = fromMicros(created)
	w.UpdatedAt = fromMicros(updated)
	w.FinishedAt = nullMicros(finished)
	return &w, nil
}

// collect reads every row of rows with scan.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// queryList runs a query and scans every row, mapping errors.
func queryList[T any](ctx context.Context, db dbtx, name string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	rows, err := db.query(ctx, name, args...)
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := collect(rows, scan)
	return out, mapErr(err)
}

// queryOne runs a query expected to return one row; ErrNotFound when none.
func queryOne[T any](ctx context.Context, db dbtx, name string, scan func(scanner) (T, error), args ...any) (T, error) {
	v, err := scan(db.queryRow(ctx, name, args...))
	return v, mapErr(err)
}

func exec(ctx context.Context, db dbtx, name string, args ...any) (int64, error) {
	res, err := db.exec(ctx, name, args...)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n, mapErr(err)
}

func count(ctx context.Context, db dbtx, name string, args ...any) (int64, error) {
	var n int64
	err := db.queryRow(ctx, name, args...).Scan(&n)
	return n, mapErr(err)
}
