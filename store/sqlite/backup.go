package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/switchboardhq/switchboard/store"
)

// Online backup.
//
// A copy of a database that another process keeps writing must be taken
// by SQLite itself: copying the file (and its -wal) byte by byte can catch
// a checkpoint half done. SQLite offers two ways, and modernc.org/sqlite
// exposes both: the online backup API (conn.NewBackup, Backup.Step) and
// VACUUM INTO. BackupInto uses VACUUM INTO:
//
//   - It is one statement that reads the database in one read transaction:
//     the copy is the database as of one commit. In WAL mode that read
//     blocks no writer: `serve` goes on committing meanwhile (the WAL
//     only grows until the read ends, since a checkpoint cannot pass it).
//   - The backup API copies pages in steps, and a write by another
//     connection between two steps restarts the copy from the first page:
//     under steady load a stepped backup may never finish. One step of all
//     pages (Step(-1)) is consistent too, but then nothing can cancel it,
//     and it is reached only through database/sql's Conn.Raw and a type
//     assertion on the driver's unexported connection.
//   - VACUUM INTO is a plain statement: ctx cancels it (the driver
//     interrupts the statement), and it writes a compact file, without the
//     free pages of the original.
//
// What it costs: VACUUM INTO rebuilds every table and index of the copy,
// so it takes more CPU than a page copy of the same file.
const (
	// The file must not exist or be empty. It runs on the writer
	// connection: the read pool is query_only, which refuses it, though it
	// writes nothing to this database and takes no write lock on it.
	vacuumIntoSQL = "VACUUM INTO ?"
	// quick_check: the structure of every page and index entry, without
	// the cross-check of each index against its table that integrity_check
	// adds. One row "ok", or up to 100 rows naming problems.
	quickCheckSQL = "PRAGMA quick_check"
)

// BackupInto writes a consistent copy of the database, as of one commit,
// to path, which must not exist or be an empty file. Other connections and
// processes keep reading and writing meanwhile. The copy is not synced to
// disk: the caller does that before it relies on it.
func (s *Store) BackupInto(ctx context.Context, path string) error {
	if _, err := s.d.w.ExecContext(ctx, vacuumIntoSQL, path); err != nil {
		return fmt.Errorf("copying the database into %s (VACUUM INTO): %w", path, mapErr(err))
	}
	return nil
}

// Summary is what a database file holds, as Inspect reads it.
type Summary struct {
	// SchemaVersion is the highest migration applied; 0 for a file that
	// holds no store.
	SchemaVersion int
	// Conversations counts the conversations, forks included.
	Conversations int64
}

// ErrCorrupt: PRAGMA quick_check found the file damaged.
var ErrCorrupt = errors.New("sqlite database is damaged")

func (s *Store) quickCheck(ctx context.Context) error {
	fail := func(err error) error {
		// A page too damaged to walk stops quick_check itself.
		var se *sqlite.Error
		if errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_CORRUPT || se.Code()&0xff == sqlite3.SQLITE_NOTADB) {
			return fmt.Errorf("%w: quick_check: %s", ErrCorrupt, se.Error())
		}
		return fmt.Errorf("checking the database (quick_check): %w", mapErr(err))
	}
	rows, err := s.d.r.QueryContext(ctx, quickCheckSQL)
	if err != nil {
		return fail(err)
	}
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			_ = rows.Close()
			return fail(err)
		}
		found = append(found, line)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fail(err)
	}
	if len(found) != 1 || found[0] != "ok" {
		return fmt.Errorf("%w: quick_check: %s", ErrCorrupt, strings.Join(found, "; "))
	}
	return nil
}

// Inspect checks the file's structure (PRAGMA quick_check) and reads what
// it holds. A damaged file gives ErrCorrupt with SQLite's findings.
func (s *Store) Inspect(ctx context.Context) (*Summary, error) {
	if err := s.quickCheck(ctx); err != nil {
		return nil, err
	}
	applied, _, err := s.d.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	sum := &Summary{SchemaVersion: applied}
	if applied == 0 {
		return sum, nil // no store: no tables to count
	}
	if sum.Conversations, err = s.d.rq.BackupConversationCount(ctx); err != nil {
		return nil, wrap(err, "counting conversations")
	}
	return sum, nil
}

// InstanceLeases are the instance leases in the file, live or expired
// (store.InstanceLease.Live tells); none in a file that holds no store.
// A restore reads them before it replaces the file: a process that holds
// one may still have the file open.
func (s *Store) InstanceLeases(ctx context.Context) ([]*store.InstanceLease, error) {
	applied, _, err := s.d.SchemaVersion(ctx)
	if err != nil || applied == 0 {
		return nil, err
	}
	rows, err := s.d.rq.BackupInstanceLeases(ctx)
	if err != nil {
		return nil, wrap(err, "reading instance leases")
	}
	out := make([]*store.InstanceLease, 0, len(rows))
	for _, r := range rows {
		out = append(out, instanceLease(r))
	}
	return out, nil
}
