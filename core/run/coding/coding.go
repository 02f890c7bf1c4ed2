// Package coding gives a run's coding steps a repository to work in: one
// mirror per repository under the data folder, fetched before each step
// and shared by every run, and a fresh git worktree per step on its own
// branch (switchboard/run-<short id>-<step>). When the step ends its
// changes are committed there, the diff against the base is read back
// (files, insertions, deletions, the unified text), and on a passing gate
// the branch is pushed to the repository.
//
// It drives the git program (git 2.30 or later on PATH, or Options.Git):
// go-git has no worktrees, and git's own locking makes a mirror safe for
// several processes. Mirrors are also locked with flock while they are
// fetched or their worktrees added or removed, so instances sharing a
// data folder never race on one.
//
// A step's place is a pure function of its run and step, so a step that
// starts again after a crash finds its worktree (or at least its branch
// in the mirror) and resumes from its last commit, its uncommitted edits
// thrown away.
package coding

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// BranchPrefix starts every branch a coding step works on.
const BranchPrefix = "switchboard/run-"

// MaxDiffBytes bounds the unified diff kept with a step; a longer one is
// cut at a line and marked truncated (the branch holds the whole change).
const MaxDiffBytes = 256 << 10

// Options configure the repositories.
type Options struct {
	// Root is the data folder: mirrors live in Root/repos, worktrees in
	// Root/worktrees. Required.
	Root string
	// Git is the git program ("git" on PATH when empty).
	Git string
	// Env is what git's environment starts from (the service's PATH, HOME
	// and SSH settings); nil: PATH, HOME, SSH_AUTH_SOCK and
	// GIT_SSH_COMMAND of this process.
	Env    []string
	Logger *slog.Logger
	// Timeout bounds one git command (DefaultTimeout).
	Timeout time.Duration
}

// DefaultTimeout bounds one git command: a fetch of a large repository
// takes a while, a hung remote must not hold a step for ever.
const DefaultTimeout = 10 * time.Minute

