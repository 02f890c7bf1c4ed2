// A coding run's change in the console's runs view, in headless Chromium,
// against the real service.
// Run: go test -run TestCodingRunInRunsView ./internal/browsertest/

package browsertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/internal/testenv"
)

// A lead plans one coding step on a local repository; a model agent writes
// a file with the worktree tools; the check passes and the branch is
// pushed. The runs view shows the step's change: its branch, the file,
// the passed gate and the diff with the added line marked.
func TestCodingRunInRunsView(t *testing.T) {
	t.Parallel()
	chromium(t)
	eachStore(t, func(t *testing.T, db string) {
		repo := testenv.GitRepo(t, map[string]string{"README.md": "# app\n"})
		e := startEnvWith(t, db, func(script string) string {
			dir := filepath.Dir(script)
			lead := filepath.Join(dir, "lead.yaml")
			writer := filepath.Join(dir, "writer.yaml")
			write(t, lead, fmt.Sprintf(`turns:
  - after_tool: plan_run
    text: "Run started."
  - when_last_user_contains: "document it"
    tool_calls:
      - name: plan_run
        input:
          goal: "Document the usage"
          check: {command: "test -f docs/usage.md"}
          steps:
            - {id: docs, title: "Write docs/usage.md", agent: writer, inputs: {repo: %q}}
fallback:
  text: "lead here."
`, repo))
			write(t, writer, `turns:
  - after_tool: worktree_write
    text: "Wrote docs/usage.md."
  - when_last_user_contains: 'Step "docs"'
    tool_calls:
      - name: worktree_write
        input: {path: docs/usage.md, content: "Run it with make.\n"}
fallback:
  text: "writer here."
`)
			return "agents:\n  - name: switchboard\n    model: scripted:" + lead + "\n    answers: {default: true}\n" +
				"  - name: writer\n    model: scripted:" + writer + "\n" +
				"runs:\n  repositories: [" + fmt.Sprintf("%q", filepath.Dir(repo)+"/") + "]\n"
		})
		p := page{t: t, ctx: browser(t)}
		p.do("sign in", chromedp.Navigate(e.loginLink("EvLoginCode")))
		p.waitJS("signed in", `!document.getElementById("shell").hidden && document.getElementById("who").textContent !== ""`)
		api := `(async (method, path, body) => {
			const csrf = (await (await fetch("/api/session")).json()).csrf;
			const r = await fetch(path, {method, headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: JSON.stringify(body)});
			if (r.status >= 300) throw new Error(method + " " + path + ": " + r.status);
			return r.json();
		})`
		conv := eval[string](p, api+`("POST", "/api/conversations", {}).then(c => c.id)`)
		eval[string](p, api+`("POST", "/api/conversations/`+conv+`/messages", {text: "please document it"}).then(() => "ok")`)
		p.waitJS("the run done", `fetch("/api/runs?conversation=`+conv+`").then(r => r.json()).then(d => d.runs.length === 1 && d.runs[0].status === "done")`)
		run := eval[string](p, `fetch("/api/runs?conversation=`+conv+`").then(r => r.json()).then(d => d.runs[0].id)`)

		p.do("the runs view", chromedp.Navigate(e.base+"/?view=runs&run="+run))
		p.waitJS("the step's change", `document.querySelector('.changes[data-step="docs"] pre.diff')`)
		branch := "switchboard/run-" + run[len(run)-8:] + "-docs"
		if got := eval[string](p, `document.querySelector('.changes[data-step="docs"] code').textContent`); got != branch {
			t.Errorf("the change's branch is %q, want %q", got, branch)
		}
		if got := eval[[]string](p, `[...document.querySelectorAll('.changes pre.diff span.add')].map(s => s.textContent.trim())`); !containsAll(got, "+Run it with make.") || containsAll(got, "+++ b/docs/usage.md") {
			t.Errorf("the diff's added lines: %q", got)
		}
		if got := eval[string](p, `document.querySelector('.changes ul.files li').textContent`); got != "docs/usage.md +1 −0" {
			t.Errorf("the change's file: %q", got)
		}
		if got := eval[string](p, `document.querySelector('.changes ul.gates li').dataset.passed + " " + document.querySelector('.changes ul.gates li').textContent`); !strings.HasPrefix(got, "true passed check:") {
			t.Errorf("the change's gate: %q", got)
		}
		if got := eval[string](p, `document.querySelector('.changes p').textContent`); !strings.Contains(got, "1 file changed, 1 insertion(+), 0 deletions(-)") || !strings.Contains(got, "pushed") {
			t.Errorf("the change's summary: %q", got)
		}
		p.shot("c1-coding-run")
	})
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, l := range list {
			if l == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
