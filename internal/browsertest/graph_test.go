// The runs view, the work graph and a schedule's "Run now" in headless
// Chromium, against the real service, on the console's browser harness
// (env_test.go of this package).
// Run: go test -run TestRunsAndGraphViews ./internal/browsertest/

package browsertest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The plan turn joins the harness's script: conditional on its own
// keywords, it changes no other test's conversation.
func init() {
	script = strings.Replace(script, "turns:\n", "turns:\n"+planTurns, 1)
}

const planTurns = `  - after_tool: plan_run
    text: "Run started."
  - when_last_user_contains: "plan the work"
    tool_calls:
      - name: plan_run
        input:
          goal: "Tidy the docs"
          steps:
            - {id: outline, title: "Outline the docs", agent: helper}
            - {id: write, title: "Write them", agent: helper, depends_on: [outline]}
`

// A conversation with a fork whose turn plans a run of two steps: the runs
// view shows the run with its steps and events; the work graph shows the
// conversation, its fork, the run, its steps and their conversations and
// the agent, and its nodes navigate (the fork to its chat, the run to the
// runs view). Then the operator runs a routine now from the operations
// view.
func TestRunsAndGraphViews(t *testing.T) {
	t.Parallel()
	chromium(t)
	eachStore(t, func(t *testing.T, db string) {
		// A second agent for the steps: a lead cannot hand itself a step.
		e := startEnvWith(t, db, func(script string) string {
			return "agents:\n  - name: switchboard\n    model: scripted:" + script + "\n    answers: {default: true}\n" +
				"  - name: helper\n    model: scripted:" + script + "\n"
		})
		p := page{t: t, ctx: browser(t)}
		link := e.loginLink("EvLoginG")
		p.do("sign in", chromedp.Navigate(link))
		p.waitJS("signed in", `!document.getElementById("shell").hidden && document.getElementById("who").textContent !== ""`)

		// A conversation, then a fork of its first message whose turn
		// plans the run, through the API the page uses.
		api := `(async (method, path, body) => {
			const csrf = (await (await fetch("/api/session")).json()).csrf;
			const r = await fetch(path, {method, headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: JSON.stringify(body)});
			if (r.status >= 300) throw new Error(method + " " + path + ": " + r.status);
			return r.json();
		})`
		conv := eval[string](p, api+`("POST", "/api/conversations", {}).then(c => c.id)`)
		eval[string](p, api+`("PATCH", "/api/conversations/`+conv+`", {title: "Docs day"}).then(() => "ok")`)
		eval[string](p, api+`("POST", "/api/conversations/`+conv+`/messages", {text: "hello graph"}).then(() => "ok")`)
		e.waitStatus(conv, "idle")
		fork := eval[string](p, api+`("POST", "/api/conversations/`+conv+`/fork", {seq: 1, content: "plan the work, please"}).then(f => f.conversation_id)`)
		if fork == "" || fork == conv {
			t.Fatalf("the fork answered %q", fork)
		}
		p.waitJS("the run done", `fetch("/api/runs?conversation=`+fork+`").then(r => r.json()).then(d => d.runs.length === 1 && d.runs[0].status === "done")`)
		run := eval[string](p, `fetch("/api/runs?conversation=`+fork+`").then(r => r.json()).then(d => d.runs[0].id)`)

		// ---- the runs view ----
		p.do("the runs view", chromedp.Navigate(e.base+"/?view=runs"))
		p.waitJS("the run with its steps", `document.querySelector('#run-detail[data-status="done"]') && document.querySelectorAll("#run-detail ~ section tr[data-step]").length === 2`)
		if got := eval[[]string](p, `[...document.querySelectorAll("tr[data-step]")].map(r => r.dataset.step + ":" + r.querySelector(".pill").textContent)`); strings.Join(got, ",") != "outline:done,write:done" {
			t.Errorf("the steps and their statuses: %v", got)
		}
		if n := eval[float64](p, `document.querySelectorAll("#run-events li").length`); n < 4 {
			t.Errorf("the run's events: %v items, want the steps' starts and ends at least", n)
		}
		if got := eval[string](p, `document.querySelector("#run-list a[aria-current=true]").dataset.run`); got != run {
			t.Errorf("the chosen run is %q, want %q", got, run)
		}
		p.shot("r1-runs")

		// ---- the work graph ----
		p.do("the graph of the conversation", chromedp.Navigate(e.base+"/?view=graph&c="+conv))
		p.waitJS("the graph drawn", `document.querySelectorAll("#graph-svg g.node").length >= 8`)
		kinds := eval[map[string]float64](p, `[...document.querySelectorAll("#graph-svg g.node")].reduce((m, n) => (m[n.dataset.kind] = (m[n.dataset.kind] || 0) + 1, m), {})`)
		want := map[string]float64{"conversation": 1, "fork": 1, "run": 1, "step": 2, "task": 2, "agent": 2}
		for k, v := range want {
			if kinds[k] != v {
				t.Errorf("graph nodes of kind %s: %v, want %v (all: %v)", k, kinds[k], v, kinds)
			}
		}
		if n := eval[float64](p, `document.querySelectorAll('#graph-svg g.edge[data-kind="fork-of"], #graph-svg g.edge[data-kind="run-of"], #graph-svg g.edge[data-kind="step-of"]').length`); n != 4 {
			t.Errorf("fork-of, run-of and step-of edges: %v, want 4", n)
		}
		if cur := eval[string](p, `document.querySelector("#graph-svg g.node.current").dataset.id`); cur != "conversation:"+conv {
			t.Errorf("the current node is %q", cur)
		}
		p.shot("g1-graph")
		// Click the fork: its chat opens.
		p.do("clicking the fork", chromedp.Click(chromedp.CSS(`#graph-svg g.node[data-kind="fork"] rect`)))
		p.waitJS("the fork's chat", `new URLSearchParams(location.search).get("c") === "`+fork+`" && document.querySelector("#composer")`)
		p.waitJS("the fork's messages", `[...document.querySelectorAll("#log .msg.user .body")].some(b => b.textContent.includes("plan the work"))`)
		p.shot("g2-fork-chat")
		// Back to the graph, and through the run node to the runs view.
		p.do("back", chromedp.NavigateBack())
		p.waitJS("the graph again", `document.querySelector('#graph-svg g.node[data-kind="run"]')`)
		p.do("clicking the run", chromedp.Click(chromedp.CSS(`#graph-svg g.node[data-kind="run"] rect`)))
		p.waitJS("the run in the runs view", `new URLSearchParams(location.search).get("view") === "runs" && document.querySelector('#run-detail[data-run="`+run+`"]')`)
		// The chat links to the graph of its tree.
		p.do("the chat of the fork", chromedp.Navigate(e.base+"/?c="+fork))
		p.waitJS("the chat", `document.querySelector("#open-graph")`)
		p.do("the chat's link to the graph", chromedp.Click(chromedp.CSS("#open-graph")))
		p.waitJS("the graph of the fork's tree", `new URLSearchParams(location.search).get("view") === "graph" && document.querySelector("#graph-svg g.node.current[data-kind=fork]")`)

		// ---- run a routine now, as the operator ----
		e.dm("EvRoutineG", alice, aliceDM, "!routine add digest every 4h -- summarise the docs work")
		e.waitFor("the routine stored", func() bool {
			var s struct {
				Schedules []struct{} `json:"schedules"`
			}
			e.operator("GET", "/api/schedules", nil, &s)
			return len(s.Schedules) == 1
		})
		p.do("signing out", chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#signin")))
		p.do("signing in with the operator token",
			chromedp.SendKeys(chromedp.CSS(`#signin input[name="token"]`), opToken),
			chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#tabs a[data-view="ops"]`)))
		p.do("the operations view", chromedp.Navigate(e.base+"/?view=ops"))
		p.waitJS("the routine with Run now", `document.querySelector('#schedules button[data-act="run"]')`)
		p.do("run now", chromedp.Click(chromedp.CSS(`#schedules button[data-act="run"]`)))
		e.waitFor("the routine's run", func() bool {
			var s struct {
				Schedules []struct {
					Runs int `json:"runs"`
				} `json:"schedules"`
			}
			e.operator("GET", "/api/schedules", nil, &s)
			return len(s.Schedules) == 1 && s.Schedules[0].Runs == 1
		})
		p.waitJS("the toast", `[...document.querySelectorAll(".toast")].some(t => t.textContent.includes("digest runs now"))`)
		p.shot("o1-run-now")
		// Two more requests back to back: the second is the first's
		// occurrence (the same minute) and queues nothing. A paused routine
		// is refused with the reason.
		twice := eval[[]map[string]any](p, `(async () => {
			const csrf = (await (await fetch("/api/session")).json()).csrf;
			const id = (await (await fetch("/api/schedules")).json()).schedules[0].id;
			const post = (verb) => fetch("/api/schedules/" + id + "/" + verb, {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: "{}"});
			const a = await post("run"), b = await post("run");
			await post("pause");
			const c = await post("run");
			return [{status: a.status, ...(await a.json())}, {status: b.status, ...(await b.json())}, {status: c.status, ...(await c.json())}];
		})()`)
		if twice[0]["status"] != 202.0 || twice[1]["status"] != 202.0 {
			t.Fatalf("run now twice: %v", twice)
		}
		if twice[0]["due"] == twice[1]["due"] && twice[1]["fired"] != false {
			t.Errorf("a second run now for the same occurrence fired again: %v", twice)
		}
		if twice[2]["status"] != 409.0 || !strings.Contains(fmt.Sprint(twice[2]["error"]), "resume it") {
			t.Errorf("run now of a paused routine: %v, want 409 saying to resume it", twice[2])
		}
	})
}
