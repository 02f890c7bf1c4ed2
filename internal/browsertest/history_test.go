// The history and artifacts views in headless Chromium, against the real
// service, on the console's browser harness (env_test.go of this package).
// Run: go test -run TestHistoryViews ./internal/browsertest/

package browsertest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboardhq/switchboard/internal/testenv"
)

// The artifact turns join the harness's script: conditional on their own
// keywords, they change no other test's conversation.
func init() {
	script = strings.Replace(script, "turns:\n", "turns:\n"+artifactTurns, 1)
}

const artifactTurns = `  - after_tool: artifact_create
    text: "Made the artifact."
  - after_tool: artifact_update
    text: "Edited the artifact."
  - when_last_user_contains: "make code"
    tool_calls:
      - {name: artifact_create, input: {kind: code, title: main.go, language: go, content: "package main\n\nfunc main() {}\n"}}
  - when_last_user_contains: "rewrite code"
    tool_calls:
      - {name: artifact_update, input: {id: main.go, content: "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(2) }\n"}}
  - when_last_user_contains: "edit code"
    tool_calls:
      - {name: artifact_update, input: {id: main.go, content: "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n"}}
`

// Search, a new folder, a bulk move, an inline rename and an archive in
// the history view; an artifact made and edited by the agent, its diff and
// a comment in the artifacts view.
func TestHistoryViews(t *testing.T) {
	t.Parallel()
	chromium(t)
	t.Run("sqlite", func(t *testing.T) {
		e := startEnv(t, "sqlite:"+testenv.SQLiteFile(t))
		p := page{t: t, ctx: browser(t)}
		link := e.loginLink("EvLoginH")
		p.do("sign in", chromedp.Navigate(link))
		p.waitJS("signed in", `!document.getElementById("shell").hidden && document.getElementById("who").textContent !== ""`)
		// Three conversations through the API the page uses.
		mk := `(async (title, text) => {
			const csrf = (await (await fetch("/api/session")).json()).csrf;
			const h = {"Content-Type": "application/json", "X-CSRF-Token": csrf};
			const c = await (await fetch("/api/conversations", {method: "POST", headers: h, body: "{}"})).json();
			await fetch("/api/conversations/" + c.id, {method: "PATCH", headers: h, body: JSON.stringify({title})});
			await fetch("/api/conversations/" + c.id + "/messages", {method: "POST", headers: h, body: JSON.stringify({text})});
			return c.id;
		})`
		eval[string](p, mk+`("Budget review", "the quarterly numbers")`)
		eval[string](p, mk+`("Trip to Lisbon", "falcons nest where?")`)
		code := eval[string](p, mk+`("Code", "make code")`)
		p.waitJS("the artifact", `fetch("/api/artifacts").then(r => r.json()).then(d => d.artifacts.length === 1)`)
		p.waitJS("the turn that made it to end", `fetch("/api/conversations/`+code+`").then(r => r.json()).then(c => c.status === "idle")`)
		eval[string](p, `(async () => { const csrf = (await (await fetch("/api/session")).json()).csrf; await fetch("/api/conversations/`+code+`/messages", {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: JSON.stringify({text: "edit code"})}); return "ok" })()`)
		p.waitJS("version 2", `fetch("/api/artifacts").then(r => r.json()).then(d => d.artifacts[0].version === 2)`)

		p.do("history view", chromedp.Navigate(e.base+"/?view=history"))
		p.waitJS("rows", `document.querySelectorAll("#hist-list .hist-row").length === 3`)
		p.shot("h1-history")
		p.do("search", chromedp.SendKeys(chromedp.CSS("#hist-q"), "falcons"))
		p.waitJS("search result", `document.querySelectorAll("#hist-list .hist-row").length === 1 && document.querySelector("#hist-list .hist-title").textContent === "Trip to Lisbon"`)
		p.do("clear search", chromedp.Evaluate[chromedp.Void](`(() => { const q = document.getElementById("hist-q"); q.value = ""; q.dispatchEvent(new Event("input")); })()`))
		p.waitJS("all rows", `document.querySelectorAll("#hist-list .hist-row").length === 3`)
		// New folder.
		p.do("new folder", chromedp.Click(chromedp.CSS("#hist-new-folder")))
		p.do("folder name", chromedp.SendKeys(chromedp.CSS(".hist-folder-form input[type=text]"), "Work"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("folder listed", `[...document.querySelectorAll("#hist-folders a")].some(a => a.textContent === "Work")`)
		// Select two and move them with the bulk bar.
		p.do("select", chromedp.Evaluate[chromedp.Void](`(() => { const c = document.querySelectorAll("#hist-list input[type=checkbox]"); c[0].click(); c[1].click(); })()`))
		p.waitJS("bulk bar", `!document.getElementById("hist-bulk").hidden`)
		p.shot("h2-selected")
		p.do("move", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#hist-bulk select"); s.value = s.options[2].value; s.dispatchEvent(new Event("change")); })()`))
		p.waitJS("moved", `document.querySelectorAll("#hist-list .hist-folder-pill").length === 2`)
		// Rename inline.
		p.do("rename", chromedp.Evaluate[chromedp.Void](`document.querySelector("#hist-list .hist-actions button").click()`))
		p.do("type title", chromedp.Evaluate[chromedp.Void](`(() => { const i = document.querySelector(".hist-rename"); i.value = "Renamed one"; i.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter"})); })()`))
		p.waitJS("renamed", `[...document.querySelectorAll("#hist-list .hist-title")].some(a => a.textContent === "Renamed one")`)
		// Archive the first.
		p.do("archive", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("#hist-list .hist-actions button")[1].click()`))
		p.waitJS("archived hidden", `document.querySelectorAll("#hist-list .hist-row").length === 2`)
		p.shot("h3-after")

		p.do("artifacts view", chromedp.Navigate(e.base+"/?view=artifacts"))
		p.waitJS("gallery", `document.querySelectorAll("#art-grid .art-card").length === 1`)
		p.do("open", chromedp.Click(chromedp.CSS("#art-grid .art-card")))
		p.waitJS("panel", `document.getElementById("art-panel") && document.getElementById("art-content").textContent.includes("fmt.Println")`)
		p.do("diff", chromedp.Click(chromedp.CSS("#art-show-diff")))
		p.waitJS("diff shown", `document.getElementById("art-diff") && document.getElementById("art-diff").textContent.includes("+import")`)
		p.do("comment", chromedp.SendKeys(chromedp.CSS("#art-comment-text"), "nice"), chromedp.Click(chromedp.CSS(".art-comment-form button")))
		p.waitJS("comment listed", `document.getElementById("art-comments").textContent.includes("nice")`)
		p.shot("a1-artifacts")
		if got := eval[string](p, `location.search`); !strings.Contains(got, "artifact=") {
			t.Errorf("location %q", got)
		}

		// A second edit: three versions, each readable as it was, beside
		// the comment.
		eval[string](p, `(async () => { const csrf = (await (await fetch("/api/session")).json()).csrf; await fetch("/api/conversations/`+code+`/messages", {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: JSON.stringify({text: "rewrite code"})}); return "ok" })()`)
		p.waitJS("version 3", `fetch("/api/artifacts").then(r => r.json()).then(d => d.artifacts[0].version === 3)`)
		versions := eval[string](p, `(async () => {
			const id = (await (await fetch("/api/artifacts")).json()).artifacts[0].id;
			const out = [];
			for (const n of [1, 2, 3]) {
				const r = await fetch("/api/artifacts/" + id + "/versions/" + n);
				const v = await r.json();
				out.push(r.status + ":" + (v.content.includes("Println(2)") ? "2" : v.content.includes("Println(1)") ? "1" : "0"));
			}
			const a = await (await fetch("/api/artifacts/" + id)).json();
			out.push("comments:" + (a.comments || []).length);
			return out.join(" ");
		})()`)
		if versions != "200:0 200:1 200:2 comments:1" {
			t.Errorf("the artifact's versions and comments read %q, want three readable versions and the comment", versions)
		}

		// Export, import, export again: identical apart from the ids.
		same := eval[string](p, `(async () => {
			const csrf = (await (await fetch("/api/session")).json()).csrf;
			const norm = d => { d.conversation.id = ""; d.entries.forEach(e => e.id = ""); return JSON.stringify(d); };
			const before = await (await fetch("/api/conversations/`+code+`/export?format=json")).json();
			const imp = await (await fetch("/api/conversations/import", {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: JSON.stringify(before)})).json();
			const after = await (await fetch("/api/conversations/" + imp.id + "/export?format=json")).json();
			return imp.id !== "`+code+`" && norm(before) === norm(after) ? "same" : norm(before) + "\n" + norm(after);
		})()`)
		if same != "same" {
			t.Errorf("export → import → export differs:\n%s", same)
		}
	})
}
