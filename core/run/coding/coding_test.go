package coding

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/internal/testenv"
)

func newRepos(t *testing.T) *Repos {
	t.Helper()
	r, err := New(Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStepWorktreeCommitDiffPush(t *testing.T) {
	ctx := context.Background()
	bare := testenv.GitRepo(t, map[string]string{"README.md": "hello\n", "main.go": "package main\n"})
	r := newRepos(t)
	src := Source{Name: bare, URL: bare}
	p := Place{Run: "0a1b2c3d", Step: "fix it"}
	w, err := r.Prepare(ctx, src, "", p)
	if err != nil {
		t.Fatal(err)
	}
	if w.Base != "main" || w.Branch != "switchboard/run-0a1b2c3d-fix-it" || w.Resumed {
		t.Fatalf("worktree = %+v", w)
	}
	if got := testenv.Git(t, w.Dir, "rev-parse", "--abbrev-ref", "HEAD"); got != w.Branch {
		t.Fatalf("HEAD is on %q, want %q", got, w.Branch)
	}
	if err := os.WriteFile(filepath.Join(w.Dir, "README.md"), []byte("hello\nworld\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Dir, "new.txt"), []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	commit, changed, err := r.Commit(ctx, w, "atlas", "atlas@agents.localhost", "Fix it\n\nDone.")
	if err != nil || !changed || len(commit) != 40 {
		t.Fatalf("commit = %q, %v, %v", commit, changed, err)
	}
	if got := testenv.Git(t, w.Dir, "log", "-1", "--format=%an <%ae> %s"); got != "atlas <atlas@agents.localhost> Fix it" {
		t.Fatalf("commit is %q", got)
	}
	d, err := r.Diff(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 2 || d.Insertions != 3 || d.Deletions != 0 || !strings.Contains(d.Text, "+world") || !strings.Contains(d.Text, "+++ b/new.txt") {
		t.Fatalf("diff = %+v", d)
	}
	if d.Stat() != "2 files changed, 3 insertions(+), 0 deletions(-)" {
		t.Fatalf("stat = %q", d.Stat())
	}
	if err := r.Push(ctx, w, src); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Git(t, bare, "rev-parse", "refs/heads/"+w.Branch); got != commit {
		t.Fatalf("origin's branch is at %q, want %q", got, commit)
	}
	// Nothing more to commit: the same head, changed false.
	again, changed, err := r.Commit(ctx, w, "atlas", "atlas@agents.localhost", "x")
	if err != nil || changed || again != commit {
		t.Fatalf("second commit = %q, %v, %v", again, changed, err)
	}
	if err := r.Remove(ctx, src, p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Dir); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	if list := testenv.Git(t, w.mirror, "worktree", "list", "--porcelain"); strings.Contains(list, w.Dir) {
		t.Fatalf("the mirror still lists the worktree:\n%s", list)
	}
}

// A step started again after a crash keeps what was committed and loses
// what was not, whether its worktree survived or only its branch did.
func TestPrepareResumes(t *testing.T) {
	ctx := context.Background()
	bare := testenv.GitRepo(t, map[string]string{"a.txt": "1\n"})
	r := newRepos(t)
	src := Source{Name: bare, URL: bare}
	p := Place{Run: "11112222", Step: "s"}
	w, err := r.Prepare(ctx, src, "main", p)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(w.Dir, "a.txt"), []byte("2\n"), 0o600)
	commit, _, err := r.Commit(ctx, w, "a", "a@x.localhost", "two")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(w.Dir, "a.txt"), []byte("half-written"), 0o600)
	_ = os.WriteFile(filepath.Join(w.Dir, "junk.tmp"), []byte("x"), 0o600)

	w2, err := r.Prepare(ctx, src, "main", p)
	if err != nil {
		t.Fatal(err)
	}
	if !w2.Resumed || w2.Dir != w.Dir {
		t.Fatalf("resumed = %+v", w2)
	}
	if b, _ := os.ReadFile(filepath.Join(w2.Dir, "a.txt")); string(b) != "2\n" {
		t.Fatalf("a.txt = %q, want the committed 2", b)
	}
	if _, err := os.Stat(filepath.Join(w2.Dir, "junk.tmp")); !os.IsNotExist(err) {
		t.Fatal("uncommitted junk survived")
	}
	// The worktree gone (another instance's disk, a cleaned folder): the
	// branch in the mirror still carries the commit.
	if err := os.RemoveAll(w.Dir); err != nil {
		t.Fatal(err)
	}
	w3, err := r.Prepare(ctx, src, "main", p)
	if err != nil {
		t.Fatal(err)
	}
	if got := testenv.Git(t, w3.Dir, "rev-parse", "HEAD"); !w3.Resumed || got != commit {
		t.Fatalf("resumed at %q (resumed %v), want %q", got, w3.Resumed, commit)
	}
	d, err := r.Diff(ctx, w3)
	if err != nil || len(d.Files) != 1 || d.Insertions != 1 || d.Deletions != 1 {
		t.Fatalf("diff after resume = %+v, %v", d, err)
	}
}

// Steps of two runs on one repository at once share its mirror and get
// worktrees and branches of their own.
func TestConcurrentSteps(t *testing.T) {
	ctx := context.Background()
	bare := testenv.GitRepo(t, map[string]string{"a.txt": "1\n"})
	r := newRepos(t)
	src := Source{Name: bare, URL: bare}
	var wg sync.WaitGroup
	ws := make([]*Worktree, 4)
	errs := make([]error, 4)
	for i := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := Place{Run: strings.Repeat(string(rune('a'+i)), 8), Step: "s"}
			w, err := r.Prepare(ctx, src, "main", p)
			if err != nil {
				errs[i] = err
				return
			}
			_ = os.WriteFile(filepath.Join(w.Dir, "f.txt"), []byte(p.Run), 0o600)
			if _, _, err := r.Commit(ctx, w, "a", "a@x.localhost", p.Run); err != nil {
				errs[i] = err
				return
			}
			errs[i] = r.Push(ctx, w, src)
			ws[i] = w
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if seen[ws[i].Dir] {
			t.Fatalf("two steps share %s", ws[i].Dir)
		}
		seen[ws[i].Dir] = true
	}
	if got := testenv.Git(t, bare, "for-each-ref", "--format=%(refname)", "refs/heads/switchboard/"); len(strings.Fields(got)) != 4 {
		t.Fatalf("origin's branches:\n%s", got)
	}
	mirrors, _ := filepath.Glob(filepath.Join(r.o.Root, "repos", "*.git"))
	if len(mirrors) != 1 {
		t.Fatalf("mirrors = %v, want one", mirrors)
	}
}

func TestPrepareErrors(t *testing.T) {
	ctx := context.Background()
	bare := testenv.GitRepo(t, map[string]string{"a.txt": "1\n"})
	r := newRepos(t)
	_, err := r.Prepare(ctx, Source{Name: bare, URL: bare}, "nope", Place{Run: "12345678", Step: "s"})
	if err == nil || !strings.Contains(err.Error(), `inputs.base`) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("err = %v, want one naming inputs.base and the branch", err)
	}
	missing := filepath.Join(t.TempDir(), "missing.git")
	_, err = r.Prepare(ctx, Source{Name: missing, URL: missing}, "", Place{Run: "12345678", Step: "s"})
	if err == nil || !strings.Contains(err.Error(), "fetching "+missing) {
		t.Fatalf("err = %v, want a fetch error naming the repository", err)
	}
}

func TestParseRepo(t *testing.T) {
	for in, want := range map[string]Kind{
		"/srv/git/app.git":          KindPath,
		"file:///srv/git/app.git":   KindPath,
		"https://127.0.0.1/app.git": KindURL,
		"ssh://git@127.0.0.1/app":   KindURL,
		"git@127.0.0.1:team/app":    KindURL,
		"octocat/hello-world":       KindGitHub,
	} {
		k, _, err := ParseRepo(in)
		if err != nil || k != want {
			t.Errorf("ParseRepo(%q) = %v, %v; want %v", in, k, err, want)
		}
	}
	for _, in := range []string{"", "relative/path/x", "/srv/git/../../etc", "file:///srv/git/../x", "https://127.0.0.1/team/../other.git", "-oProxyCommand=x@127.0.0.1:team/app", "file://relative", "https://u:secret@127.0.0.1/x.git", "not a repo"} {
		if _, _, err := ParseRepo(in); err == nil || !strings.Contains(err.Error(), "inputs.repo") {
			t.Errorf("ParseRepo(%q) err = %v, want one naming inputs.repo", in, err)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseRepo(%q) err shows the password: %v", in, err)
		}
	}
}

// TestPrepareAfterAnAddCutOff: a crash during `git worktree add` leaves the
// step's worktree registered, missing and locked "initializing"; the next
// attempt's Prepare makes it again (prune alone keeps a locked entry, and
// add refuses it).
func TestPrepareAfterAnAddCutOff(t *testing.T) {
	ctx := context.Background()
	bare := testenv.GitRepo(t, map[string]string{"README.md": "hello\n"})
	r := newRepos(t)
	src := Source{Name: bare, URL: bare}
	p := Place{Run: "0a1b2c3d", Step: "fix"}
	w, err := r.Prepare(ctx, src, "", p)
	if err != nil {
		t.Fatal(err)
	}
	// What the dead process left: the lock git takes while it adds, and no
	// folder.
	testenv.Git(t, w.mirror, "worktree", "lock", "--reason", "initializing", w.Dir)
	if err := os.RemoveAll(w.Dir); err != nil {
		t.Fatal(err)
	}
	again, err := r.Prepare(ctx, src, "", p)
	if err != nil {
		t.Fatalf("Prepare after an add cut off: %v", err)
	}
	if !again.Resumed || again.Dir != w.Dir {
		t.Fatalf("worktree = %+v; want the step's branch resumed in %s", again, w.Dir)
	}
	if got := testenv.Git(t, again.Dir, "rev-parse", "--abbrev-ref", "HEAD"); got != w.Branch {
		t.Fatalf("HEAD is on %q, want %q", got, w.Branch)
	}
}
