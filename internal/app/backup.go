package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

// Backup and restore (switchboard backup PATH, switchboard restore PATH).
//
// SQLite: the copy is taken by SQLite itself (VACUUM INTO, see
// store/sqlite/backup.go) while `serve` goes on writing, into a temporary
// file beside PATH; the copy is checked (quick_check, it opens as a store
// with a schema version), synced, and renamed to PATH, so PATH is either
// the old file or a whole, checked copy. Restore copies PATH the same way
// beside the target, checks and migrates the copy there, and renames it
// over the target: never while a live process holds an instance lease in
// the target.
//
// Postgres: pg_dump in its custom format, of the store's schema when
// switchboard_schema is set (else of the whole database), from a snapshot
// the store exports, so the counts printed are those of the dump; restore
// runs pg_restore in one transaction into an empty database or schema, then
// migrates. See backup_postgres.go.

// DefaultBackupOpenTimeout bounds how long backup and restore wait for a
// store to open.
const DefaultBackupOpenTimeout = 15 * time.Second

// BackupOptions configure Backup.
type BackupOptions struct {
	// DatabaseURL names the store to copy (DATABASE_URL).
	DatabaseURL string
	// ListenURL (DATABASE_LISTEN_URL), when set, is the direct connection
	// pg_dump uses: DATABASE_URL may go through a transaction pooler, which
	// pg_dump's session cannot.
	ListenURL string
	// Path is the file to write.
	Path string
	// Force replaces Path when it exists.
	Force bool
	// PgDump is the pg_dump program (SWITCHBOARD_PG_DUMP_PATH, -pg-dump):
	// a path, or a name looked up on PATH. Default "pg_dump".
	PgDump string
	// Environ is the environment pg_dump's PG* variables come from.
	// Default os.Environ().
	Environ []string
	// Logger: default discard.
	Logger *slog.Logger
}

func (o *BackupOptions) validate() error {
	if o.Path == "" {
		return errors.New("backup: no PATH given: switchboard backup PATH")
	}
	if _, err := dial.Parse(o.DatabaseURL); err != nil {
		return err
	}
	return dial.CheckListenURL(o.DatabaseURL, o.ListenURL)
}

