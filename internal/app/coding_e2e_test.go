package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/clitest"
	"github.com/switchboardhq/switchboard/internal/githubtest"
	"github.com/switchboardhq/switchboard/internal/oauthtest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// Coding runs through the real app on the fake Slack, on both stores: a
// lead's plan names a repository (a local bare one, as a team's server
// would hold it); the coding step's fake Claude Code CLI edits files in
// its worktree; the change is committed on the step's branch, its diff is
// in GET /api/runs/{id}, the check runs in the worktree, and the branch
// reaches the repository.

const codingChannel = "C0CODING"

// codingLead is a lead whose plan hands one coding step on repo to coder,
// with check as the run's check.
func codingLead(repo, check string) string {
	return fmt.Sprintf(`turns:
  - after_tool: plan_run
    text: "Run started."
  - when_last_user_contains: "fix the readme"
    tool_calls:
      - name: plan_run
        input:
          goal: "Fix the readme"
          check: {command: %q}
          steps:
            - {id: fix, title: "Add a line to the changes", agent: coder, inputs: {repo: %q}}
fallback:
  text: "lead here."
`, check, repo)
}

const codingAgents = `  - name: lead
    model: {{lead}}
    answers: {default: true}
  - name: coder
    model: claude-code:sonnet
    persona: You write and fix code.
`

func startCoding(t *testing.T, db databaseFunc, scenario, repo, check string) (*slackEnv, string) {
	t.Helper()
	data := t.TempDir()
	cfg := agentsConfig(t, map[string]string{"lead": codingLead(repo, check)}, codingAgents, allowRepo(repo))
	e, _ := startCLIWith(t, db, scenario, data, envOptions{config: cfg})
	return e, data
}

// allowRepo lets coding steps use repo (runs.repositories).
func allowRepo(repo string) string {
	return fmt.Sprintf("runs:\n  repositories: [%q]\n", filepath.Dir(repo)+"/")
}

// TestCodingRunRefusesUnlistedRepository: a plan naming a local
// repository that runs.repositories does not list fails its step with the
// setting's name; nothing is fetched.
func TestCodingRunRefusesUnlistedRepository(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		repo := testenv.GitRepo(t, map[string]string{"README.md": "# app\n"})
		data := t.TempDir()
		cfg := agentsConfig(t, map[string]string{"lead": codingLead(repo, "true")}, codingAgents, "runs:\n  repositories: [\"/srv/git/\"]\n")
		e, _ := startCLIWith(t, db, "edit", data, envOptions{config: cfg})
		const ts = "1700003400.000100"
		e.mustPost(newEvent("EvCode5", mention(codingChannel, ts, "", alice, "please fix the readme")))
		r := onlyRun(t, e.store, e.conversation(codingChannel, ts).ID)
		_, steps := waitRun(t, e.store, r.ID, store.RunStatusFailed)
		e.waitIdle()
		if !strings.Contains(steps[0].Error, "runs.repositories") || !strings.Contains(steps[0].Error, repo) {
			t.Errorf("step error %q, want one naming the repository and runs.repositories", steps[0].Error)
		}
		if left, _ := os.ReadDir(filepath.Join(data, "repos")); len(left) != 0 {
			t.Errorf("an unlisted repository was fetched: %v", left)
		}
	})
}

type apiCodingRun struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Result string `json:"result"`
	Steps  []struct {
		Key     string            `json:"key"`
		Status  string            `json:"status"`
		Output  string            `json:"output"`
		Error   string            `json:"error"`
		Changes *core.StepChanges `json:"changes"`
	} `json:"steps"`
}

