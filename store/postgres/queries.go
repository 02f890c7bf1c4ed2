package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/internal/retry"
)

// pgxNoRows is pgx's "no rows" error; it is checked for and translated,
// never returned.
var pgxNoRows = pgx.ErrNoRows

// dbtx is what both the pool and a transaction offer.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queries implements store.Queries on the pool (each call its own
// transaction) or on a transaction (InTx).
type queries struct {
	s  *Store
	db dbtx
	tx bool
	// pending collects the notifications of a transaction until it commits;
	// nil outside one, where each call has committed before it notifies.
	pending *[]note
}

var _ store.Queries = (*queries)(nil)

// notify queues wake-ups: for the commit of the surrounding transaction, or
// at once when the statement that caused them has already committed.
func (q *queries) notify(ns ...note) {
	if q.pending != nil {
		*q.pending = append(*q.pending, ns...)
		return
	}
	q.s.notifier.add(ns...)
}

// atomic runs fn in a transaction: the caller's when there is one, else a new
// one whose notifications are sent after its commit.
func (q *queries) atomic(ctx context.Context, fn func(q *queries) error) error {
	if q.tx {
		return fn(q)
	}
	return q.s.inTx(ctx, fn)
}

// now is the caller's time or the clock's, at the precision Postgres keeps.
func (q *queries) now(t time.Time) time.Time {
	if t.IsZero() {
		t = q.s.opts.Now()
	}
	return ts(t)
}

// ts prepares a time for writing: UTC, truncated (not rounded, as Postgres
// would) to microseconds, so what is read back equals what was written.
func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func tsPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
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

// jsonArg validates caller JSON and passes it as text, which both the
// extended and the simple protocol send to a json column unchanged.
func jsonArg(field string, raw json.RawMessage, def string) (string, error) {
	if len(raw) == 0 {
		return def, nil
	}
	if !json.Valid(raw) {
		return "", fmt.Errorf("%w: %s is not valid JSON", store.ErrInvalid, field)
	}
	return string(raw), nil
}

// limitArg turns "0 means no limit" into LIMIT NULL.
func limitArg(n int) any {
	if n <= 0 {
		return nil
	}
	return n
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// mapErr translates Postgres errors into the store's sentinels, keeping the
// server error in the chain for its detail. pgx.ErrNoRows never gets out.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	if errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrOutcomeUnknown) {
		return err // mapped already
	}
	if transient(err) {
		return fmt.Errorf("%w: %w", store.ErrTransient, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		case "23503": // foreign_key_violation: the row referred to is missing
			return fmt.Errorf("%w: %w", store.ErrNotFound, err)
		case "23514", "23502", "22P02", "22023", "22003": // check, not null, bad text, bad parameter, out of range
			return fmt.Errorf("%w: %w", store.ErrInvalid, err)
		}
	}
	return err
}

// transient reports whether err is a fault that the same work may get past
// if tried again: the connection is gone or could not be made, the server is
// shutting down or starting, or a conflict with another transaction aborted
// this one. The caller's own context ending is not one.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return transientCode(pgErr.Code)
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE)
}

// transientCode reports whether an SQLSTATE names a fault that passes.
func transientCode(code string) bool {
	switch code {
	case "57P01", // admin_shutdown: pg_terminate_backend, a smart or fast shutdown
		"57P02", // crash_shutdown: another backend crashed, the server restarts
		"57P03", // cannot_connect_now: the server is starting up or in recovery
		"40001", // serialization_failure
		"40P01", // deadlock_detected
		"53300": // too_many_connections
		return true
	}
	return strings.HasPrefix(code, "08") // connection_exception and its subclasses
}

// isTransientErr is the retry test for errors already through mapErr.
func isTransientErr(err error) bool { return store.IsTransient(err) }

// commitAnswerLost reports whether a failed COMMIT may nonetheless have
// committed: true unless the COMMIT was never sent or the server answered it
// with an error (an ERROR, as opposed to a FATAL that ends the session, means
// the transaction was rolled back).
func commitAnswerLost(err error) bool {
	if pgconn.SafeToRetry(err) || errors.Is(err, pgx.ErrTxCommitRollback) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Severity == "ERROR" {
		return false
	}
	return true
}

// wrap adds what was being done to a mapped error.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, mapErr(err))...)
}