func (o *Options) validate() error {
	if o.Root == "" {
		return errors.New("coding: Options.Root (the data folder) is required")
	}
	abs, err := filepath.Abs(o.Root)
	if err != nil {
		return fmt.Errorf("coding: Options.Root: %w", err)
	}
	o.Root = abs
	if o.Git == "" {
		o.Git = "git"
	}
	if o.Env == nil {
		for _, k := range []string{"PATH", "HOME", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND"} {
			if v, ok := os.LookupEnv(k); ok {
				o.Env = append(o.Env, k+"="+v)
			}
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return nil
}

// Repos keeps the mirrors and worktrees.
type Repos struct {
	o Options
}

// New validates opts. The folders are made with the first worktree.
func New(opts Options) (*Repos, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Repos{o: opts}, nil
}

func (r *Repos) mkdirs() error {
	for _, d := range []string{"repos", "worktrees"} {
		if err := os.MkdirAll(filepath.Join(r.o.Root, d), 0o700); err != nil {
			return fmt.Errorf("making the coding folder %s (SWITCHBOARD_DATA_DIR): %w", d, err)
		}
	}
	return nil
}

// Check says whether git can run here, for doctor and readiness.
func (r *Repos) Check(ctx context.Context) error {
	out, err := r.git(ctx, "", nil, "version")
	if err != nil {
		return fmt.Errorf("git is needed for coding steps: %w", err)
	}
	if !strings.HasPrefix(out, "git version ") {
		return fmt.Errorf("git answered %q to git version", out)
	}
	return nil
}

// Kind is how a step names its repository.
type Kind string

// The kinds of repository names.
const (
	KindPath   Kind = "path"   // a local path or file:// URL
	KindURL    Kind = "url"    // https://, http:// or ssh (ssh://, user@host:path)
	KindGitHub Kind = "github" // owner/name, through a GitHub connection
)

var (
	githubName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	scpLike    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*@[A-Za-z0-9][A-Za-z0-9.-]*:[^/-].*$`)
	// branchPart is what a branch name keeps of a step id.
	branchPart = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
)

// ParseRepo reads a step's repo input: a local path (absolute), a file://,
// https://, http:// or ssh URL, or owner/name. The error names the input.
func ParseRepo(s string) (Kind, string, error) {
	s = strings.TrimSpace(s)
	if slices.Contains(strings.Split(strings.ReplaceAll(s, ":", "/"), "/"), "..") {
		return "", "", fmt.Errorf("inputs.repo %q: a .. in it is not allowed", s)
	}
	switch {
	case s == "":
		return "", "", errors.New("inputs.repo is empty")
	case strings.HasPrefix(s, "file://"):
		u, err := url.Parse(s)
		if err != nil || u.Path == "" || !filepath.IsAbs(u.Path) {
			return "", "", fmt.Errorf("inputs.repo %q: a file:// URL needs an absolute path", s)
		}
		return KindPath, filepath.Clean(u.Path), nil
	case strings.HasPrefix(s, "https://"), strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "ssh://"):
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return "", "", fmt.Errorf("inputs.repo %q is not a valid URL", s)
		}
		if u.User != nil {
			if _, has := u.User.Password(); has {
				return "", "", fmt.Errorf("inputs.repo %q holds a password: connect the account instead", redactURL(s))
			}
		}
		return KindURL, s, nil
	case scpLike.MatchString(s):
		return KindURL, s, nil
	case filepath.IsAbs(s):
		return KindPath, filepath.Clean(s), nil
	case githubName.MatchString(s):
		return KindGitHub, s, nil
	}
	return "", "", fmt.Errorf("inputs.repo %q: give an absolute path, a file://, https:// or ssh URL, or owner/name of a GitHub repository", s)
}

// Source is where a step's repository is fetched from and pushed to.
type Source struct {
	// Name is the repository as the step named it.
	Name string
	// URL is what git fetches and pushes.
	URL string
	// Token, for an https URL, is sent as GitHub accepts a token
	// (x-access-token); it never reaches a command line or the mirror's
	// config.
	Token string
}

// Place names a step's worktree: its run's short id and its step id.
type Place struct {
	Run  string // the run id's first 8 characters
	Step string
}

// Branch is the step's branch: switchboard/run-<short id>-<step>.
func (p Place) Branch() string {
	return BranchPrefix + p.Run + "-" + strings.Trim(branchPart.ReplaceAllString(p.Step, "-"), "-")
}

func (p Place) dirName() string { return strings.TrimPrefix(p.Branch(), "switchboard/") }

// Worktree is a step's working copy.
type Worktree struct {
	Dir    string
	Branch string
	// Base is the branch the work started from; BaseCommit its commit
	// in the mirror at the start.
	Base       string
	BaseCommit string
	// Resumed says the branch already had work from an earlier attempt.
	Resumed bool
	mirror  string
}

// Prepare fetches the repository into its mirror and gives the step its
// worktree: the existing one, reset to its branch's last commit (an
// attempt after a crash), or a new one on the step's branch (from the
// branch's last commit when the mirror has it, else from base). base ""
// is the repository's default branch.
func (r *Repos) Prepare(ctx context.Context, src Source, base string, p Place) (*Worktree, error) {
	if err := r.mkdirs(); err != nil {
		return nil, err
	}
	mirror := r.mirrorDir(src.URL)
	unlock, err := lock(ctx, mirror+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := r.ensureMirror(ctx, src, mirror); err != nil {
		return nil, err
	}
	if base == "" {
		if base, err = r.defaultBranch(ctx, src, mirror); err != nil {
			return nil, err
		}
	}
	baseRef := "refs/remotes/origin/" + base
	baseCommit, err := r.git(ctx, mirror, nil, "rev-parse", "--verify", "--quiet", baseRef+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("inputs.base: the repository %s has no branch %q", src.Name, base)
	}
	w := &Worktree{Dir: filepath.Join(r.o.Root, "worktrees", p.dirName()), Branch: p.Branch(), Base: base, BaseCommit: baseCommit, mirror: mirror}
	if _, err := os.Stat(filepath.Join(w.Dir, ".git")); err == nil {
		// An earlier attempt's worktree: what it committed stays, what it
		// left uncommitted goes.
		if _, err := r.git(ctx, w.Dir, nil, "reset", "--hard", "--quiet", "HEAD"); err == nil {
			if _, err := r.git(ctx, w.Dir, nil, "clean", "-fdxq"); err != nil {
				return nil, err
			}
			w.Resumed = true
			return w, nil
		}
		// Broken: made again below.
		_ = os.RemoveAll(w.Dir)
	}
	_ = os.RemoveAll(w.Dir)
	// A `git worktree add` cut off by a crash leaves the step's worktree
	// registered, missing and locked ("initializing"), which prune keeps
	// and add refuses. The step's lease and the mirror's lock are ours: no
	// one else is making this worktree, so its lock is a dead one. (Not
	// locked, or not registered: unlock fails, and nothing is lost.)
	_, _ = r.git(ctx, mirror, nil, "worktree", "unlock", w.Dir)
	if _, err := r.git(ctx, mirror, nil, "worktree", "prune"); err != nil {
		return nil, err
	}
	if _, err := r.git(ctx, mirror, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+w.Branch); err == nil {
		w.Resumed = true
		_, err = r.git(ctx, mirror, nil, "worktree", "add", "--quiet", w.Dir, w.Branch)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	if _, err := r.git(ctx, mirror, nil, "worktree", "add", "--quiet", "-b", w.Branch, w.Dir, baseRef); err != nil {
		return nil, err
	}
	return w, nil
}

// Open finds a step's existing worktree (after its turn), without
// fetching. ErrNoWorktree when there is none.
func (r *Repos) Open(ctx context.Context, src Source, base string, p Place) (*Worktree, error) {
	mirror := r.mirrorDir(src.URL)
	w := &Worktree{Dir: filepath.Join(r.o.Root, "worktrees", p.dirName()), Branch: p.Branch(), Base: base, mirror: mirror}
	if _, err := os.Stat(filepath.Join(w.Dir, ".git")); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoWorktree, w.Dir)
	}
	if base == "" {
		var err error
		if base, err = r.defaultBranch(ctx, Source{}, mirror); err != nil {
			return nil, err
		}
		w.Base = base
	}
	c, err := r.git(ctx, w.Dir, nil, "merge-base", "HEAD", "refs/remotes/origin/"+base)
	if err != nil {
		return nil, err
	}
	w.BaseCommit = c
	return w, nil
}

// ErrNoWorktree is Open's error when the step has no worktree here.
var ErrNoWorktree = errors.New("the step has no worktree on this instance")

func (r *Repos) mirrorDir(u string) string {
	sum := sha256.Sum256([]byte(u))
	base := filepath.Base(strings.TrimSuffix(strings.TrimRight(u, "/"), ".git"))
	base = strings.Trim(branchPart.ReplaceAllString(base, "-"), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	return filepath.Join(r.o.Root, "repos", cmp.Or(base, "repo")+"-"+hex.EncodeToString(sum[:6])+".git")
}

func (r *Repos) ensureMirror(ctx context.Context, src Source, mirror string) error {
	if _, err := os.Stat(filepath.Join(mirror, "HEAD")); err != nil {
		_ = os.RemoveAll(mirror)
		if _, err := r.git(ctx, "", nil, "init", "--quiet", "--bare", mirror); err != nil {
			return err
		}
		for _, kv := range [][]string{
			{"remote.origin.url", src.URL},
			{"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"},
			{"gc.auto", "0"},
		} {
			if _, err := r.git(ctx, mirror, nil, "config", kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	if _, err := r.git(ctx, mirror, src.auth(), "fetch", "--quiet", "--prune", "origin"); err != nil {
		return fmt.Errorf("fetching %s: %w", src.Name, err)
	}
	return nil
}

// defaultBranch is the remote's HEAD as the last fetch saw it, asked of
// the remote when the mirror does not know it.
func (r *Repos) defaultBranch(ctx context.Context, src Source, mirror string) (string, error) {
	if ref, err := r.git(ctx, mirror, nil, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"); err == nil {
		return strings.TrimPrefix(ref, "refs/remotes/origin/"), nil
	}
	if src.URL == "" {
		return "", errors.New("the repository's default branch is unknown: give inputs.base")
	}
	if _, err := r.git(ctx, mirror, src.auth(), "remote", "set-head", "origin", "--auto"); err != nil {
		return "", fmt.Errorf("finding the default branch of %s (give inputs.base): %w", src.Name, err)
	}
	ref, err := r.git(ctx, mirror, nil, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")
	if err != nil {
		return "", fmt.Errorf("finding the default branch of %s (give inputs.base): %w", src.Name, err)
	}
	return strings.TrimPrefix(ref, "refs/remotes/origin/"), nil
}

// Commit commits everything changed in the worktree as author, with
// message; changed is false when there was nothing to commit. The commit
// is the branch's head either way.
func (r *Repos) Commit(ctx context.Context, w *Worktree, author, email, message string) (commit string, changed bool, err error) {
	if _, err := r.git(ctx, w.Dir, nil, "add", "--all"); err != nil {
		return "", false, err
	}
	status, err := r.git(ctx, w.Dir, nil, "status", "--porcelain")
	if err != nil {
		return "", false, err
	}
	if status != "" {
		env := []string{
			"GIT_AUTHOR_NAME=" + author, "GIT_AUTHOR_EMAIL=" + email,
			"GIT_COMMITTER_NAME=" + author, "GIT_COMMITTER_EMAIL=" + email,
		}
		if _, err := r.gitIn(ctx, w.Dir, env, strings.NewReader(message), "commit", "--quiet", "--no-verify", "-F", "-"); err != nil {
			return "", false, err
		}
		changed = true
	}
	commit, err = r.git(ctx, w.Dir, nil, "rev-parse", "HEAD")
	return commit, changed, err
}

// FileChange is one file of a diff.
type FileChange struct {
	Path       string `json:"path"`
	Insertions int    `json:"insertions"`
	Deletions  int    `json:"deletions"`
	Binary     bool   `json:"binary,omitempty"`
}

// Diff is a branch's change against its base.
type Diff struct {
	Files      []FileChange `json:"files"`
	Insertions int          `json:"insertions"`
	Deletions  int          `json:"deletions"`
	// Text is the unified diff, at most MaxDiffBytes (Truncated then).
	Text      string `json:"diff"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Stat is the diff's one-line summary, as git prints it.
func (d *Diff) Stat() string {
	return fmt.Sprintf("%d file%s changed, %d insertion%s(+), %d deletion%s(-)",
		len(d.Files), plural(len(d.Files)), d.Insertions, plural(d.Insertions), d.Deletions, plural(d.Deletions))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Diff reads the worktree's committed change against the base commit.
func (r *Repos) Diff(ctx context.Context, w *Worktree) (*Diff, error) {
	rng := w.BaseCommit + "..HEAD"
	num, err := r.git(ctx, w.Dir, nil, "diff", "--no-color", "--no-renames", "--numstat", rng)
	if err != nil {
		return nil, err
	}
	d := &Diff{Files: []FileChange{}}
	for line := range strings.SplitSeq(num, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			continue
		}
		fc := FileChange{Path: f[2]}
		if f[0] == "-" {
			fc.Binary = true
		} else {
			fc.Insertions, _ = strconv.Atoi(f[0])
			fc.Deletions, _ = strconv.Atoi(f[1])
		}
		d.Insertions += fc.Insertions
		d.Deletions += fc.Deletions
		d.Files = append(d.Files, fc)
	}
	text, err := r.gitRaw(ctx, w.Dir, nil, nil, "diff", "--no-color", "--no-renames", "--no-ext-diff", rng)
	if err != nil {
		return nil, err
	}
	if len(text) > MaxDiffBytes {
		cut := bytes.LastIndexByte(text[:MaxDiffBytes], '\n')
		text, d.Truncated = text[:cut+1], true
	}
	d.Text = string(text)
	return d, nil
}

// Push pushes the step's branch to the repository.
func (r *Repos) Push(ctx context.Context, w *Worktree, src Source) error {
	ref := "refs/heads/" + w.Branch
	if _, err := r.git(ctx, w.Dir, src.auth(), "push", "--quiet", "--porcelain", "origin", ref+":"+ref); err != nil {
		return fmt.Errorf("pushing %s to %s: %w", w.Branch, src.Name, err)
	}
	return nil
}

// Remove takes the step's worktree away (its branch stays in the mirror).
func (r *Repos) Remove(ctx context.Context, src Source, p Place) error {
	mirror := r.mirrorDir(src.URL)
	dir := filepath.Join(r.o.Root, "worktrees", p.dirName())
	unlock, err := lock(ctx, mirror+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(dir); err == nil {
		if _, err := r.git(ctx, mirror, nil, "worktree", "remove", "--force", dir); err != nil {
			r.o.Logger.WarnContext(ctx, "removing a worktree", "dir", dir, "error", err)
			if err := os.RemoveAll(dir); err != nil {
				return fmt.Errorf("removing the worktree %s: %w", dir, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(mirror, "HEAD")); err == nil {
		// An add cut off by a crash left the entry locked (see Prepare).
		_, _ = r.git(ctx, mirror, nil, "worktree", "unlock", dir)
		_, err = r.git(ctx, mirror, nil, "worktree", "prune")
		return err
	}
	return nil
}

// Worktrees lists the worktrees present, by their folder name
// (run-<short id>-<step>), with when each was last changed.
func (r *Repos) Worktrees() (map[string]time.Time, error) {
	ents, err := os.ReadDir(filepath.Join(r.o.Root, "worktrees"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out[e.Name()] = info.ModTime()
	}
	return out, nil
}

// RemoveDir removes a worktree by its folder name, whatever its
// repository (the sweep of runs long over); the mirrors are pruned.
func (r *Repos) RemoveDir(ctx context.Context, name string) error {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("coding: bad worktree name %q", name)
	}
	dir := filepath.Join(r.o.Root, "worktrees", name)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the worktree %s: %w", dir, err)
	}
	mirrors, _ := filepath.Glob(filepath.Join(r.o.Root, "repos", "*.git"))
	for _, m := range mirrors {
		_, _ = r.git(ctx, m, nil, "worktree", "prune")
	}
	return nil
}

// Dir is where a place's worktree lives (whether or not it exists).
func (r *Repos) Dir(p Place) string { return filepath.Join(r.o.Root, "worktrees", p.dirName()) }

// auth is the environment that gives git the token: an extra header, set
// through GIT_CONFIG_* so that it is on no command line and in no file.
func (s Source) auth() []string {
	if s.Token == "" {
		return nil
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + s.Token))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic,
	}
}

func (r *Repos) git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	out, err := r.gitRaw(ctx, dir, env, nil, args...)
	return strings.TrimSpace(string(out)), err
}

func (r *Repos) gitIn(ctx context.Context, dir string, env []string, stdin *strings.Reader, args ...string) (string, error) {
	out, err := r.gitRaw(ctx, dir, env, stdin, args...)
	return strings.TrimSpace(string(out)), err
}

// gitRaw runs git with a clean environment: no system or global config,
// no prompt for credentials, the C locale, and env added.
func (r *Repos) gitRaw(ctx context.Context, dir string, env []string, stdin *strings.Reader, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.o.Git, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, r.o.Env...),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=",
		"SSH_ASKPASS=", "LC_ALL=C", "GIT_AUTHOR_NAME=Switchboard", "GIT_AUTHOR_EMAIL=switchboard@localhost",
		"GIT_COMMITTER_NAME=Switchboard", "GIT_COMMITTER_EMAIL=switchboard@localhost")
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, redactURL(msg))
	}
	return stdout.Bytes(), nil
}

var userinfo = regexp.MustCompile(`://[^/@\s]+@`)

// redactURL hides the user and password of URLs in s.
func redactURL(s string) string { return userinfo.ReplaceAllString(s, "://***@") }
