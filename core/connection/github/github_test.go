package github_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/core/connection/github"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/githubtest"
	"github.com/switchboardhq/switchboard/internal/oauthtest"
	"github.com/switchboardhq/switchboard/store"
)

// account is one GitHub account's token, got through the fake provider's
// flow; it stands in for package connection, which the e2e test covers.
type account struct {
	client *http.Client
	api    string
}

func (a account) ClientFor(context.Context, store.ConnectionProvider, *tool.Request) (*http.Client, *store.Connection, error) {
	return a.client, &store.Connection{Account: "octo"}, nil
}

func (a account) APIURL(store.ConnectionProvider) string { return a.api }

func login(t *testing.T, oauth *oauthtest.Server, gh *githubtest.Server, acct oauthtest.Account) account {
	t.Helper()
	cfg := oauth2.Config{ClientID: "cid", ClientSecret: "secret", RedirectURL: "https://sb.example/cb",
		Endpoint: oauth2.Endpoint{AuthURL: oauth.URL() + "/login/oauth/authorize", TokenURL: oauth.URL() + "/login/oauth/access_token"}}
	oauth.SignIn(acct)
	back, err := oauth.Authorize(cfg.AuthCodeURL("st"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cfg.Exchange(context.Background(), back.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	return account{client: cfg.Client(context.Background(), tok), api: gh.URL()}
}

func call[T any](t *testing.T, reg *tool.Registry, name, args string) T {
	t.Helper()
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	res := tl.Call(context.Background(), &tool.Request{}, json.RawMessage(args))
	var out T
	if res.IsError || json.Unmarshal(res.Output, &out) != nil {
		t.Fatalf("%s %s: %s", name, args, res.Output)
	}
	return out
}

// The change workflow on the fake GitHub: branch, commit, pull request,
// comment, merge, delete the branch; and the risks each tool declares.
func TestGitHubToolsChangeWorkflow(t *testing.T) {
	oauth := oauthtest.New(t, oauthtest.Options{Flavor: oauthtest.GitHub, ClientID: "cid", ClientSecret: "secret"})
	gh := githubtest.New(t, oauth)
	gh.AddRepo(&githubtest.Repo{Owner: "acme", Name: "app", Readers: []string{"octo"}, Files: map[string]string{"README.md": "# App\n"}})
	reg := tool.NewRegistry()
	if err := github.Register(reg, login(t, oauth, gh, oauthtest.Account{ID: "1", Login: "octo"})); err != nil {
		t.Fatal(err)
	}
	risks := map[string]tool.Risk{
		"github__read_file": tool.RiskLow, "github__list_pull_requests": tool.RiskLow, "github__open_pull_request": tool.RiskMedium,
		"github__comment": tool.RiskMedium, "github__create_branch": tool.RiskMedium, "github__commit_change": tool.RiskMedium,
		"github__merge_pull_request": tool.RiskHigh, "github__delete_branch": tool.RiskHigh,
	}
	for name, risk := range risks {
		tl, ok := reg.Get(name)
		if !ok || tl.Risk() != risk || tl.ReadOnly() != (risk == tool.RiskLow) {
			t.Fatalf("%s: registered %v; want risk %s, read-only only when low", name, ok, risk)
		}
	}

	readme := call[github.ReadFileOut](t, reg, "github__read_file", `{"repo":"acme/app","path":"README.md"}`)
	if readme.Content != "# App\n" {
		t.Fatalf("README read as %q", readme.Content)
	}
	br := call[github.BranchOut](t, reg, "github__create_branch", `{"repo":"acme/app","branch":"docs"}`)
	if br.SHA != gh.Repo("acme/app").Branches["main"] {
		t.Fatalf("branch docs starts at %s, want main's head", br.SHA)
	}
	commit := call[github.CommitChangeOut](t, reg, "github__commit_change", `{"repo":"acme/app","branch":"docs","path":"README.md","content":"# App\nNow documented.\n","message":"docs"}`)
	if repo := gh.Repo("acme/app"); repo.Files["README.md"] != "# App\nNow documented.\n" || repo.Branches["docs"] != commit.Commit {
		t.Fatalf("after the commit: file %q, docs at %s; want the new text at commit %s", repo.Files["README.md"], repo.Branches["docs"], commit.Commit)
	}
	pr := call[github.OpenPullRequestOut](t, reg, "github__open_pull_request", `{"repo":"acme/app","title":"Document the app","head":"docs","base":"main"}`)
	list := call[github.ListPullRequestsOut](t, reg, "github__list_pull_requests", `{"repo":"acme/app"}`)
	if len(list.PullRequests) != 1 || list.PullRequests[0].Number != pr.Number || list.PullRequests[0].Author != "octo" || list.PullRequests[0].Head != "docs" {
		t.Fatalf("open pull requests: %+v, want #%d by octo from docs", list.PullRequests, pr.Number)
	}
	call[github.CommentOut](t, reg, "github__comment", `{"repo":"acme/app","number":1,"body":"Ready."}`)
	merged := call[github.MergeOut](t, reg, "github__merge_pull_request", `{"repo":"acme/app","number":1,"method":"squash"}`)
	if !merged.Merged {
		t.Fatalf("merge: %+v", merged)
	}
	call[github.DeleteBranchOut](t, reg, "github__delete_branch", `{"repo":"acme/app","branch":"docs"}`)
	repo := gh.Repo("acme/app")
	if _, ok := repo.Branches["docs"]; ok || len(repo.Comments) != 1 || repo.Comments[0].Author != "octo" || repo.PRs[0].State != "closed" {
		t.Fatalf("after the workflow: %+v; want docs deleted, one comment by octo, the pull request closed", repo)
	}

	// Another account does not see the repository: GitHub's 404 reaches
	// the model as a tool error.
	other := tool.NewRegistry()
	if err := github.Register(other, login(t, oauth, gh, oauthtest.Account{ID: "2", Login: "mallory"})); err != nil {
		t.Fatal(err)
	}
	tl, _ := other.Get("github__list_pull_requests")
	if res := tl.Call(context.Background(), &tool.Request{}, json.RawMessage(`{"repo":"acme/app"}`)); !res.IsError || !strings.Contains(string(res.Output), "404") {
		t.Fatalf("listing as another account: %s; want GitHub's 404 as a tool error", res.Output)
	}
}