// ---- rows ----

// Row types mirror the SELECT lists in queries/*.sql and are scanned by
// column name, so a query's column order cannot silently shift fields.

type conversationRow struct {
	ID             uuid.UUID  `db:"id"`
	ParentID       *uuid.UUID `db:"parent_id"`
	RootID         uuid.UUID  `db:"root_id"`
	ForkSeq        *int64     `db:"fork_seq"`
	ChildCount     int        `db:"child_count"`
	AgentID        *uuid.UUID `db:"agent_id"`
	Title          string     `db:"title"`
	Provider       string     `db:"provider"`
	Model          string     `db:"model"`
	Thinking       string     `db:"thinking"`
	Status         string     `db:"status"`
	Metadata       []byte     `db:"metadata"`
	LeaseOwner     string     `db:"lease_owner"`
	LeaseExpiresAt *time.Time `db:"lease_expires_at"`
	HeartbeatAt    *time.Time `db:"heartbeat_at"`
	TurnAttempts   int        `db:"turn_attempts"`
	LastSeq        int64      `db:"last_seq"`
	CreatedAt      time.Time  `db:"created_at"`
	UpdatedAt      time.Time  `db:"updated_at"`
}

func (r *conversationRow) domain() *store.Conversation {
	return &store.Conversation{
		ID:             r.ID,
		ParentID:       r.ParentID,
		RootID:         r.RootID,
		ForkSeq:        r.ForkSeq,
		ChildCount:     r.ChildCount,
		AgentID:        r.AgentID,
		Title:          r.Title,
		Provider:       r.Provider,
		Model:          r.Model,
		Thinking:       r.Thinking,
		Status:         store.ConversationStatus(r.Status),
		Metadata:       jsonOut(r.Metadata),
		LeaseOwner:     r.LeaseOwner,
		LeaseExpiresAt: tsPtr(r.LeaseExpiresAt),
		HeartbeatAt:    tsPtr(r.HeartbeatAt),
		TurnAttempts:   r.TurnAttempts,
		LastSeq:        r.LastSeq,
		CreatedAt:      r.CreatedAt.UTC(),
		UpdatedAt:      r.UpdatedAt.UTC(),
	}
}

type entryRow struct {
	ID             uuid.UUID  `db:"id"`
	ConversationID uuid.UUID  `db:"conversation_id"`
	Seq            *int64     `db:"seq"`
	AfterSeq       int64      `db:"after_seq"`
	Kind           string     `db:"kind"`
	Author         string     `db:"author"`
	Content        []byte     `db:"content"`
	TurnID         *uuid.UUID `db:"turn_id"`
	CreatedAt      time.Time  `db:"created_at"`
}

func (r *entryRow) domain() *store.Entry {
	return &store.Entry{
		ID:             r.ID,
		ConversationID: r.ConversationID,
		Seq:            r.Seq,
		AfterSeq:       r.AfterSeq,
		Kind:           store.EntryKind(r.Kind),
		Author:         r.Author,
		Content:        jsonOut(r.Content),
		TurnID:         r.TurnID,
		CreatedAt:      r.CreatedAt.UTC(),
	}
}

type discardedRow struct {
	entryRow
	Reason      string    `db:"reason"`
	DiscardedAt time.Time `db:"discarded_at"`
}

type workRow struct {
	ID             uuid.UUID  `db:"id"`
	Kind           string     `db:"kind"`
	Payload        []byte     `db:"payload"`
	ConversationID *uuid.UUID `db:"conversation_id"`
	AgentID        *uuid.UUID `db:"agent_id"`
	RunAt          time.Time  `db:"run_at"`
	Priority       int        `db:"priority"`
	Attempts       int        `db:"attempts"`
	MaxAttempts    int        `db:"max_attempts"`
	UniqueKey      *string    `db:"unique_key"`
	State          string     `db:"state"`
	ClaimedBy      string     `db:"claimed_by"`
	LeaseExpiresAt *time.Time `db:"lease_expires_at"`
	LastError      string     `db:"last_error"`
	CreatedAt      time.Time  `db:"created_at"`
	UpdatedAt      time.Time  `db:"updated_at"`
	FinishedAt     *time.Time `db:"finished_at"`
}

