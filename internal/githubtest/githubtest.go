// Package githubtest is a fake GitHub REST API for tests: the endpoints
// the GitHub tools call, answering with the JSON shapes GitHub documents
// for them (the fields the tools read, and the ones that identify an
// object), and authenticating every call with a bearer token issued by an
// oauthtest provider. Each repository lists the accounts that may see it,
// so a test can tell which account a call acted as.
//
// A repository's branches and files are maps in memory (AddRepo), or a
// real bare git repository on disk (AddGitRepo) that the fake also serves
// over git's smart HTTP protocol, so a test can clone it and push to it
// with the git CLI and see the pushed branch through the REST API.
package githubtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/internal/oauthtest"
)

// PR is a pull request held by the fake.
type PR struct {
	Number int
	Title  string
	Body   string
	State  string // open, closed
	Author string
	Head   string
	Base   string
	Draft  bool
	Merged bool
}

// Repo is a repository held by the fake.
type Repo struct {
	Owner, Name   string
	DefaultBranch string
	// Readers are the logins that may see and change it.
	Readers []string
	// Branches maps a branch to its head sha. For a git-backed repository
	// it is read from the bare repository's refs by Server.Repo, and
	// ignored when the repository is added.
	Branches map[string]string
	// Files maps a path to its content: on every branch in memory; for a
	// git-backed repository, the first commit when it is added and the
	// default branch's head when read by Server.Repo.
	Files    map[string]string
	PRs      []*PR
	Comments []Comment

	store backend // where Branches and Files live
}

// Comment is a comment made on an issue or pull request.
type Comment struct {
	ID     int64
	Number int
	Body   string
	Author string
}

// Call is one request the fake served.
type Call struct {
	Method, Path string
	Token        string
	Login        string // whom the token belongs to ("" when refused)
}

// Server is the fake API.
type Server struct {
	tb    testing.TB
	auth  *oauthtest.Server
	srv   *httptest.Server
	mu    sync.Mutex // also serializes the REST calls' git commands
	repos map[string]*Repo
	calls []Call
	seq   int64
}

// New starts the fake; auth issues and checks the tokens.
func New(tb testing.TB, auth *oauthtest.Server) *Server {
	s := &Server{tb: tb, auth: auth, repos: map[string]*Repo{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /user", s.user)
	mux.HandleFunc("GET /repos/{owner}/{repo}", s.repo)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls", s.listPulls)
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls", s.createPull)
	mux.HandleFunc("PUT /repos/{owner}/{repo}/pulls/{number}/merge", s.merge)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", s.comment)
	mux.HandleFunc("GET /repos/{owner}/{repo}/git/ref/{ref...}", s.getRef)
	mux.HandleFunc("POST /repos/{owner}/{repo}/git/refs", s.createRef)
	mux.HandleFunc("DELETE /repos/{owner}/{repo}/git/refs/{ref...}", s.deleteRef)
	mux.HandleFunc("GET /repos/{owner}/{repo}/contents/{path...}", s.getContents)
	mux.HandleFunc("PUT /repos/{owner}/{repo}/contents/{path...}", s.putContents)
	mux.HandleFunc("DELETE /applications/{client_id}/grant", s.deleteGrant)
	// git's smart HTTP protocol, at the clone URL <URL>/<owner>/<name>.git.
	mux.HandleFunc("GET /{owner}/{repo}/info/refs", s.git)
	mux.HandleFunc("POST /{owner}/{repo}/git-upload-pack", s.git)
	mux.HandleFunc("POST /{owner}/{repo}/git-receive-pack", s.git)
	s.srv = httptest.NewServer(mux)
	tb.Cleanup(s.srv.Close)
	return s
}

// URL is the API's base URL (SWITCHBOARD_GITHUB_API_URL).
func (s *Server) URL() string { return s.srv.URL + "/" }

// AddRepo adds a repository whose branches and files are maps in memory.
func (s *Server) AddRepo(r *Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	if r.Branches == nil {
		r.Branches = map[string]string{}
	}
	if _, ok := r.Branches[r.DefaultBranch]; !ok {
		r.Branches[r.DefaultBranch] = sha(r.Owner + r.Name)
	}
	if r.Files == nil {
		r.Files = map[string]string{}
	}
	r.store = memBackend{r}
	s.repos[r.Owner+"/"+r.Name] = r
}

// Repo returns a copy of a repository's state; for a git-backed one,
// Branches and Files are read from the bare repository.
func (s *Server) Repo(full string) Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := *s.repos[full]
	if g, ok := r.store.(*gitBackend); ok {
		var err error
		ctx := context.Background() // not tb's, which ends before its cleanups run
		if r.Branches, err = g.heads(ctx); err == nil {
			r.Files, err = g.tree(ctx, r.DefaultBranch)
		}
		if err != nil {
			s.tb.Errorf("githubtest: reading %s: %v", full, err)
		}
	}
	return r
}

// Calls lists the requests served.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

func sha(seed string) string {
	h := uint64(14695981039346656037)
	for _, c := range seed {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return fmt.Sprintf("%016x%016x%08x", h, h*31, uint32(h))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError is GitHub's error shape.
func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(status)})
}

