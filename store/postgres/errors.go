package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard/store"
)

// errNoRow is what pgx.ErrNoRows becomes: a store.ErrNotFound that the
// driver can tell apart from a foreign key naming a missing row, since a
// statement guarded by a WHERE also returns no row when the guard failed.
var errNoRow = fmt.Errorf("no matching row: %w", store.ErrNotFound)

// mapErr translates Postgres errors into the store's sentinels, keeping the
// server error in the chain for its detail. pgx.ErrNoRows never gets out.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return errNoRow
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

// wrap adds what was being done to a mapped error.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
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
