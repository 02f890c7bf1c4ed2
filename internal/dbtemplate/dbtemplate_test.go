package dbtemplate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The template is built once and every copy is its content, on a file of
// the copy's own.
func TestCopySQLiteBuildsOnceAndCopies(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	calls := 0
	migrate := func(path string) error {
		calls++
		return os.WriteFile(path, []byte("migrated"), 0o600)
	}
	dir := t.TempDir()
	for _, name := range []string{"a.db", "b.db"} {
		if err := CopySQLite(filepath.Join(dir, name), migrate); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != "migrated" {
			t.Fatalf("%s holds %q (%v), want the template's content", name, b, err)
		}
	}
	if calls != 1 {
		t.Fatalf("migrate ran %d times, want once", calls)
	}
	// A copy is a file of its own: writing one leaves the other alone.
	if err := os.WriteFile(filepath.Join(dir, "a.db"), []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.db")); string(b) != "migrated" {
		t.Fatalf("b.db holds %q after a.db changed", b)
	}
	// An existing destination is refused, not overwritten.
	if err := CopySQLite(filepath.Join(dir, "a.db"), migrate); err == nil {
		t.Fatal("copying over an existing file succeeded")
	}
}

// A build that leaves a write-ahead log behind is refused: the file alone
// would not hold the whole database. Nothing is placed as the template.
func TestCopySQLiteRefusesATemplateWithALog(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	migrate := func(path string) error {
		if err := os.WriteFile(path, []byte("half"), 0o600); err != nil {
			return err
		}
		return os.WriteFile(path+"-wal", []byte("the rest"), 0o600)
	}
	err := CopySQLite(filepath.Join(t.TempDir(), "a.db"), migrate)
	if err == nil || !strings.Contains(err.Error(), "-wal remains") {
		t.Fatalf("err = %v, want the leftover log named", err)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "switchboard-test", "templates", "*"))
	if len(left) != 0 {
		t.Fatalf("the failed build left %v", left)
	}
}
