package githubtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/oauthtest"
)

// commitDate dates every commit the fake makes, so the same changes get
// the same shas in every run.
const commitDate = "2024-01-01T00:00:00+00:00"

// AddGitRepo adds a repository backed by a bare git repository in
// tb.TempDir(), which lives as long as tb: one commit of r.Files on
// r.DefaultBranch ("main" if empty), by r.Owner. r.Branches is ignored.
//
// The fake serves it over git's smart HTTP protocol at its clone_url,
// <URL>/<owner>/<name>.git, with git http-backend, to the accounts in
// r.Readers, who may fetch and push. A token goes the ways GitHub takes
// one over HTTPS: as the Basic password under any user name
// (https://x-access-token:TOKEN@…), or as "Authorization: Bearer TOKEN".
func (s *Server) AddGitRepo(tb testing.TB, r *Repo) {
	tb.Helper()
	bin, err := exec.LookPath("git")
	if err != nil {
		tb.Fatalf("githubtest: a git-backed repository needs the git CLI on PATH: %v", err)
	}
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	tmp := tb.TempDir()
	g := &gitBackend{
		bin:  bin,
		root: filepath.Join(tmp, "repos"),
		dir:  filepath.Join(tmp, "repos", r.Owner, r.Name+".git"),
		home: filepath.Join(tmp, "home"),
	}
	if err := g.init(tb.Context(), r.DefaultBranch, r.Files, r.Owner); err != nil {
		tb.Fatalf("githubtest: creating the git repository of %s/%s: %v", r.Owner, r.Name, err)
	}
	r.Branches = nil
	r.store = g
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[r.Owner+"/"+r.Name] = r
}

// GitDir is the bare repository behind a git-backed repository; "" for
// one kept in memory or not known.
func (s *Server) GitDir(full string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.repos[full]; ok {
		if g, ok := r.store.(*gitBackend); ok {
			return g.dir
		}
	}
	return ""
}

// gitLogin reads a token the ways git sends one to GitHub: the Basic
// password under any user name, or a Bearer token (http.extraHeader).
func (s *Server) gitLogin(r *http.Request) (string, oauthtest.Account, bool) {
	tok := ""
	if _, pass, ok := r.BasicAuth(); ok {
		tok = pass
	} else if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		tok = t
	}
	acct, ok := s.auth.AccountOf(tok)
	return tok, acct, ok
}

