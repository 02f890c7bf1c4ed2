package coding

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/tool"
)

// The worktree tools work inside the step's folder and nowhere else: no
// .., no absolute path, no symbolic link out of it, no .git.
func TestWorktreeTools(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	_ = os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	req := &tool.Request{Dir: dir}

	if _, err := write(ctx, req, WriteIn{Path: "pkg/a/b.go", Content: "package a\n"}); err != nil {
		t.Fatal(err)
	}
	got, err := read(ctx, req, ReadIn{Path: "/pkg/a/b.go"})
	if err != nil || got.Content != "package a\n" {
		t.Fatalf("read = %+v, %v", got, err)
	}
	l, err := list(ctx, req, ListIn{})
	if err != nil || !slices.Contains(l.Entries, "pkg/a/b.go") || slices.ContainsFunc(l.Entries, func(e string) bool { return strings.HasPrefix(e, ".git") }) {
		t.Fatalf("list = %+v, %v", l, err)
	}
	for name, call := range map[string]func() error{
		"read through a link out":  func() error { _, err := read(ctx, req, ReadIn{Path: "escape/secret"}); return err },
		"write through a link out": func() error { _, err := write(ctx, req, WriteIn{Path: "escape/new", Content: "x"}); return err },
		"write .git":               func() error { _, err := write(ctx, req, WriteIn{Path: ".git/config", Content: "x"}); return err },
		"delete the root":          func() error { _, err := write(ctx, req, WriteIn{Path: "..", Delete: true}); return err },
		"outside a coding step":    func() error { _, err := read(ctx, &tool.Request{}, ReadIn{Path: "pkg/a/b.go"}); return err },
	} {
		if err := call(); err == nil {
			t.Errorf("%s: allowed", name)
		}
	}
	// .. is cleaned to the root: it reaches a file of the worktree, never
	// one above it.
	if _, err := write(ctx, req, WriteIn{Path: "../../up.txt", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "up.txt")); err != nil {
		t.Errorf("../../up.txt did not land in the worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("a file was written outside the worktree")
	}
	if _, err := write(ctx, req, WriteIn{Path: "pkg/a/b.go", Delete: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pkg/a/b.go")); !os.IsNotExist(err) {
		t.Errorf("the deleted file is there: %v", err)
	}
}