// record adds a call to Calls.
func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

// login authenticates a call; it answers 401 itself when it fails.
func (s *Server) login(w http.ResponseWriter, r *http.Request) (oauthtest.Account, bool) {
	tok, acct, ok := s.auth.Bearer(r)
	s.record(Call{Method: r.Method, Path: r.URL.Path, Token: tok, Login: acct.Login})
	if !ok {
		apiError(w, http.StatusUnauthorized, "Bad credentials")
		return acct, false
	}
	return acct, true
}

// repoFor finds a repository the account may see; 404 otherwise, as
// GitHub hides private repositories.
func (s *Server) repoFor(w http.ResponseWriter, r *http.Request) (*Repo, oauthtest.Account, bool) {
	acct, ok := s.login(w, r)
	if !ok {
		return nil, acct, false
	}
	s.mu.Lock()
	repo := s.repos[r.PathValue("owner")+"/"+r.PathValue("repo")]
	s.mu.Unlock()
	if repo == nil || !slices.Contains(repo.Readers, acct.Login) {
		apiError(w, http.StatusNotFound, "Not Found")
		return nil, acct, false
	}
	return repo, acct, true
}

func userJSON(login string) map[string]any {
	return map[string]any{
		"login": login, "id": 1000 + len(login), "node_id": "U_" + login, "type": "User", "site_admin": false,
		"url": "https://api.github.com/users/" + login, "html_url": "https://github.com/" + login,
	}
}

func (s *Server) user(w http.ResponseWriter, r *http.Request) {
	acct, ok := s.login(w, r)
	if !ok {
		return
	}
	u := userJSON(acct.Login)
	if id, err := strconv.Atoi(acct.ID); err == nil {
		u["id"] = id
	}
	u["name"] = acct.Login
	writeJSON(w, http.StatusOK, u)
}

// repoJSON is a repository; its clone_url is the fake's own git URL
// when it is git-backed.
func (s *Server) repoJSON(r *Repo) map[string]any {
	full := r.Owner + "/" + r.Name
	cloneURL := "https://github.com/" + full + ".git"
	if _, ok := r.store.(*gitBackend); ok {
		cloneURL = s.srv.URL + "/" + full + ".git"
	}
	return map[string]any{
		"id": len(full), "node_id": "R_" + full, "name": r.Name, "full_name": full, "private": true,
		"owner": userJSON(r.Owner), "html_url": "https://github.com/" + full, "default_branch": r.DefaultBranch,
		"url": "https://api.github.com/repos/" + full, "clone_url": cloneURL,
	}
}

func (s *Server) repo(w http.ResponseWriter, r *http.Request) {
	repo, _, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.repoJSON(repo))
}

// storeError answers for an error of a repository's backend.
func storeError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errNotFound):
		apiError(w, http.StatusNotFound, "Not Found")
	case errors.Is(err, errConflict):
		apiError(w, http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	default:
		apiError(w, http.StatusInternalServerError, err.Error())
	}
}