func (o *BackupOptions) setDefaults() {
	if o.PgDump == "" {
		o.PgDump = "pg_dump"
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// BackupResult is what Backup wrote.
type BackupResult struct {
	Path    string
	Bytes   int64
	Dialect string
	// Schema is the Postgres schema the store is in ("" for SQLite).
	Schema string
	// WholeDatabase: the Postgres dump is of the whole database (no
	// switchboard_schema), not of one schema.
	WholeDatabase bool
	// SchemaVersion and Conversations are what the copy holds.
	SchemaVersion int
	Conversations int64
}

// Backup writes a consistent copy of the store DatabaseURL names to Path
// while the service keeps running (see the top of this file).
func Backup(ctx context.Context, opts BackupOptions) (*BackupResult, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	if err := checkFree(opts.Path, opts.Force); err != nil {
		return nil, err
	}
	t, _ := dial.Parse(opts.DatabaseURL)
	if t.Driver == "postgres" {
		return backupPostgres(ctx, opts, t)
	}
	return backupSQLite(ctx, opts, t.Path)
}

func backupSQLite(ctx context.Context, opts BackupOptions, src string) (*BackupResult, error) {
	fi, err := os.Stat(src)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("backup: DATABASE_URL names %s, which does not exist: nothing to back up", src)
	case err != nil:
		return nil, fmt.Errorf("backup: reading DATABASE_URL's file: %w", err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("backup: DATABASE_URL names %s, which is not a file", src)
	}
	if same(src, opts.Path) {
		return nil, fmt.Errorf("backup: PATH %s is the database DATABASE_URL names: write the backup elsewhere", opts.Path)
	}
	tmp, err := tempBeside(opts.Path, "backup")
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			removeSQLiteFiles(tmp)
		}
	}()
	// VACUUM INTO writes only into a file that does not exist or is empty:
	// the temporary one is empty.
	if err := withSQLite(ctx, src, opts.Logger, func(s *sqlite.Store) error { return s.BackupInto(ctx, tmp) }); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	var sum *sqlite.Summary
	err = withSQLite(ctx, tmp, opts.Logger, func(s *sqlite.Store) error {
		var err error
		sum, err = s.Inspect(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("backup: checking the copy: %w", err)
	}
	if sum.SchemaVersion == 0 {
		return nil, fmt.Errorf("backup: DATABASE_URL's file %s holds no switchboard store (schema version 0)", src)
	}
	size, err := install(tmp, opts.Path, opts.Force)
	if err != nil {
		return nil, err
	}
	done = true
	return &BackupResult{Path: opts.Path, Bytes: size, Dialect: sqlite.Dialect, SchemaVersion: sum.SchemaVersion, Conversations: sum.Conversations}, nil
}

// RestoreOptions configure Restore.
type RestoreOptions struct {
	// DatabaseURL names the store to restore into (DATABASE_URL).
	DatabaseURL string
	// ListenURL (DATABASE_LISTEN_URL), when set, is the direct connection
	// pg_restore uses.
	ListenURL string
	// Path is the backup to restore.
	Path string
	// Force replaces a SQLite file that holds data (never one a live
	// process holds). Postgres restores only into an empty database or
	// schema, forced or not.
	Force bool
	// PgRestore is the pg_restore program (SWITCHBOARD_PG_RESTORE_PATH,
	// -pg-restore). Default "pg_restore".
	PgRestore string
	// Environ is the environment pg_restore's PG* variables come from.
	// Default os.Environ().
	Environ []string
	Logger  *slog.Logger
	Now     func() time.Time

	// verdict tells whether a lease's holder still runs; nil:
	// processVerdict.
	verdict func(*store.InstanceLease) verdict
}

func (o *RestoreOptions) validate() error {
	if o.Path == "" {
		return errors.New("restore: no PATH given: switchboard restore PATH")
	}
	if _, err := dial.Parse(o.DatabaseURL); err != nil {
		return err
	}
	return dial.CheckListenURL(o.DatabaseURL, o.ListenURL)
}

func (o *RestoreOptions) setDefaults() {
	if o.PgRestore == "" {
		o.PgRestore = "pg_restore"
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.verdict == nil {
		o.verdict = processVerdict
	}
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	// Where is the store restored into, as the start-up log names it.
	Where   string
	Dialect string
	// BackupVersion is the schema version the backup held; SchemaVersion
	// the version after migrating.
	BackupVersion int
	SchemaVersion int
	Conversations int64
}

// Restore puts the backup at Path into the store DatabaseURL names (see
// the top of this file), then migrates it.
func Restore(ctx context.Context, opts RestoreOptions) (*RestoreResult, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	fi, err := os.Stat(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("restore: reading PATH: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("restore: PATH %s is not a file", opts.Path)
	}
	kind, err := backupKind(opts.Path)
	if err != nil {
		return nil, err
	}
	t, _ := dial.Parse(opts.DatabaseURL)
	if kind != t.Driver {
		return nil, fmt.Errorf("restore: PATH %s is a %s backup, and DATABASE_URL names a %s store: a backup restores into the kind of store it came from", opts.Path, kind, t.Driver)
	}
	if t.Driver == "postgres" {
		if opts.Force {
			return nil, errors.New("restore: -force is for a SQLite file: a Postgres restore goes only into an empty database or schema (create a new one, or drop the old one yourself)")
		}
		return restorePostgres(ctx, opts, t)
	}
	return restoreSQLite(ctx, opts, t.Path)
}

// backupKind tells a SQLite file from a pg_dump custom-format archive by
// their first bytes.
func backupKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("restore: reading PATH: %w", err)
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	switch {
	case bytes.HasPrefix(head[:n], []byte("SQLite format 3\x00")):
		return "sqlite", nil
	case bytes.HasPrefix(head[:n], []byte("PGDMP")):
		return "postgres", nil
	}
	return "", fmt.Errorf("restore: PATH %s is neither a SQLite database nor a pg_dump custom-format archive: not a switchboard backup", path)
}

func restoreSQLite(ctx context.Context, opts RestoreOptions, target string) (*RestoreResult, error) {
	if same(target, opts.Path) {
		return nil, fmt.Errorf("restore: PATH %s is the database DATABASE_URL names", opts.Path)
	}
	where, _ := storeWhere(opts.DatabaseURL)
	if err := checkTarget(ctx, opts, target); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return nil, fmt.Errorf("restore: creating the database directory: %w", err)
	}
	// The copy is checked and migrated beside the target, so the target is
	// replaced only by a whole file this binary can run.
	tmp, err := tempBeside(target, "restore")
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			removeSQLiteFiles(tmp)
		}
	}()
	if err := copyFile(opts.Path, tmp); err != nil {
		return nil, err
	}
	res := &RestoreResult{Where: where, Dialect: sqlite.Dialect}
	err = withSQLite(ctx, tmp, opts.Logger, func(s *sqlite.Store) error {
		sum, err := s.Inspect(ctx)
		if err != nil {
			return err
		}
		if err := checkBackupVersion(opts.Path, sum.SchemaVersion, sqlite.Dialect); err != nil {
			return err
		}
		res.BackupVersion = sum.SchemaVersion
		if res.SchemaVersion, err = s.Migrate(ctx); err != nil {
			return fmt.Errorf("migrating the restored copy: %w", err)
		}
		after, err := s.Inspect(ctx)
		if err != nil {
			return err
		}
		res.Conversations = after.Conversations
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	// Once more, just before the swap: a process may have started meanwhile.
	if err := checkTarget(ctx, opts, target); err != nil {
		return nil, err
	}
	// A -wal or -shm left beside the target belongs to the old file: SQLite
	// would play that log onto the restored one.
	for _, side := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(target + side); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("restore: removing the old %s%s: %w", target, side, err)
		}
	}
	if _, err := install(tmp, target, true); err != nil {
		return nil, err
	}
	done = true
	return res, nil
}

