// Package browsertest drives the web console in headless Chromium against
// the real service (internal/app as `switchboard serve` wires it), a fake
// Slack and a scripted model. It is a package of its own so that it runs
// in parallel with the rest of the suite.
package browsertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboardhq/switchboard/store"
)

// TestConsole signs a person in with a one-time link and goes through the
// console: a streamed chat, ask_user answered in the form, a chart drawn in
// the page, deep links with back and forward, a restart of the server in
// the middle of a reply, a fork from an earlier message and its tree, the
// slider, a workspace the person has no access to, and the operator's
// view: a reminder paused, resumed and run now (posted once in Slack).
func TestConsole(t *testing.T) {
	t.Parallel()
	chromium(t)
	eachStore(t, func(t *testing.T, db string) {
		// A daily budget on the default agent, its scripted model priced,
		// for the operations view's budgets panel.
		e := startEnvWith(t, db, func(script string) string {
			return fmt.Sprintf("prices:\n  %q: {input: 1, output: 1}\nbudgets:\n  - {agent: switchboard, daily_usd: 50}\n", "scripted:"+script)
		})
		p := page{t: t, ctx: browser(t)}

		// ---- sign in with a one-time link ----
		link := e.loginLink("EvLogin1")
		if !strings.HasPrefix(link, e.base+"/login?t=") {
			t.Fatalf("link %q is not under %s", link, e.base)
		}
		p.do("opening the sign-in link", chromedp.Navigate(link))
		p.waitJS("the console after signing in", `!document.getElementById("shell").hidden && document.getElementById("who").textContent !== ""`)
		if loc := eval[string](p, `location.href`); strings.Contains(loc, "t=") {
			t.Errorf("the address bar still holds the link's secret: %s", loc)
		}
		cookie := eval[string](p, `document.cookie`)
		if strings.Contains(cookie, "switchboard_session") {
			t.Errorf("the session cookie is readable from script (%q); it must be HttpOnly", cookie)
		}
		p.shot("01-signed-in")

		// An unsafe request without the CSRF header is refused, even with
		// the cookie.
		if got := eval[float64](p, `fetch("/api/conversations", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}).then(r => r.status)`); got != 403 {
			t.Errorf("POST without %s answered %v, want 403", "X-CSRF-Token", got)
		}

		if n := eval[float64](p, `document.querySelectorAll('#tabs a[data-view="ops"]').length`); n != 0 {
			t.Error("a person sees the operator's Operations tab")
		}

		// ---- chat with a streamed reply ----
		p.do("opening a new conversation with the keyboard",
			chromedp.KeyEvent("n", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
			chromedp.WaitVisible(chromedp.CSS("#composer")))
		p.do("sending the first message", chromedp.SendKeys(chromedp.CSS("#composer"), "hello there"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the chat of the new conversation", `new URLSearchParams(location.search).get("c") && document.querySelector("#log .msg.assistant[data-seq]")`)
		convID := eval[string](p, `new URLSearchParams(location.search).get("c")`)
		if got := eval[string](p, `document.querySelector("#log .msg.assistant[data-seq] .body").textContent`); !strings.Contains(got, "hello there") {
			t.Errorf("first reply %q does not echo the message", got)
		}
		// Watch the next reply arrive in pieces.
		eval[bool](p, `(() => { window.__live = 0; new MutationObserver(() => { const l = document.getElementById("live"); if (l && l.querySelector(".body").textContent) window.__live++; }).observe(document.body, {subtree: true, childList: true, characterData: true}); return true })()`)
		p.do("sending a second message", chromedp.SendKeys(chromedp.CSS("#composer"), "tell me more"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the streamed reply", `[...document.querySelectorAll("#log .msg.assistant[data-seq] .body")].some(b => b.textContent.includes("tell me more"))`)
		if n := eval[float64](p, `window.__live`); n < 3 {
			t.Errorf("the reply changed the live message %v times; want it streamed in several pieces", n)
		}
		p.shot("02-chat")

		// The page's context reached the log with the message.
		var entries struct {
			Entries []struct {
				Kind    string         `json:"kind"`
				Content map[string]any `json:"content"`
			} `json:"entries"`
		}
		e.operator("GET", "/api/conversations/"+convID+"/entries", nil, &entries)
		withContext := 0
		for _, en := range entries.Entries {
			if c, _ := en.Content["page_context"].(string); en.Kind == "user" && strings.Contains(c, "chat view") {
				withContext++
			}
		}
		if withContext != 2 {
			t.Errorf("%d user messages carry the page's context; want 2: %+v", withContext, entries.Entries)
		}

		// ---- ask_user answered in the form, and the turn goes on ----
		p.do("asking for a choice", chromedp.SendKeys(chromedp.CSS("#composer"), "pick a colour for me"), chromedp.KeyEvent(kb.Enter))
		p.do("the question as a form", chromedp.WaitVisible(chromedp.CSS("form.ask-user")))
		p.shot("03-ask-user")
		p.doOnStillDOM("answering Green", chromedp.Click(chromedp.CSS(`form.ask-user input[value="Green"]`)), chromedp.Click(chromedp.CSS("form.ask-user button[type=submit]")))
		p.waitJS("the reply after the answer", `[...document.querySelectorAll("#log .msg.assistant .body")].some(b => b.textContent.includes("Noted: you picked") && b.textContent.includes("Green"))`)

		// ---- render_chart drawn in the page ----
		p.do("asking for a chart", chromedp.SendKeys(chromedp.CSS("#composer"), "chart please"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the chart and the reply after it", `document.querySelectorAll("#log .msg.tool_call .chart svg rect[data-series]").length === 4 && [...document.querySelectorAll("#log .msg.assistant .body")].some(b => b.textContent.includes("There is your chart"))`)
		p.shot("04-chart")

		// ---- an error entry: shown, marked, without a seq ----
		p.do("a message the model fails on", chromedp.SendKeys(chromedp.CSS("#composer"), "break please"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the error entry in the chat", `[...document.querySelectorAll("#log .msg.error")].some(m => !m.dataset.seq && m.querySelector(".seq").textContent.startsWith("no seq"))`)

		// ---- a restart in the middle of a reply: no gap, no duplicate ----
		p.do("asking for a long reply", chromedp.SendKeys(chromedp.CSS("#composer"), "a long story please"), chromedp.KeyEvent(kb.Enter))
		p.waitJS("the long reply streaming", `(document.querySelector("#live .body") || {}).textContent?.length > 40`)
		e.restart()
		p.waitJS("the long reply after the restart", `[...document.querySelectorAll("#log .msg.assistant[data-seq] .body")].some(b => b.textContent.includes("`+longEnding+`"))`)
		p.shot("05-after-restart")
		shown := eval[[]float64](p, `[...document.querySelectorAll("#log .msg[data-seq]")].filter(m => m.dataset.seq).map(m => Number(m.dataset.seq))`)
		var all struct {
			Entries []struct {
				Seq *float64 `json:"seq"`
			} `json:"entries"`
		}
		e.operator("GET", "/api/conversations/"+convID+"/entries?errors=0", nil, &all)
		var logged []float64
		for _, en := range all.Entries {
			logged = append(logged, *en.Seq)
		}
		if !slices.Equal(shown, logged) {
			t.Errorf("the page shows seqs %v; the log holds %v (a gap or a duplicate)", shown, logged)
		}
		if n := eval[float64](p, `[...document.querySelectorAll("#log .msg.assistant .body")].filter(b => b.textContent.includes("`+longEnding+`")).length`); n != 1 {
			t.Errorf("the long reply is shown %v times; want once", n)
		}

		// ---- deep links, back and forward ----
		p.do("opening the log by its link", chromedp.Click(chromedp.CSS(`a[href="/?view=log&c=`+convID+`"]`)))
		p.do("the log view", chromedp.WaitVisible(chromedp.CSS("#seq-slider")))
		// Back and forward stay in the page (same-document history entries).
		eval[bool](p, `(history.back(), true)`)
		p.waitJS("the chat again after Back", fmt.Sprintf(`!new URLSearchParams(location.search).get("view") && new URLSearchParams(location.search).get("c") === %q && document.getElementById("composer")`, convID))
		eval[bool](p, `(history.forward(), true)`)
		p.waitJS("the log again after Forward", `new URLSearchParams(location.search).get("view") === "log" && document.getElementById("seq-slider")`)
		p.do("a deep link", chromedp.Navigate(e.base+"/?view=log&c="+convID), chromedp.WaitVisible(chromedp.CSS("#seq-slider")))

		// Error entries are listed and marked; the toggle hides them.
		p.waitJS("the error entry in the log", `document.querySelectorAll("#entries .msg.error").length === 1 && document.getElementById("entry-count").textContent.includes("1 error entries")`)
		p.do("hiding error entries", chromedp.Click(chromedp.CSS("#show-errors")))
		p.waitJS("the log without error entries", `document.querySelectorAll("#entries .msg.error").length === 0 && document.querySelectorAll("#entries .msg").length > 2`)

		// ---- the slider: the conversation as of seq 2 ----
		p.do("moving the slider to 2", chromedp.SetValue(chromedp.CSS("#seq-slider"), "2"))
		eval[bool](p, `document.getElementById("seq-slider").dispatchEvent(new Event("input")) || true`)
		p.waitJS("two entries as of seq 2", `document.getElementById("at-label").textContent.startsWith("as of #2") && [...document.querySelectorAll("#entries .msg")].filter(m => m.dataset.seq).length === 2`)
		p.waitJS("the state as of seq 2 (GET ?at=2)", `(document.getElementById("state-at")?.textContent || "").includes("Status at #2") && ["idle", "running", "paused"].includes(document.getElementById("state-status").textContent)`)
		p.shot("06-slider")

		// ---- fork from an earlier message, then navigate the tree ----
		p.do("back to the latest", chromedp.Navigate(e.base+"/?view=log&c="+convID), chromedp.WaitVisible(chromedp.CSS(`#entries .msg.user[data-seq="1"]`)))
		p.do("editing the first message",
			chromedp.Click(chromedp.CSS(`#entries .msg.user[data-seq="1"] button.edit`)),
			chromedp.WaitVisible(chromedp.CSS(".edit-form textarea")),
			chromedp.SetValue(chromedp.CSS(".edit-form textarea"), "hello from a fork"),
			chromedp.Click(chromedp.CSS(".edit-form button[type=submit]")))
		p.waitJS("the fork open in chat", fmt.Sprintf(`(new URLSearchParams(location.search).get("c") || %q) !== %q && document.getElementById("composer")`, convID, convID))
		forkID := eval[string](p, `new URLSearchParams(location.search).get("c")`)
		p.waitJS("the fork's reply", `[...document.querySelectorAll("#log .msg.assistant .body")].some(b => b.textContent.includes("hello from a fork"))`)
		p.do("the fork's log", chromedp.Navigate(e.base+"/?view=log&c="+forkID), chromedp.WaitVisible(chromedp.CSS("#fork-tree")))
		p.waitJS("the tree with the parent and its one child", fmt.Sprintf(`document.querySelector('#fork-tree a[data-conv=%q]') && document.querySelector('#fork-tree a[data-conv=%q]').textContent.includes("1 child") && document.querySelector('#fork-tree a[data-conv=%q]').getAttribute("aria-current") === "true"`, convID, convID, forkID))
		p.shot("07-fork-tree")
		p.do("navigating to the parent in the tree", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#fork-tree a[data-conv=%q]`, convID))))
		p.waitJS("the parent's log", fmt.Sprintf(`new URLSearchParams(location.search).get("c") === %q && document.getElementById("child-count")?.textContent.startsWith("1 direct fork")`, convID))

		// ---- the palette ----
		p.do("opening the palette", chromedp.KeyEvent("k", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.WaitVisible(chromedp.CSS("#palette-input")))
		p.shot("08-palette")
		p.do("closing the palette", chromedp.KeyEvent(kb.Escape))

		// ---- a workspace the person is not in ----
		var ws struct {
			ID string `json:"id"`
		}
		e.operator("POST", "/api/workspaces", map[string]any{"name": "Elsewhere", "owner": "00000000-0000-7000-8000-000000000001"}, &ws)
		var other struct {
			ID string `json:"id"`
		}
		e.operator("POST", "/api/conversations", map[string]any{"workspace": ws.ID}, &other)
		e.operator("POST", "/api/conversations/"+other.ID+"/messages", map[string]any{"text": "a secret of the other team"}, nil)
		p.do("reloading the console", chromedp.Navigate(e.base+"/"), chromedp.WaitVisible(chromedp.CSS("#conv-list a")))
		if n := eval[float64](p, fmt.Sprintf(`document.querySelectorAll('#conv-list a[data-conv=%q]').length`, other.ID)); n != 0 {
			t.Errorf("the other workspace's conversation is listed in the page")
		}
		listed := eval[string](p, `fetch("/api/conversations").then(r => r.text())`)
		if strings.Contains(listed, other.ID) || !strings.Contains(listed, convID) {
			t.Errorf("GET /api/conversations with the session = %s; want the person's conversations and not %s", listed, other.ID)
		}
		for _, path := range []string{"", "/entries", "/forks"} {
			if got := eval[float64](p, `fetch("/api/conversations/`+other.ID+path+`").then(r => r.status)`); got != 404 {
				t.Errorf("GET /api/conversations/{other}%s with the session answered %v; want 404", path, got)
			}
		}
		for _, path := range []string{"/api/schedules", "/api/usage", "/api/audit"} {
			if got := eval[float64](p, `fetch("`+path+`").then(r => r.status)`); got != 403 {
				t.Errorf("GET %s with a person's session answered %v; want 403 (the operator's)", path, got)
			}
		}
		p.do("a deep link to it", chromedp.Navigate(e.base+"/?c="+other.ID))
		p.waitJS("the refusal", `(document.querySelector(".main .notice.error") || {}).textContent === "Not found, or not yours to see."`)
		p.shot("09-no-access")

		// ---- sign out; the link does not work twice ----
		p.do("signing out", chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#signin")))
		p.do("the used link again", chromedp.Navigate(link))
		p.waitJS("the refusal of a used link", `(document.getElementById("signin-message") || {}).textContent?.includes("already used")`)
		p.shot("10-link-used")
		if got := eval[float64](p, `fetch("/api/session").then(r => r.status)`); got != 401 {
			t.Errorf("GET /api/session after signing out and a reused link answered %v; want 401", got)
		}

		// ---- the operator signs in with the token and sees the operations ----
		p.do("signing in with the operator token",
			chromedp.SendKeys(chromedp.CSS(`#signin input[name="token"]`), opToken),
			chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#tabs a[data-view="ops"]`)))
		if listed := eval[string](p, `fetch("/api/conversations").then(r => r.text())`); !strings.Contains(listed, other.ID) || !strings.Contains(listed, convID) {
			t.Errorf("the operator's session lists %s; want every workspace's conversations", listed)
		}
		p.do("the operations view", chromedp.Click(chromedp.CSS(`#tabs a[data-view="ops"]`)))
		p.waitJS("usage charts and the audit log", `document.querySelector("#usage-days svg") && document.querySelectorAll("#usage-agents svg rect[data-series]").length > 0`)
		p.waitJS("the agent's budget, spent today against its limit", `(() => {
			const cells = [...document.querySelectorAll("#budgets tbody tr:first-child td")].map((td) => td.textContent);
			return cells[0] === "agent:switchboard" && cells[1] === "today" && cells[4] === "$50.0000" && cells[2].startsWith("$0.0") && !cells[2].startsWith("$0.0000") && document.querySelector('#budgets button[data-extend="agent:switchboard"]');
		})()`)
		p.waitJS("the bridges panel, none connected", `(document.querySelector("#bridges") || {}).textContent?.includes("No bridge connected")`)
		p.shot("11-operations")

		// ---- the Slack installs: an organisation-wide install whose token renews ----
		exp := time.Now().Add(6 * time.Hour)
		if _, err := e.app.Store.SlackInstallationSave(context.Background(), &store.SlackInstallationSaveParams{
			TeamID: "E0GRID", TeamName: "Grid", EnterpriseID: "E0GRID", EnterpriseName: "Grid", EnterpriseInstall: true, BotUserID: "U0ORG",
			Scope: "chat:write,commands", BotToken: "v1:k:sealed", RefreshToken: "v1:k:sealed-refresh", TokenExpiresAt: &exp, InstalledBy: "U0ADMIN",
		}); err != nil {
			t.Fatal(err)
		}
		p.do("the operations view again", chromedp.Reload())
		p.waitJS("the install in the Slack installs panel", `(() => {
			const cells = [...document.querySelectorAll("#slack-installs tbody tr:first-child td")].map((td) => td.textContent);
			return cells[0] === "Grid (organisation-wide)" && cells[1] === "E0GRID" && cells[2] === "U0ADMIN" && cells[3] === "2" && cells[5] === "ok" && cells[6] === "—";
		})()`)

		// ---- a schedule paused and resumed ----
		e.dm("EvRemind1", alice, aliceDM, "!remind in 2h -- water the plants")
		// The command runs as queued work: wait for its schedule before the
		// page lists them.
		e.waitFor("the reminder stored", func() bool {
			var s struct {
				Schedules []struct{} `json:"schedules"`
			}
			e.operator("GET", "/api/schedules", nil, &s)
			return len(s.Schedules) == 1
		})
		p.do("reloading the operations", chromedp.Navigate(e.base+"/?view=ops"))
		p.waitJS("the reminder among the schedules", `document.querySelector('#schedules button[data-act="pause"]')`)
		p.do("pausing it", chromedp.Click(chromedp.CSS(`#schedules button[data-act="pause"]`)))
		p.waitJS("the reminder paused", `document.querySelector('#schedules [data-state="paused"]') && document.querySelector('#schedules button[data-act="resume"]')`)
		p.do("resuming it", chromedp.Click(chromedp.CSS(`#schedules button[data-act="resume"]`)))
		p.waitJS("the reminder active again", `document.querySelector('#schedules [data-state="active"]')`)

		// ---- the reminder run now: posted once in Slack, then done ----
		reminderPosts := func() int {
			n := 0
			for _, m := range e.slack.Messages("") {
				if strings.Contains(m.Text, "Reminder: water the plants") {
					n++
				}
			}
			return n
		}
		p.do("running the reminder now", chromedp.Click(chromedp.CSS(`#schedules button[data-act="run"]`)))
		e.waitFor("the reminder posted in Slack", func() bool { return reminderPosts() > 0 })
		p.waitJS("the result shown, the reminder done and no Run now left", `[...document.querySelectorAll("#schedules .run-result")].some(t => t.textContent.includes("sent now")) && document.querySelector('#schedules [data-state="done"]') && !document.querySelector('#schedules button[data-act="run"]')`)
		p.shot("11b-reminder-run-now")
		again := eval[map[string]any](p, `(async () => {
			const csrf = (await (await fetch("/api/session")).json()).csrf;
			const id = (await (await fetch("/api/schedules")).json()).schedules[0].id;
			const r = await fetch("/api/schedules/" + id + "/run", {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: "{}"});
			return {status: r.status, ...(await r.json())};
		})()`)
		if again["status"] != 202.0 || again["fired"] != false || !strings.Contains(fmt.Sprint(again["note"]), "already") {
			t.Errorf("run now of a delivered reminder: %v, want 202 with nothing fired and a note saying so", again)
		}
		e.waitFor("the reminder's run recorded", func() bool {
			var s struct {
				Schedules []struct {
					Runs int `json:"runs"`
				} `json:"schedules"`
			}
			e.operator("GET", "/api/schedules", nil, &s)
			return len(s.Schedules) == 1 && s.Schedules[0].Runs == 1
		})
		if n := reminderPosts(); n != 1 {
			t.Errorf("the reminder was posted %d times in Slack; want once", n)
		}

		// ---- approve from the inbox and see the turn go on ----
		var conv struct {
			ID string `json:"id"`
		}
		e.operator("POST", "/api/conversations", map[string]any{}, &conv)
		e.operator("POST", "/api/conversations/"+conv.ID+"/messages", map[string]any{"text": "please remember the colour"}, nil)
		// The inbox shows what waits when it opens: wait for the turn to
		// pause on the confirmation first.
		e.waitStatus(conv.ID, "paused")
		p.do("reloading the inbox", chromedp.Navigate(e.base+"/?view=ops"))
		p.waitJS("the approval in the inbox", `document.querySelector('#approvals button[data-decide="approve"]')`)
		p.shot("12-approvals")
		p.do("approving", chromedp.Click(chromedp.CSS(`#approvals button[data-decide="approve"]`)))
		p.waitJS("the inbox empty", `(document.getElementById("approvals") || {}).textContent?.includes("Nothing waits")`)
		p.do("the conversation", chromedp.Navigate(e.base+"/?c="+conv.ID))
		p.waitJS("the turn gone on after the approval", `[...document.querySelectorAll("#log .msg.assistant .body")].some(b => b.textContent.includes("Remembered, with your leave"))`)

		// The same page in dark mode, for the screenshot.
		p.do("switching to dark mode", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
			})
			return err
		}), chromedp.Navigate(e.base+"/?view=log&c="+forkID), chromedp.WaitVisible(chromedp.CSS("#fork-tree")))
		p.shot("13-dark-log")
	})
}
