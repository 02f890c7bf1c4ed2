// Package dbtemplate gives tests a fresh copy of a migrated SQLite file
// instead of migrating a new one for each test. modernc's SQLite is Go code,
// and under the race detector all of it is instrumented: migrating the
// schema takes about 1.6 s of CPU there (0.17 s without), a copy of the
// result a few milliseconds. Hundreds of tests open a store, so this is most
// of what the suite's CPU went to.
//
// The migrated file is built once and kept in the user's cache folder under
// a name that hashes the SQLite migrations (and the SQLite library's
// version), so every test process and every later run shares it until a
// migration changes. The driver sets nothing else in the file when it
// opens one: its other pragmas are per connection. It is written under a
// temporary name and renamed into place when complete: concurrent builders
// (go test runs packages in parallel) each finish their own and the last
// rename wins, with identical content.
//
// The package imports no store driver: the caller passes the function that
// migrates a file, so the driver's own tests can use it too.
package dbtemplate

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	"github.com/switchboardhq/switchboard/migrations"
)

// Migrate creates a migrated SQLite database at path (which does not exist
// yet) and closes it, leaving the whole database in that one file.
type Migrate func(path string) error

// mu keeps this process's tests from building the template twice at once.
var mu sync.Mutex

// migrationsKey names the template: the migrations and the SQLite library
// are those built into the process, so it is computed once.
var migrationsKey = sync.OnceValues(hashMigrations)

// CopySQLite writes a migrated SQLite database to dst, which must not exist:
// a copy of the template, built with migrate when there is none for the
// current migrations.
func CopySQLite(dst string, migrate Migrate) error {
	tmpl, err := sqliteTemplate(migrate)
	if err != nil {
		return err
	}
	return copyFile(tmpl, dst)
}

// sqliteTemplate returns the path of the template for the current SQLite
// migrations, building it first when it is missing.
func sqliteTemplate(migrate Migrate) (string, error) {
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	key, err := migrationsKey()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "sqlite-"+key+".db")
	mu.Lock()
	defer mu.Unlock()
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := filepath.Join(dir, "building-"+randomHex()+".db")
	defer removeAll(tmp)
	if err := migrate(tmp); err != nil {
		return "", fmt.Errorf("building the migrated SQLite template: %w", err)
	}
	// A database left with a write-ahead log would not be whole in the file.
	for _, suffix := range []string{"-wal", "-journal"} {
		if fi, err := os.Stat(tmp + suffix); err == nil && fi.Size() > 0 {
			return "", fmt.Errorf("building the migrated SQLite template: %s%s remains after the store closed", tmp, suffix)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("placing the migrated SQLite template: %w", err)
	}
	return path, nil
}

// hashMigrations hashes the SQLite migrations' versions, names and SQL, and
// the version of the SQLite library that writes the file.
func hashMigrations() (string, error) {
	ms, err := migrations.Load("sqlite")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "modernc.org/sqlite" {
				fmt.Fprintf(h, "%s@%s\x00", d.Path, d.Version)
			}
		}
	}
	for _, m := range ms {
		fmt.Fprintf(h, "%d\x00%s\x00%d\x00%s\x00", m.Version, m.Name, len(m.SQL), m.SQL)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// cacheDir is where templates are kept: the user's cache folder, or the
// temporary folder when there is none or it cannot be written.
func cacheDir() (string, error) {
	var errs []error
	bases := []string{os.TempDir()}
	if base, err := os.UserCacheDir(); err == nil {
		bases = append([]string{base}, bases...)
	}
	for _, base := range bases {
		dir := filepath.Join(base, "switchboard-test", "templates")
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("creating the template folder: %w", errors.Join(errs...))
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copying the migrated SQLite template: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("copying the migrated SQLite template: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("copying the migrated SQLite template: %w", cerr)
		}
	}()
	if _, err := io.Copy(out, in); err != nil {
		return fmt.Errorf("copying the migrated SQLite template to %s: %w", dst, err)
	}
	return nil
}

func removeAll(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		_ = os.Remove(p)
	}
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
