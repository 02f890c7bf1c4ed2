package githubtest_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/internal/githubtest"
	"github.com/switchboardhq/switchboard/internal/oauthtest"
)

func newFake(t *testing.T) (*oauthtest.Server, *githubtest.Server) {
	t.Helper()
	oauth := oauthtest.New(t, oauthtest.Options{Flavor: oauthtest.GitHub, ClientID: "cid", ClientSecret: "secret"})
	return oauth, githubtest.New(t, oauth)
}

// token signs login in at the fake provider and returns its access token.
func token(t *testing.T, oauth *oauthtest.Server, login string) string {
	t.Helper()
	cfg := oauth2.Config{ClientID: "cid", ClientSecret: "secret", RedirectURL: "https://sb.example/cb",
		Endpoint: oauth2.Endpoint{AuthURL: oauth.URL() + "/login/oauth/authorize", TokenURL: oauth.URL() + "/login/oauth/access_token"}}
	oauth.SignIn(oauthtest.Account{ID: "1" + login, Login: login})
	back, err := oauth.Authorize(cfg.AuthCodeURL("st"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cfg.Exchange(t.Context(), back.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// api calls the fake's REST API as tok and decodes the JSON answer.
func api(t *testing.T, gh *githubtest.Server, tok, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var in bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&in).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), method, gh.URL()+strings.TrimPrefix(path, "/"), &in)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: %s with a body that is not a JSON object: %v", method, path, resp.Status, err)
		}
	}
	return resp.StatusCode, out
}

// field reads a dotted path in a decoded JSON object.
func field(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// gitClient runs the git CLI as a user would, apart from this machine's
// configuration: no system or user config, no credential helper, and no
// terminal prompt, so a refused credential fails at once.
type gitClient struct {
	t    *testing.T
	home string
}

func newGitClient(t *testing.T) gitClient {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("these tests run the git CLI, which is not on PATH: %v", err)
	}
	return gitClient{t, t.TempDir()}
}