// prJSON is a pull request; heads are the repository's branches.
func (s *Server) prJSON(repo *Repo, heads map[string]string, pr *PR) map[string]any {
	full := repo.Owner + "/" + repo.Name
	branch := func(ref string) map[string]any {
		return map[string]any{"label": repo.Owner + ":" + ref, "ref": ref, "sha": heads[ref], "user": userJSON(repo.Owner), "repo": s.repoJSON(repo)}
	}
	return map[string]any{
		"id": pr.Number * 1000, "node_id": fmt.Sprintf("PR_%s_%d", full, pr.Number), "number": pr.Number,
		"state": pr.State, "title": pr.Title, "body": pr.Body, "draft": pr.Draft, "merged": pr.Merged, "locked": false,
		"user": userJSON(pr.Author), "head": branch(pr.Head), "base": branch(pr.Base),
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d", full, pr.Number),
		"url":      fmt.Sprintf("https://api.github.com/repos/%s/pulls/%d", full, pr.Number),
	}
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	repo, _, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	state := r.URL.Query().Get("state")
	if state == "" {
		state = "open"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	heads, err := repo.store.heads(r.Context())
	if err != nil {
		storeError(w, err)
		return
	}
	out := []map[string]any{}
	for i := len(repo.PRs) - 1; i >= 0; i-- { // newest first
		if pr := repo.PRs[i]; state == "all" || pr.State == state {
			out = append(out, s.prJSON(repo, heads, pr))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createPull(w http.ResponseWriter, r *http.Request) {
	repo, acct, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	var in struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == "" {
		apiError(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	heads, err := repo.store.heads(r.Context())
	if err != nil {
		storeError(w, err)
		return
	}
	if _, ok := heads[in.Head]; !ok {
		apiError(w, http.StatusUnprocessableEntity, "Validation Failed: head "+in.Head+" does not exist")
		return
	}
	pr := &PR{Number: len(repo.PRs) + 1, Title: in.Title, Body: in.Body, State: "open", Author: acct.Login, Head: in.Head, Base: in.Base, Draft: in.Draft}
	repo.PRs = append(repo.PRs, pr)
	writeJSON(w, http.StatusCreated, s.prJSON(repo, heads, pr))
}

func (s *Server) findPR(repo *Repo, r *http.Request) *PR {
	n, _ := strconv.Atoi(r.PathValue("number"))
	for _, pr := range repo.PRs {
		if pr.Number == n {
			return pr
		}
	}
	return nil
}

func (s *Server) merge(w http.ResponseWriter, r *http.Request) {
	repo, acct, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.findPR(repo, r)
	switch {
	case pr == nil:
		apiError(w, http.StatusNotFound, "Not Found")
	case pr.State != "open":
		apiError(w, http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	default:
		merged, err := repo.store.merge(r.Context(), pr, acct.Login)
		if err != nil {
			storeError(w, err)
			return
		}
		pr.State, pr.Merged = "closed", true
		writeJSON(w, http.StatusOK, map[string]any{"sha": merged, "merged": true, "message": "Pull Request successfully merged"})
	}
}

func (s *Server) comment(w http.ResponseWriter, r *http.Request) {
	repo, acct, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		apiError(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	n, _ := strconv.Atoi(r.PathValue("number"))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	c := Comment{ID: s.seq, Number: n, Body: in.Body, Author: acct.Login}
	repo.Comments = append(repo.Comments, c)
	full := repo.Owner + "/" + repo.Name
	writeJSON(w, http.StatusCreated, map[string]any{
		"id": c.ID, "node_id": fmt.Sprintf("IC_%d", c.ID), "body": c.Body, "user": userJSON(acct.Login),
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d#issuecomment-%d", full, n, c.ID),
	})
}

func refJSON(repo *Repo, branch, head string) map[string]any {
	return map[string]any{
		"ref": "refs/heads/" + branch, "node_id": "REF_" + branch,
		"url":    "https://api.github.com/repos/" + repo.Owner + "/" + repo.Name + "/git/refs/heads/" + branch,
		"object": map[string]any{"type": "commit", "sha": head},
	}
}

func (s *Server) getRef(w http.ResponseWriter, r *http.Request) {
	repo, _, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	branch, _ := strings.CutPrefix(r.PathValue("ref"), "heads/")
	s.mu.Lock()
	defer s.mu.Unlock()
	heads, err := repo.store.heads(r.Context())
	if err != nil {
		storeError(w, err)
		return
	}
	head, ok := heads[branch]
	if !ok {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, refJSON(repo, branch, head))
}

func (s *Server) createRef(w http.ResponseWriter, r *http.Request) {
	repo, _, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	var in struct{ Ref, SHA string }
	_ = json.NewDecoder(r.Body).Decode(&in)
	branch, ok := strings.CutPrefix(in.Ref, "refs/heads/")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok || in.SHA == "" {
		apiError(w, http.StatusUnprocessableEntity, "Reference already exists")
		return
	}
	head, err := repo.store.createBranch(r.Context(), branch, in.SHA)
	switch {
	case errors.Is(err, errExists):
		apiError(w, http.StatusUnprocessableEntity, "Reference already exists")
	case errors.Is(err, errNotFound):
		apiError(w, http.StatusUnprocessableEntity, "Object does not exist")
	case err != nil:
		storeError(w, err)
	default:
		writeJSON(w, http.StatusCreated, refJSON(repo, branch, head))
	}
}

func (s *Server) deleteRef(w http.ResponseWriter, r *http.Request) {
	repo, _, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	branch, _ := strings.CutPrefix(r.PathValue("ref"), "heads/")
	s.mu.Lock()
	defer s.mu.Unlock()
	err := repo.store.deleteBranch(r.Context(), branch)
	switch {
	case errors.Is(err, errNotFound):
		apiError(w, http.StatusUnprocessableEntity, "Reference does not exist")
	case err != nil:
		storeError(w, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// contentJSON is a file; blob is the sha its version is named by.
func contentJSON(repo *Repo, path, text, blob string) map[string]any {
	full := repo.Owner + "/" + repo.Name
	name := path[strings.LastIndex(path, "/")+1:]
	return map[string]any{
		"type": "file", "encoding": "base64", "size": len(text), "name": name, "path": path,
		"content": base64.StdEncoding.EncodeToString([]byte(text)), "sha": blob,
		"url":      "https://api.github.com/repos/" + full + "/contents/" + path,
		"html_url": "https://github.com/" + full + "/blob/" + repo.DefaultBranch + "/" + path,
	}
}

func (s *Server) getContents(w http.ResponseWriter, r *http.Request) {
	repo, _, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	path := r.PathValue("path")
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = repo.DefaultBranch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	text, blob, err := repo.store.file(r.Context(), ref, path)
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, contentJSON(repo, path, text, blob))
}

func (s *Server) putContents(w http.ResponseWriter, r *http.Request) {
	repo, acct, ok := s.repoFor(w, r)
	if !ok {
		return
	}
	var in struct {
		Message, Content, SHA, Branch string
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Message == "" {
		apiError(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	text, err := base64.StdEncoding.DecodeString(in.Content)
	if err != nil {
		apiError(w, http.StatusUnprocessableEntity, "content is not valid Base64")
		return
	}
	path := r.PathValue("path")
	branch := in.Branch
	if branch == "" {
		branch = repo.DefaultBranch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, old, err := repo.store.file(r.Context(), branch, path)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, errNotFound):
		storeError(w, err)
		return
	case exists && in.SHA != old:
		apiError(w, http.StatusConflict, path+" does not match "+in.SHA)
		return
	}
	commit, blob, err := repo.store.putFile(r.Context(), fileChange{Branch: branch, Path: path, Text: string(text), Message: in.Message, Author: acct.Login})
	if errors.Is(err, errNotFound) {
		apiError(w, http.StatusNotFound, "Branch "+branch+" not found")
		return
	} else if err != nil {
		storeError(w, err)
		return
	}
	status := http.StatusCreated
	if exists {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{
		"content": contentJSON(repo, path, string(text), blob),
		"commit": map[string]any{
			"sha": commit, "node_id": "C_" + commit, "message": in.Message,
			"html_url": "https://github.com/" + repo.Owner + "/" + repo.Name + "/commit/" + commit,
		},
	})
}

// deleteGrant is DELETE /applications/{client_id}/grant: basic auth as the
// app, the token in the body; 204, or 404 for a token it does not know.
func (s *Server) deleteGrant(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path})
	s.mu.Unlock()
	if !ok || id != r.PathValue("client_id") || !s.auth.ClientOK(id, secret) {
		apiError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	var in struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	if !s.auth.RevokeGrant(in.AccessToken) {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