// checkTarget refuses to replace a SQLite file that holds data, unless
// Force, and in any case one where a live process holds an instance lease.
func checkTarget(ctx context.Context, opts RestoreOptions, target string) error {
	used := false
	for _, p := range []string{target, target + "-wal"} {
		fi, err := os.Stat(p)
		if err == nil && fi.Size() > 0 {
			used = true
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restore: reading DATABASE_URL's file: %w", err)
		}
	}
	if !used {
		return nil
	}
	if !opts.Force {
		return fmt.Errorf("restore: DATABASE_URL names %s, which holds data: pass -force to replace it (stop the service first), or restore into a new file", target)
	}
	var leases []*store.InstanceLease
	err := withSQLite(ctx, target, opts.Logger, func(s *sqlite.Store) error {
		var err error
		leases, err = s.InstanceLeases(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("restore: reading %s to make sure no process uses it: %w (if the file is damaged, stop the service and move it away by hand)", target, err)
	}
	now := opts.Now()
	for _, l := range leases {
		if !l.Live(now) {
			continue
		}
		if opts.verdict(l) == dead {
			opts.Logger.InfoContext(ctx, "a live instance lease in the target belongs to a process that is gone", "instance_id", l.InstanceID, "pid", l.PID, "host", l.Host)
			continue
		}
		return fmt.Errorf("restore: %s is in use: instance %q holds it, pid %d on host %s, last heartbeat %s ago; stop that process first (a process that died lets go within SWITCHBOARD_LEASE_TTL)",
			target, l.InstanceID, l.PID, l.Host, now.Sub(l.HeartbeatAt).Round(time.Millisecond))
	}
	return nil
}

// checkBackupVersion refuses a backup with no store in it, or one whose
// schema is newer than this binary's.
func checkBackupVersion(path string, version int, dialect string) error {
	latest, err := migrations.Latest(dialect)
	if err != nil {
		return err
	}
	switch {
	case version == 0:
		return fmt.Errorf("PATH %s holds no switchboard store (schema version 0)", path)
	case version > latest:
		return fmt.Errorf("PATH %s is at schema version %d, newer than this binary's %d: restore it with the release that wrote it, or a newer one (switchboard version prints a binary's schema)", path, version, latest)
	}
	return nil
}

// withSQLite opens the SQLite store at path (not migrated) for fn.
func withSQLite(ctx context.Context, path string, log *slog.Logger, fn func(*sqlite.Store) error) error {
	octx, cancel := context.WithTimeout(ctx, DefaultBackupOpenTimeout)
	s, err := sqlite.Open(octx, sqlite.Options{Path: path, Logger: log})
	cancel()
	if err != nil {
		return err
	}
	err = fn(s)
	return errors.Join(err, s.Close())
}

// checkFree refuses a PATH that exists, unless force; and one that is not
// a file, in any case.
func checkFree(path string, force bool) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("backup: PATH: %w", err)
	case fi.IsDir():
		return fmt.Errorf("backup: PATH %s is a directory: name the file to write", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("backup: PATH %s exists and is not a regular file", path)
	case !force:
		return fmt.Errorf("backup: PATH %s exists: pass -force to replace it", path)
	}
	return nil
}

// tempBeside creates an empty file in path's directory, so that a rename
// puts it in place atomically.
func tempBeside(path, what string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"."+what+"-*")
	if err != nil {
		return "", fmt.Errorf("%s: creating a temporary file beside %s: %w", what, path, err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return name, nil
}

// install syncs tmp and renames it to path (refusing an existing path
// unless force), then syncs the directory, so that after a crash path is
// either what it was or the whole new file. It returns the file's size.
func install(tmp, path string, force bool) (int64, error) {
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("syncing %s: %w", tmp, err)
	}
	err = f.Sync()
	fi, serr := f.Stat()
	if cerr := f.Close(); err == nil {
		err = errors.Join(serr, cerr)
	}
	if err != nil {
		return 0, fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if !force {
		// Checked first, and again here: something may have written PATH
		// while the copy ran.
		if _, err := os.Lstat(path); err == nil {
			return 0, fmt.Errorf("PATH %s exists: pass -force to replace it", path)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, fmt.Errorf("putting the copy in place at %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		_ = d.Close()
		if err != nil {
			return 0, fmt.Errorf("syncing the directory of %s: %w", path, err)
		}
	}
	return fi.Size(), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("reading PATH: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("copying PATH: %w", err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copying PATH to %s: %w", dst, err)
	}
	return nil
}

// removeSQLiteFiles removes a database file and the files SQLite keeps
// beside it.
func removeSQLiteFiles(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		_ = os.Remove(p)
	}
}

// same reports whether a and b are one file (both existing).
func same(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