// run runs git in dir and returns what it printed.
func (g gitClient) run(dir string, args ...string) (string, error) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(g.t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + g.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
		"GIT_AUTHOR_NAME=Octo", "GIT_AUTHOR_EMAIL=octo@example.com", "GIT_COMMITTER_NAME=Octo", "GIT_COMMITTER_EMAIL=octo@example.com",
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// must runs git and fails the test if git does.
func (g gitClient) must(dir string, args ...string) string {
	g.t.Helper()
	out, err := g.run(dir, args...)
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func withUser(raw string, user *url.Userinfo) string {
	u, _ := url.Parse(raw)
	u.User = user
	return u.String()
}

// A coding run's path: clone the repository over HTTP with a token, push
// a branch, and open a pull request on it through the REST API, which
// sees the branch git received.
func TestGitHubGitPushOpensPullRequest(t *testing.T) {
	oauth, gh := newFake(t)
	gh.AddGitRepo(t, &githubtest.Repo{Owner: "acme", Name: "app", Readers: []string{"octo"},
		Files: map[string]string{"README.md": "# App\n", "cmd/app/main.go": "package main\n"}})
	tok := token(t, oauth, "octo")
	git := newGitClient(t)

	_, repo := api(t, gh, tok, "GET", "/repos/acme/app", nil)
	cloneURL, _ := repo["clone_url"].(string)
	if cloneURL != gh.URL()+"acme/app.git" {
		t.Fatalf("clone_url %q; want the fake's own %q", cloneURL, gh.URL()+"acme/app.git")
	}
	dir := t.TempDir()
	git.must("", "clone", "--quiet", withUser(cloneURL, url.UserPassword("x-access-token", tok)), dir)
	for path, want := range map[string]string{"README.md": "# App\n", "cmd/app/main.go": "package main\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, path)); err != nil || string(got) != want {
			t.Fatalf("cloned %s: %q, %v; want %q", path, got, err, want)
		}
	}
	base := git.must(dir, "rev-parse", "HEAD")

	// A binary file larger than http.postBuffer makes git send the pack
	// chunked, which net/http/cgi alone refuses.
	big := make([]byte, 256<<10)
	_, _ = rand.Read(big)
	if err := os.WriteFile(filepath.Join(dir, "logo.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# App\nNow documented.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git.must(dir, "add", "-A")
	git.must(dir, "commit", "--quiet", "-m", "Document the app")
	head := git.must(dir, "rev-parse", "HEAD")
	git.must(dir, "-c", "http.extraHeader=Authorization: Bearer "+tok, "-c", "http.postBuffer=65536",
		"push", "--quiet", cloneURL, "HEAD:refs/heads/docs")

	if status, ref := api(t, gh, tok, "GET", "/repos/acme/app/git/ref/heads/docs", nil); status != http.StatusOK || field(ref, "object.sha") != head {
		t.Fatalf("GET ref heads/docs: %d %v; want 200 at the pushed %s", status, ref, head)
	}
	status, pr := api(t, gh, tok, "POST", "/repos/acme/app/pulls", map[string]any{"title": "Document the app", "head": "docs", "base": "main"})
	if status != http.StatusCreated || field(pr, "head.sha") != head || field(pr, "base.sha") != base {
		t.Fatalf("POST pulls: %d %v; want 201 from docs at %s onto main at %s", status, pr, head, base)
	}
	if got := gh.Repo("acme/app"); got.Branches["docs"] != head || got.Branches["main"] != base || got.Files["README.md"] != "# App\n" || len(got.PRs) != 1 {
		t.Fatalf("Repo: branches %v, README on main %q, %d PRs; want docs at %s, main unchanged, one PR", got.Branches, got.Files["README.md"], len(got.PRs), head)
	}
	pushed := false
	for _, c := range gh.Calls() {
		pushed = pushed || c == githubtest.Call{Method: "POST", Path: "/acme/app.git/git-receive-pack", Token: tok, Login: "octo"}
	}
	if !pushed {
		t.Fatalf("Calls %v; want octo's push among them", gh.Calls())
	}
}

// Git refuses, without prompting, whoever has no token, a token the
// provider did not issue, or the token of an account the repository does
// not list; a push from them changes nothing.
func TestGitHubGitRefusesStrangers(t *testing.T) {
	oauth, gh := newFake(t)
	gh.AddGitRepo(t, &githubtest.Repo{Owner: "acme", Name: "app", Readers: []string{"octo"}, Files: map[string]string{"README.md": "# App\n"}})
	octo, mallory := token(t, oauth, "octo"), token(t, oauth, "mallory")
	cloneURL := gh.URL() + "acme/app.git"
	git := newGitClient(t)
	dir := t.TempDir()
	git.must("", "clone", "--quiet", withUser(cloneURL, url.UserPassword("x-access-token", octo)), dir)
	git.must(dir, "commit", "--quiet", "--allow-empty", "-m", "Intrude")

	for _, tc := range []struct {
		name   string
		user   *url.Userinfo
		header string // Authorization
		login  string // whom the fake records, besides git's first anonymous try
		says   string // what git says
	}{
		{name: "no token", says: "terminal prompts disabled"},
		{name: "a bad token", user: url.UserPassword("x-access-token", "gho_bogus"), says: "Authentication failed"},
		// git does not know a header carried a credential: it wants one.
		{name: "a bad bearer token", header: "Bearer gho_bogus", says: "terminal prompts disabled"},
		{name: "a stranger's token", user: url.UserPassword("x-access-token", mallory), login: "mallory", says: "Authentication failed"},
		{name: "a stranger's bearer token", header: "Bearer " + mallory, login: "mallory", says: "terminal prompts disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := len(gh.Calls())
			req, _ := http.NewRequestWithContext(t.Context(), "GET", cloneURL+"/info/refs?service=git-upload-pack", nil)
			if tc.user != nil {
				pass, _ := tc.user.Password()
				req.SetBasicAuth(tc.user.Username(), pass)
			}
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Basic realm="GitHub"` {
				t.Fatalf("GET info/refs: %s, WWW-Authenticate %q; want 401 with a Basic challenge", resp.Status, resp.Header.Get("WWW-Authenticate"))
			}

			var extra []string
			if tc.header != "" {
				extra = []string{"-c", "http.extraHeader=Authorization: " + tc.header}
			}
			remote := withUser(cloneURL, tc.user)
			out, err := git.run("", append(extra, "clone", remote, t.TempDir()+"/clone")...)
			if err == nil || !strings.Contains(out, tc.says) {
				t.Fatalf("git clone: %v\n%s\nwant a failure that says %q", err, out, tc.says)
			}
			out, err = git.run(dir, append(extra, "push", remote, "HEAD:refs/heads/intruder")...)
			if err == nil || !strings.Contains(out, tc.says) {
				t.Fatalf("git push: %v\n%s\nwant a failure that says %q", err, out, tc.says)
			}
			if _, ok := gh.Repo("acme/app").Branches["intruder"]; ok {
				t.Fatal("the refused push made a branch")
			}
			var logins, want []string
			for _, c := range gh.Calls()[from:] {
				if c.Login != "" && !slices.Contains(logins, c.Login) {
					logins = append(logins, c.Login)
				}
			}
			if tc.login != "" {
				want = []string{tc.login}
			}
			if !slices.Equal(logins, want) {
				t.Fatalf("calls %v; want them recorded as made by %v", gh.Calls()[from:], want)
			}
		})
	}
}

// clone_url and default_branch: the fake's own git URL for a git-backed
// repository, GitHub's for one kept in memory, which git cannot reach.
func TestGitHubRepoCloneURL(t *testing.T) {
	oauth, gh := newFake(t)
	gh.AddGitRepo(t, &githubtest.Repo{Owner: "acme", Name: "app", DefaultBranch: "trunk", Readers: []string{"octo"}})
	gh.AddRepo(&githubtest.Repo{Owner: "acme", Name: "lib", Readers: []string{"octo"}})
	tok := token(t, oauth, "octo")
	for _, tc := range []struct{ repo, cloneURL, branch string }{
		{"acme/app", gh.URL() + "acme/app.git", "trunk"},
		{"acme/lib", "https://github.com/acme/lib.git", "main"},
	} {
		status, repo := api(t, gh, tok, "GET", "/repos/"+tc.repo, nil)
		if status != http.StatusOK || repo["clone_url"] != tc.cloneURL || repo["default_branch"] != tc.branch {
			t.Errorf("GET /repos/%s: %d, clone_url %v, default_branch %v; want %s and %s", tc.repo, status, repo["clone_url"], repo["default_branch"], tc.cloneURL, tc.branch)
		}
	}
	if gh.GitDir("acme/lib") != "" {
		t.Errorf("GitDir(acme/lib) = %q; want none for a repository in memory", gh.GitDir("acme/lib"))
	}
	git := newGitClient(t)
	out, err := git.run("", "clone", withUser(gh.URL()+"acme/lib.git", url.UserPassword("x-access-token", tok)), t.TempDir()+"/lib")
	if err == nil || !strings.Contains(out, "acme/lib is kept in memory") {
		t.Errorf("cloning the repository in memory: %v\n%s\nwant a refusal that says it is kept in memory", err, out)
	}
}

// The REST calls that write branches and files write the bare repository:
// a branch, a commit, a merge commit, a refused merge, a deletion.
func TestGitHubGitRESTWrites(t *testing.T) {
	oauth, gh := newFake(t)
	gh.AddGitRepo(t, &githubtest.Repo{Owner: "acme", Name: "app", Readers: []string{"octo"}, Files: map[string]string{"README.md": "# App\n"}})
	tok := token(t, oauth, "octo")
	git := newGitClient(t)
	bare := func(args ...string) string {
		return git.must("", append([]string{"--git-dir=" + gh.GitDir("acme/app")}, args...)...)
	}
	call := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		status, out := api(t, gh, tok, method, path, body)
		if status != want {
			t.Fatalf("%s %s: %d %v; want %d", method, path, status, out, want)
		}
		return out
	}
	put := func(branch, text, sha string, want int) map[string]any {
		t.Helper()
		return call("PUT", "/repos/acme/app/contents/README.md", map[string]any{
			"message": "Edit the README on " + branch, "content": base64.StdEncoding.EncodeToString([]byte(text)), "sha": sha, "branch": branch}, want)
	}

	main := bare("rev-parse", "main")
	call("POST", "/repos/acme/app/git/refs", map[string]any{"ref": "refs/heads/docs", "sha": main}, http.StatusCreated)
	call("POST", "/repos/acme/app/git/refs", map[string]any{"ref": "refs/heads/docs", "sha": main}, http.StatusUnprocessableEntity)
	call("POST", "/repos/acme/app/git/refs", map[string]any{"ref": "refs/heads/ghost", "sha": strings.Repeat("ab", 20)}, http.StatusUnprocessableEntity)
	call("POST", "/repos/acme/app/git/refs", map[string]any{"ref": "refs/heads/other", "sha": main}, http.StatusCreated)
	if got := bare("rev-parse", "docs"); got != main {
		t.Fatalf("docs at %s; want the %s it was created at", got, main)
	}

	readme := call("GET", "/repos/acme/app/contents/README.md?ref=docs", nil, http.StatusOK)
	if blob := bare("rev-parse", "docs:README.md"); readme["sha"] != blob {
		t.Fatalf("README's sha %v; want its blob %s", readme["sha"], blob)
	}
	put("docs", "# App\nDocumented.\n", "stale", http.StatusConflict)
	commit := field(put("docs", "# App\nDocumented.\n", readme["sha"].(string), http.StatusOK), "commit.sha")
	if got := bare("log", "-1", "--format=%H %an %P", "docs"); got != commit.(string)+" octo "+main {
		t.Fatalf("docs' head: %s; want %s by octo on %s", got, commit, main)
	}
	put("other", "# Other\n", readme["sha"].(string), http.StatusOK)
	put("nowhere", "# Lost\n", "", http.StatusNotFound)

	call("POST", "/repos/acme/app/pulls", map[string]any{"title": "Docs", "head": "docs", "base": "main"}, http.StatusCreated)
	call("POST", "/repos/acme/app/pulls", map[string]any{"title": "Other", "head": "other", "base": "main"}, http.StatusCreated)
	merged := call("PUT", "/repos/acme/app/pulls/1/merge", nil, http.StatusOK)["sha"]
	if got := bare("rev-list", "--parents", "-1", "main"); got != merged.(string)+" "+main+" "+commit.(string) {
		t.Fatalf("main: %s; want the merge commit %s of %s and %s", got, merged, main, commit)
	}
	if got := gh.Repo("acme/app").Files["README.md"]; got != "# App\nDocumented.\n" {
		t.Fatalf("README on main after the merge: %q", got)
	}
	call("PUT", "/repos/acme/app/pulls/2/merge", nil, http.StatusMethodNotAllowed) // both changed README.md
	if got := bare("rev-parse", "main"); got != merged {
		t.Fatalf("main at %s after a refused merge; want it left at %s", got, merged)
	}

	call("DELETE", "/repos/acme/app/git/refs/heads/docs", nil, http.StatusNoContent)
	call("DELETE", "/repos/acme/app/git/refs/heads/docs", nil, http.StatusUnprocessableEntity)
	call("GET", "/repos/acme/app/git/ref/heads/docs", nil, http.StatusNotFound)
}