// git serves git's smart HTTP protocol through git http-backend. Every
// refusal is a 401 with a Basic challenge, as GitHub answers: git then
// fails with "Authentication failed" (or, with no credentials and no
// terminal, says it cannot ask for them) instead of hanging on a prompt.
func (s *Server) git(w http.ResponseWriter, r *http.Request) {
	tok, acct, ok := s.gitLogin(r)
	s.record(Call{Method: r.Method, Path: r.URL.Path, Token: tok, Login: acct.Login})
	name, isGit := strings.CutSuffix(r.PathValue("repo"), ".git")
	full := r.PathValue("owner") + "/" + name
	s.mu.Lock()
	repo := s.repos[full]
	s.mu.Unlock()
	if !ok || !isGit || repo == nil || !slices.Contains(repo.Readers, acct.Login) {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token. Password authentication is not supported for Git operations.", http.StatusUnauthorized)
		return
	}
	g, isGitBacked := repo.store.(*gitBackend)
	if !isGitBacked {
		http.Error(w, "githubtest: "+full+" is kept in memory; add it with AddGitRepo to serve it over git", http.StatusNotFound)
		return
	}
	req := r.Clone(r.Context())
	req.Header.Del("Authorization") // keep the token out of the CGI's environment
	if slices.Contains(req.TransferEncoding, "chunked") {
		// net/http/cgi refuses chunked bodies, which git sends for a
		// pack larger than its http.postBuffer.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		req.Body, req.ContentLength, req.TransferEncoding = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
	}
	logs := tbWriter{s.tb, "githubtest: git http-backend: "}
	h := &cgi.Handler{
		Path: g.bin, Args: []string{"http-backend"}, Dir: g.home,
		Env:    append(g.env(), "GIT_PROJECT_ROOT="+g.root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER="+acct.Login),
		Stderr: logs, Logger: log.New(logs, "", 0),
	}
	h.ServeHTTP(w, req)
}

// tbWriter writes lines to a test's log.
type tbWriter struct {
	tb     testing.TB
	prefix string
}

func (t tbWriter) Write(p []byte) (int, error) {
	t.tb.Logf("%s%s", t.prefix, bytes.TrimRight(p, "\n"))
	return len(p), nil
}

// gitBackend keeps a repository's branches and files in a bare git
// repository, read and written with the git CLI.
type gitBackend struct {
	bin  string // the git binary
	root string // GIT_PROJECT_ROOT: holds <owner>/<name>.git
	dir  string // the bare repository
	home string // HOME and working directory of every git process
}

// env isolates git from the machine's and the user's configuration.
func (g *gitBackend) env() []string {
	return []string{"HOME=" + g.home, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
}

// identity makes author the author of a commit the fake writes; GitHub
// is its committer, as for commits made on github.com.
func identity(author string) []string {
	return []string{
		"GIT_AUTHOR_NAME=" + author, "GIT_AUTHOR_EMAIL=" + author + "@users.noreply.github.com", "GIT_AUTHOR_DATE=" + commitDate,
		"GIT_COMMITTER_NAME=GitHub", "GIT_COMMITTER_EMAIL=noreply@github.com", "GIT_COMMITTER_DATE=" + commitDate,
	}
}

// gitError is a git command that failed, with what it said.
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.args, " "), e.err, strings.TrimSpace(e.stderr))
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is a failed git command's exit status; -1 if it did not exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// run runs git on the bare repository; env adds to its environment.
func (g *gitBackend) run(ctx context.Context, stdin string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, g.bin, args...)
	cmd.Env = append(append(g.env(), "PATH="+os.Getenv("PATH"), "GIT_DIR="+g.dir), env...)
	cmd.Dir = g.home
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &gitError{args: args, err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// init creates the bare repository, open to pushes over HTTP, with one
// commit of files on branch.
func (g *gitBackend) init(ctx context.Context, branch string, files map[string]string, author string) error {
	for _, d := range []string{g.home, g.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if _, err := g.run(ctx, "", nil, "init", "--quiet", "--bare", "--initial-branch="+branch); err != nil {
		return err
	}
	// http-backend takes pushes only from a REMOTE_USER or with this.
	if _, err := g.run(ctx, "", nil, "config", "http.receivepack", "true"); err != nil {
		return err
	}
	blobs := map[string]string{}
	for path, text := range files {
		blob, err := g.writeBlob(ctx, text)
		if err != nil {
			return err
		}
		blobs[path] = blob
	}
	_, err := g.commit(ctx, branch, "", blobs, "Initial commit", author)
	return err
}

func (g *gitBackend) writeBlob(ctx context.Context, text string) (string, error) {
	out, err := g.run(ctx, text, nil, "hash-object", "-w", "--stdin")
	return strings.TrimSpace(out), err
}

// commit writes blobs (path → blob sha) over parent's tree, or an empty
// tree when parent is "", as a commit by author, and moves branch from
// parent to it; the move fails if someone moved the branch meanwhile.
func (g *gitBackend) commit(ctx context.Context, branch, parent string, blobs map[string]string, message, author string) (string, error) {
	tmp, err := os.MkdirTemp(g.home, "index")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if parent != "" {
		if _, err := g.run(ctx, "", index, "read-tree", parent); err != nil {
			return "", err
		}
	}
	var info strings.Builder
	for _, path := range slices.Sorted(maps.Keys(blobs)) {
		fmt.Fprintf(&info, "100644 %s\t%s\n", blobs[path], path)
	}
	if _, err := g.run(ctx, info.String(), index, "update-index", "--add", "--index-info"); err != nil {
		return "", err
	}
	tree, err := g.run(ctx, "", index, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree), "-m", message}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	out, err := g.run(ctx, "", identity(author), args...)
	if err != nil {
		return "", err
	}
	commit := strings.TrimSpace(out)
	if _, err := g.run(ctx, "", nil, "update-ref", "refs/heads/"+branch, commit, parent); err != nil {
		return "", err
	}
	return commit, nil
}

// resolve finds the commit rev names; errNotFound if none.
func (g *gitBackend) resolve(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", errNotFound
	}
	out, err := g.run(ctx, "", nil, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if exitCode(err) == 1 {
		return "", errNotFound
	}
	return strings.TrimSpace(out), err
}

func (g *gitBackend) heads(ctx context.Context) (map[string]string, error) {
	out, err := g.run(ctx, "", nil, "for-each-ref", "--format=%(objectname) %(refname:strip=2)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	heads := map[string]string{}
	for line := range strings.Lines(out) {
		if sha, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			heads[name] = sha
		}
	}
	return heads, nil
}

func (g *gitBackend) createBranch(ctx context.Context, name, commit string) (string, error) {
	full, err := g.resolve(ctx, commit)
	if err != nil {
		return "", err
	}
	if _, err := g.resolve(ctx, "refs/heads/"+name); err == nil {
		return "", errExists
	}
	// The empty old value: only if the branch does not exist.
	_, err = g.run(ctx, "", nil, "update-ref", "refs/heads/"+name, full, "")
	return full, err
}

func (g *gitBackend) deleteBranch(ctx context.Context, name string) error {
	head, err := g.resolve(ctx, "refs/heads/"+name)
	if err != nil {
		return err
	}
	_, err = g.run(ctx, "", nil, "update-ref", "-d", "refs/heads/"+name, head)
	return err
}

func (g *gitBackend) file(ctx context.Context, ref, path string) (string, string, error) {
	if strings.ContainsAny(ref+path, "\n\r") {
		return "", "", errNotFound
	}
	blobs, err := g.blobs(ctx, []string{ref + ":" + path})
	if err != nil {
		return "", "", err
	}
	return blobs[0].text, blobs[0].sha, nil
}

// tree reads every file at ref.
func (g *gitBackend) tree(ctx context.Context, ref string) (map[string]string, error) {
	out, err := g.run(ctx, "", nil, "ls-tree", "-r", "-z", ref)
	if err != nil {
		return nil, err
	}
	var paths, shas []string
	for entry := range strings.SplitSeq(strings.TrimSuffix(out, "\x00"), "\x00") {
		meta, path, _ := strings.Cut(entry, "\t")
		if f := strings.Fields(meta); len(f) == 3 && f[1] == "blob" {
			paths, shas = append(paths, path), append(shas, f[2])
		}
	}
	blobs, err := g.blobs(ctx, shas)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for i, path := range paths {
		files[path] = blobs[i].text
	}
	return files, nil
}

type blob struct{ sha, text string }

// blobs reads the blobs that names name (shas or <rev>:<path>) with one
// git cat-file; errNotFound if one is missing or is not a file.
func (g *gitBackend) blobs(ctx context.Context, names []string) ([]blob, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out, err := g.run(ctx, strings.Join(names, "\n")+"\n", nil, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	var blobs []blob
	for range names {
		header, rest, _ := strings.Cut(out, "\n")
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			return nil, errNotFound // "<name> missing", or a tree
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || len(rest) < size+1 {
			return nil, fmt.Errorf("reading git cat-file: bad header %q", header)
		}
		blobs = append(blobs, blob{sha: f[0], text: rest[:size]})
		out = rest[size+1:]
	}
	return blobs, nil
}

func (g *gitBackend) putFile(ctx context.Context, c fileChange) (string, string, error) {
	parent, err := g.resolve(ctx, "refs/heads/"+c.Branch)
	if err != nil {
		return "", "", err
	}
	blob, err := g.writeBlob(ctx, c.Text)
	if err != nil {
		return "", "", err
	}
	commit, err := g.commit(ctx, c.Branch, parent, map[string]string{c.Path: blob}, c.Message, c.Author)
	return commit, blob, err
}

// merge makes a merge commit as GitHub's merge button does; git
// merge-tree --write-tree needs git 2.38.
func (g *gitBackend) merge(ctx context.Context, pr *PR, author string) (string, error) {
	base, err := g.resolve(ctx, "refs/heads/"+pr.Base)
	if err != nil {
		return "", err
	}
	head, err := g.resolve(ctx, "refs/heads/"+pr.Head)
	if err != nil {
		return "", err
	}
	out, err := g.run(ctx, "", nil, "merge-tree", "--write-tree", "--no-messages", base, head)
	if exitCode(err) == 1 {
		return "", errConflict
	} else if err != nil {
		return "", err
	}
	tree, _, _ := strings.Cut(out, "\n")
	msg := fmt.Sprintf("Merge pull request #%d from %s\n\n%s", pr.Number, pr.Head, pr.Title)
	out, err = g.run(ctx, "", identity(author), "commit-tree", tree, "-p", base, "-p", head, "-m", msg)
	if err != nil {
		return "", err
	}
	merged := strings.TrimSpace(out)
	if _, err := g.run(ctx, "", nil, "update-ref", "refs/heads/"+pr.Base, merged, base); err != nil {
		return "", err
	}
	return merged, nil
}