// TestCodingRunDeliversABranch: one coding step against a local bare
// repository ends done; the repository has the step's branch with the
// fake CLI's change, GET /api/runs/{id} shows its diff, the check ran in
// the worktree, and the worktree is gone.
func TestCodingRunDeliversABranch(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		repo := testenv.GitRepo(t, map[string]string{"README.md": "# app\n"})
		e, data := startCoding(t, db, "edit", repo, "test -s CHANGES.md && git status --porcelain | wc -l")
		const ts = "1700003000.000100"
		e.mustPost(newEvent("EvCode1", mention(codingChannel, ts, "", alice, "please fix the readme")))
		r := onlyRun(t, e.store, e.conversation(codingChannel, ts).ID)
		r, steps := waitRun(t, e.store, r.ID, store.RunStatusDone)
		done := e.waitReply(codingChannel, "Run "+run.ShortID(r)+": done")
		e.waitIdle()

		branch := "switchboard/run-" + run.ShortID(r) + "-fix"
		if !strings.Contains(shown(done), "↳ "+branch+" · 1 file changed, 1 insertion(+), 0 deletions(-) · pushed") {
			t.Errorf("the run's message %q does not show the step's change", shown(done))
		}
		head := testenv.Git(t, repo, "rev-parse", "refs/heads/"+branch)
		if got := testenv.Git(t, repo, "show", branch+":CHANGES.md"); !strings.Contains(got, `Step "fix" of a run`) {
			t.Errorf("CHANGES.md on the branch is %q, want the fake's line", got)
		}
		if got := testenv.Git(t, repo, "log", "--format=%an|%s", "main.."+branch); got != "coder|Add a line to the changes" {
			t.Errorf("the branch's commits are %q, want one by coder titled by the step", got)
		}
		if main := testenv.Git(t, repo, "rev-parse", "main"); testenv.Git(t, repo, "merge-base", "main", branch) != main {
			t.Errorf("the branch does not start from main")
		}

		var got apiCodingRun
		if code := e.runAPI("GET", "/api/runs/"+r.ID.String(), &got); code != 200 {
			t.Fatalf("GET run: %d", code)
		}
		ch := got.Steps[0].Changes
		if ch == nil {
			t.Fatalf("the step has no changes in the API: %+v", got.Steps[0])
		}
		if ch.Branch != branch || ch.Commit != head || ch.Base != "main" || !ch.Pushed || len(ch.Files) != 1 ||
			ch.Files[0].Path != "CHANGES.md" || ch.Insertions != 1 || !strings.Contains(ch.Text, "+++ b/CHANGES.md") {
			t.Errorf("changes = %+v", ch)
		}
		if len(ch.Gates) != 1 || ch.Gates[0].Kind != "check" || !ch.Gates[0].Passed || !strings.Contains(ch.Gates[0].Output, "exited 0:\n0") {
			t.Errorf("gates = %+v, want the check passed in a clean worktree", ch.Gates)
		}
		if ch.ArtifactID == nil {
			t.Errorf("the diff is not an artifact")
		} else if a, err := e.store.ArtifactGet(context.Background(), *ch.ArtifactID); err != nil || a.Language != "diff" || a.ConversationID != r.ConversationID {
			t.Errorf("diff artifact = %+v, %v", a, err)
		}
		if !strings.Contains(steps[0].Output, "Branch "+branch+" pushed") || !strings.Contains(r.Result, branch) {
			t.Errorf("step output %q / run result %q do not name the branch", steps[0].Output, r.Result)
		}
		var evs apiEvents
		e.runAPI("GET", "/api/runs/"+r.ID.String()+"/events", &evs)
		var kinds []string
		for _, ev := range evs.Events {
			kinds = append(kinds, ev.Kind)
			if ev.Kind == core.RunEventActivity && !strings.Contains(ev.Detail, "Edit ") {
				t.Errorf("activity %q does not name the edit", ev.Detail)
			}
		}
		for _, k := range []string{core.RunEventWorktree, core.RunEventActivity, core.RunEventDiff, core.RunEventGate, core.RunEventDelivered} {
			if !strings.Contains(strings.Join(kinds, " "), k) {
				t.Errorf("no %s event in %v", k, kinds)
			}
		}
		if left, _ := os.ReadDir(filepath.Join(data, "worktrees")); len(left) != 0 {
			t.Errorf("worktrees left after the run: %v", left)
		}
	})
}