func (r *workRow) domain() *store.WorkItem {
	return &store.WorkItem{
		ID:             r.ID,
		Kind:           r.Kind,
		Payload:        jsonOut(r.Payload),
		ConversationID: r.ConversationID,
		AgentID:        r.AgentID,
		RunAt:          r.RunAt.UTC(),
		Priority:       r.Priority,
		Attempts:       r.Attempts,
		MaxAttempts:    r.MaxAttempts,
		UniqueKey:      r.UniqueKey,
		State:          store.WorkState(r.State),
		ClaimedBy:      r.ClaimedBy,
		LeaseExpiresAt: tsPtr(r.LeaseExpiresAt),
		LastError:      r.LastError,
		CreatedAt:      r.CreatedAt.UTC(),
		UpdatedAt:      r.UpdatedAt.UTC(),
		FinishedAt:     tsPtr(r.FinishedAt),
	}
}

// workNextRow is a work row plus the kind of the next available item of its
// conversation, for the wake-up sent when a lease is released.
type workNextRow struct {
	workRow
	NextKind *string `db:"next_kind"`
}

type agentRow struct {
	ID        uuid.UUID `db:"id"`
	Name      string    `db:"name"`
	Config    []byte    `db:"config"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

func (r *agentRow) domain() *store.Agent {
	return &store.Agent{
		ID:        r.ID,
		Name:      r.Name,
		Config:    jsonOut(r.Config),
		CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(),
	}
}

type bindingRow struct {
	ID             uuid.UUID `db:"id"`
	ConversationID uuid.UUID `db:"conversation_id"`
	Platform       string    `db:"platform"`
	Workspace      string    `db:"workspace"`
	Channel        string    `db:"channel"`
	Thread         string    `db:"thread"`
	DeliveredSeq   int64     `db:"delivered_seq"`
	CreatedAt      time.Time `db:"created_at"`
	UpdatedAt      time.Time `db:"updated_at"`
}

func (r *bindingRow) domain() *store.Binding {
	return &store.Binding{
		ID:             r.ID,
		ConversationID: r.ConversationID,
		Platform:       r.Platform,
		Workspace:      r.Workspace,
		Channel:        r.Channel,
		Thread:         r.Thread,
		DeliveredSeq:   r.DeliveredSeq,
		CreatedAt:      r.CreatedAt.UTC(),
		UpdatedAt:      r.UpdatedAt.UTC(),
	}
}

type postedRow struct {
	BindingID  uuid.UUID `db:"binding_id"`
	EntryID    uuid.UUID `db:"entry_id"`
	MessageIDs []string  `db:"message_ids"`
	Pending    bool      `db:"pending"`
	CreatedAt  time.Time `db:"created_at"`
}

type liveStreamRow struct {
	BindingID  uuid.UUID  `db:"binding_id"`
	TurnID     *uuid.UUID `db:"turn_id"`
	MessageIDs []string   `db:"message_ids"`
	UpdatedAt  time.Time  `db:"updated_at"`
}

type approvalRow struct {
	ID             uuid.UUID  `db:"id"`
	ConversationID uuid.UUID  `db:"conversation_id"`
	CallID         string     `db:"call_id"`
	Tool           string     `db:"tool"`
	Kind           string     `db:"kind"`
	Risk           string     `db:"risk"`
	Request        []byte     `db:"request"`
	Deciders       []string   `db:"deciders"`
	Status         string     `db:"status"`
	Decision       []byte     `db:"decision"`
	DecidedBy      string     `db:"decided_by"`
	ExpiresAt      time.Time  `db:"expires_at"`
	DecidedAt      *time.Time `db:"decided_at"`
	CreatedAt      time.Time  `db:"created_at"`
}

func (r *approvalRow) domain() *store.Approval {
	a := &store.Approval{
		ID:             r.ID,
		ConversationID: r.ConversationID,
		CallID:         r.CallID,
		Tool:           r.Tool,
		Kind:           store.ApprovalKind(r.Kind),
		Risk:           r.Risk,
		Request:        jsonOut(r.Request),
		Deciders:       r.Deciders,
		Status:         store.ApprovalStatus(r.Status),
		DecidedBy:      r.DecidedBy,
		ExpiresAt:      r.ExpiresAt.UTC(),
		DecidedAt:      tsPtr(r.DecidedAt),
		CreatedAt:      r.CreatedAt.UTC(),
	}
	if len(a.Deciders) == 0 {
		a.Deciders = nil
	}
	if r.Decision != nil {
		a.Decision = json.RawMessage(r.Decision)
	}
	return a
}

type auditRow struct {
	ID             uuid.UUID  `db:"id"`
	ConversationID *uuid.UUID `db:"conversation_id"`
	Actor          string     `db:"actor"`
	Action         string     `db:"action"`
	Risk           string     `db:"risk"`
	Decision       string     `db:"decision"`
	Result         string     `db:"result"`
	Detail         []byte     `db:"detail"`
	CreatedAt      time.Time  `db:"created_at"`
}

type usageRow struct {
	ID              uuid.UUID  `db:"id"`
	ConversationID  uuid.UUID  `db:"conversation_id"`
	TurnID          *uuid.UUID `db:"turn_id"`
	AgentID         *uuid.UUID `db:"agent_id"`
	Provider        string     `db:"provider"`
	Model           string     `db:"model"`
	InputTokens     int64      `db:"input_tokens"`
	OutputTokens    int64      `db:"output_tokens"`
	CachedTokens    int64      `db:"cached_tokens"`
	ReasoningTokens int64      `db:"reasoning_tokens"`
	CostMicroUSD    int64      `db:"cost_micro_usd"`
	CreatedAt       time.Time  `db:"created_at"`
}

// jsonOut returns stored JSON, "{}" for none: the domain types promise
// never-nil JSON.
func jsonOut(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(b)
}

// one runs a query expected to return one row of T.
func one[T any](ctx context.Context, q *queries, sql string, args ...any) (*T, error) {
	var out *T
	err := q.run(ctx, sql, func(db dbtx) error {
		rows, err := db.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectOneRow(rows, pgx.RowToAddrOfStructByName[T])
		return err
	})
	return out, err
}

// all runs a query returning rows of T.
func all[T any](ctx context.Context, q *queries, sql string, args ...any) ([]*T, error) {
	var out []*T
	err := q.run(ctx, sql, func(db dbtx) error {
		rows, err := db.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowToAddrOfStructByName[T])
		return err
	})
	return out, err
}

// exec runs a statement that returns no rows.
func (q *queries) exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := q.run(ctx, sql, func(db dbtx) error {
		var err error
		tag, err = db.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// scan runs a query returning one row and scans it into dest.
func (q *queries) scan(ctx context.Context, sql string, args []any, dest ...any) error {
	return q.run(ctx, sql, func(db dbtx) error { return db.QueryRow(ctx, sql, args...).Scan(dest...) })
}

// run runs one statement. Inside a transaction it runs once: a fault there
// is the transaction's to retry, whole. Outside one, the statement is its own
// transaction and is run again after a transient fault.
//
// Such a statement is run again even when the connection died after it was
// sent, so it may have committed. That window (the server ending the session
// between committing the statement and answering it) is narrow, and every
// statement here either converges when repeated (upserts, renewals, reads)
// or reports what it then finds: ErrLeaseLost for a completion that had gone
// through, Inserted false for a keyed enqueue, ErrConflict for a decision
// already recorded or for an insert (its id is made in Go before the first
// try, so a repeat hits the primary key instead of adding a second row). Work that must happen exactly once (an append with the
// turn it causes, an inbound message with its dedupe row) runs in InTx,
// whose commit outcome is checked rather than guessed.
//
// The error returned is the driver's own; callers map it with wrap.
func (q *queries) run(ctx context.Context, sql string, fn func(db dbtx) error) error {
	if q.tx {
		return fn(q.db)
	}
	return retry.Do(ctx, q.s.retryPolicy(), queryName(sql), transient, func() error { return fn(q.db) })
}

// exists runs a SELECT EXISTS query.
func (q *queries) exists(ctx context.Context, name string, id uuid.UUID) (bool, error) {
	var ok bool
	err := q.scan(ctx, sqlq.Get(name), []any{id}, &ok)
	return ok, err
}

// queryNames maps each query's text back to its name, for the retry log.
var queryNames = func() map[string]string {
	m := make(map[string]string, len(sqlq))
	for name, sql := range sqlq {
		m[sql] = name
	}
	return m
}()

func queryName(sql string) string {
	if n, ok := queryNames[sql]; ok {
		return n
	}
	return "statement"
}