// TestCodingRunCheckSendsBackOnce: a check that fails sends the step back
// to its agent once with the output; when it fails again the run fails
// with the command's output, the branch stays local (not pushed) and the
// worktree is kept for inspection. A check that the second round passes
// delivers.
func TestCodingRunCheckSendsBackOnce(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		t.Run("fails", func(t *testing.T) {
			repo := testenv.GitRepo(t, map[string]string{"README.md": "# app\n"})
			e, data := startCoding(t, db, "edit", repo, "echo 'tests: 3 of 7 failed'; exit 1")
			const ts = "1700003100.000100"
			e.mustPost(newEvent("EvCode2", mention(codingChannel, ts, "", alice, "please fix the readme")))
			r := onlyRun(t, e.store, e.conversation(codingChannel, ts).ID)
			r, steps := waitRun(t, e.store, r.ID, store.RunStatusFailed)
			e.waitIdle()
			if !strings.Contains(steps[0].Error, "tests: 3 of 7 failed") || !strings.Contains(r.Result, "tests: 3 of 7 failed") {
				t.Errorf("step error %q / result %q, want the command's output", steps[0].Error, r.Result)
			}
			ch := core.StepChangesOf(steps[0])
			if ch == nil || ch.SentBack != 1 || len(ch.Gates) != 2 || ch.Pushed {
				t.Fatalf("changes = %+v, want one send-back, two failed gates, nothing pushed", ch)
			}
			// The second round's message to coder carried the failure.
			turns := e.entries(*steps[0].ConversationID, store.EntryUser)
			if len(turns) != 2 || !strings.Contains(decode[core.UserContent](t, turns[1]).Text, "tests: 3 of 7 failed") {
				t.Errorf("the step's conversation has %d messages to coder; the second should carry the check's output", len(turns))
			}
			if out := testenv.Git(t, repo, "for-each-ref", "refs/heads/switchboard/"); out != "" {
				t.Errorf("a failed run pushed %q", out)
			}
			if left, _ := os.ReadDir(filepath.Join(data, "worktrees")); len(left) != 1 {
				t.Errorf("worktrees after a failed run: %v, want the step's kept", left)
			}
		})
		t.Run("fixed", func(t *testing.T) {
			repo := testenv.GitRepo(t, map[string]string{"README.md": "# app\n"})
			e, _ := startCoding(t, db, "edit", repo, "test -f FIXED || { echo 'FIXED is missing'; exit 1; }")
			const ts = "1700003200.000100"
			e.mustPost(newEvent("EvCode3", mention(codingChannel, ts, "", alice, "please fix the readme")))
			r := onlyRun(t, e.store, e.conversation(codingChannel, ts).ID)
			_, steps := waitRun(t, e.store, r.ID, store.RunStatusDone)
			e.waitIdle()
			ch := core.StepChangesOf(steps[0])
			if ch == nil || ch.SentBack != 1 || len(ch.Gates) != 2 || ch.Gates[0].Passed || !ch.Gates[1].Passed || !ch.Pushed {
				t.Fatalf("changes = %+v, want a failed gate, a send-back, a passed gate and a push", ch)
			}
			branch := "switchboard/run-" + run.ShortID(r) + "-fix"
			if got := testenv.Git(t, repo, "log", "--format=%s", "main.."+branch); len(strings.Split(got, "\n")) != 2 {
				t.Errorf("the branch's commits are %q, want one per round", got)
			}
			if got := testenv.Git(t, repo, "show", branch+":FIXED"); got != "yes" {
				t.Errorf("FIXED on the branch = %q", got)
			}
		})
	})
}

// TestCodingRunOpensPullRequest: a coding step on owner/name goes through
// the workspace's GitHub connection (the fake GitHub, serving the
// repository over git's HTTP protocol): the branch is pushed with the
// connection's token and a pull request opened with the run's summary.
func TestCodingRunOpensPullRequest(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		oauth := oauthtest.New(t, oauthtest.Options{Flavor: oauthtest.GitHub, ClientID: ghClientID, ClientSecret: ghClientSecret})
		gh := githubtest.New(t, oauth)
		gh.AddGitRepo(t, &githubtest.Repo{Owner: "acme", Name: "app", Readers: []string{"acme-bot"}, Files: map[string]string{"README.md": "# app\n"}})
		fake := clitest.Build(t)
		extra := map[string]string{
			"GITHUB_CLIENT_ID":             ghClientID,
			"GITHUB_CLIENT_SECRET":         ghClientSecret,
			"SWITCHBOARD_GITHUB_OAUTH_URL": oauth.URL(),
			"SWITCHBOARD_GITHUB_API_URL":   gh.URL(),
			"SWITCHBOARD_CLAUDE_CODE_PATH": fake.Claude,
			"SWITCHBOARD_DATA_DIR":         t.TempDir(),
			"SWITCHBOARD_CLI_ENV":          "FAKECLI_SCENARIO,FAKECLI_STATE,FAKECLI_LOG",
		}
		for _, kv := range fake.Env("edit") {
			k, v, _ := strings.Cut(kv, "=")
			extra[k] = v
		}
		cfg := agentsConfig(t, map[string]string{"lead": codingLead("acme/app", "test -s CHANGES.md")}, codingAgents, "")
		e := &connEnv{installEnv: startInstallWith(t, db(t), "k1:"+testKey(7), testenv.Logger(t), extra, cfg), oauth: oauth, gh: gh}
		e.install(teamA)
		link := e.command(teamA, "U0INSTALLER", "D0AOWN", "1700004000.000100", "!connections connect github workspace")
		e.connect(link, oauthtest.Account{ID: "9001", Login: "acme-bot"})

		e.mustPost(teamMentionBy(teamA, alice, "C0CODEGH", "1700004001.000100", "please fix the readme"))
		var r *store.Run
		poll(t, "a run", func() (bool, string) {
			rs, err := e.store.RunList(context.Background(), &store.RunListParams{})
			if err != nil || len(rs) != 1 {
				return false, fmt.Sprintf("%d runs, %v", len(rs), err)
			}
			r = rs[0]
			return true, ""
		})
		r, steps := waitRun(t, e.store, r.ID, store.RunStatusDone)
		branch := "switchboard/run-" + run.ShortID(r) + "-fix"
		repo := gh.Repo("acme/app")
		if _, ok := repo.Branches[branch]; !ok {
			t.Fatalf("GitHub has branches %v, want %s", repo.Branches, branch)
		}
		if len(repo.PRs) != 1 {
			t.Fatalf("%d pull requests, want 1", len(repo.PRs))
		}
		pr := repo.PRs[0]
		if pr.Head != branch || pr.Base != "main" || pr.Author != "acme-bot" || pr.Title != "Add a line to the changes" ||
			!strings.Contains(pr.Body, "Fix the readme") || !strings.Contains(pr.Body, "`CHANGES.md` +1") || !strings.Contains(pr.Body, "check: passed") {
			t.Errorf("pull request = %+v", pr)
		}
		ch := core.StepChangesOf(steps[0])
		if ch == nil || ch.PullRequest == nil || ch.PullRequest.Number != 1 || !strings.Contains(r.Result, "Pull request #1") {
			t.Errorf("changes %+v / result %q do not name the pull request", ch, r.Result)
		}
		var gitCalls int
		for _, c := range gh.Calls() {
			if strings.Contains(c.Path, ".git/") && c.Login != "" && c.Login != "acme-bot" {
				t.Errorf("git call %s %s as %q, want the workspace's account", c.Method, c.Path, c.Login)
			}
			if strings.Contains(c.Path, ".git/") {
				gitCalls++
			}
		}
		if gitCalls == 0 {
			t.Errorf("no git call reached the fake GitHub")
		}
	})
}

// TestCodingRunModelAgent: a coding step done by a model agent (not a
// CLI) changes the repository with the worktree tools, which reach the
// step's worktree only; its change is delivered like a CLI's.
func TestCodingRunModelAgent(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		repo := testenv.GitRepo(t, map[string]string{"README.md": "# app\n"})
		writer := `turns:
  - after_tool: worktree_write
    text: "Wrote docs/usage.md."
  - when_last_user_contains: 'Step "fix"'
    tool_calls:
      - name: worktree_list
        input: {}
      - name: worktree_write
        input: {path: docs/usage.md, content: "Run it.\n"}
fallback:
  text: "writer here."
`
		agents := `  - name: lead
    model: {{lead}}
    answers: {default: true}
  - name: writer
    model: {{writer}}
`
		lead := strings.Replace(codingLead(repo, "test -f docs/usage.md"), "agent: coder", "agent: writer", 1)
		cfg := agentsConfig(t, map[string]string{"lead": lead, "writer": writer}, agents, allowRepo(repo))
		e := startSlack(t, db(t), envOptions{config: cfg, cli: app.CLISettings{DataDir: t.TempDir()}})
		const ts = "1700003300.000100"
		e.mustPost(newEvent("EvCode4", mention(codingChannel, ts, "", alice, "please fix the readme")))
		r := onlyRun(t, e.store, e.conversation(codingChannel, ts).ID)
		_, steps := waitRun(t, e.store, r.ID, store.RunStatusDone)
		e.waitIdle()
		branch := "switchboard/run-" + run.ShortID(r) + "-fix"
		if got := testenv.Git(t, repo, "show", branch+":docs/usage.md"); got != "Run it." {
			t.Errorf("docs/usage.md on the branch = %q", got)
		}
		if ch := core.StepChangesOf(steps[0]); ch == nil || !ch.Pushed || len(ch.Files) != 1 || ch.Files[0].Path != "docs/usage.md" {
			t.Errorf("changes = %+v", ch)
		}
		// Outside a coding step the tools are not offered: the lead's
		// conversation never saw them.
		for _, e := range e.entries(r.ConversationID, store.EntryToolCall) {
			if name := decode[core.ToolCallContent](t, e).Name; strings.HasPrefix(name, "worktree_") {
				t.Errorf("the lead called %s", name)
			}
		}
	})
}
