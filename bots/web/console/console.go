// Package console is the web console: one page, embedded in the binary and
// served at /, that signs a person in, lists the conversations they may
// see, chats with agents (running frontend tools such as ask_user and
// render_chart in the browser), and shows a conversation's log, its forks
// and the log as of any seq.
//
// The page is plain modern JavaScript (ES modules) with no build step, so
// no Node toolchain is needed to build or run it. Everything it knows it
// reads from the same /api the other clients use, signed in with the
// session cookie of bots/web (SignIn).
//
// # Contract for views
//
// The files live in static/ and are served under /console/:
//
//	index.html         the shell: header, sidebar, the view's element
//	app.js             router, api client, session, CSRF header, palette
//	app.css            the styles (light and dark from prefers-color-scheme)
//	views/chat.js      chat with an agent (this package)
//	views/voice.js     live voice in the chat: microphone, transcripts, spoken replies, barge-in (GET /api/conversations/{id}/voice)
//	views/voice-worklet.js the microphone's AudioWorklet: 16 kHz PCM16 frames
//	views/log.js       the log, forks and the seq slider (this package)
//	views/ops.js       operator views (approvals, schedules with run now, budgets, Slack installs, usage, audit)
//	views/runs.js      runs with their steps, events, cancel and retry
//	views/graph.js     the work graph around a conversation (SVG), GET /api/graph
//	views/work.css     the styles of runs.js and graph.js
//	views/history.js   history (search, folders, export): package owner "history"
//	views/artifacts.js artifacts: package owner "history"
//	views/sessions.js  console sessions and personal tokens, with their last use; end any
//
// A view is an ES module under views/ that app.js imports by name (the
// list VIEWS in app.js) and that registers itself when imported:
//
//	import { registerView, api } from "../app.js";
//	registerView("name", {
//	  title: "Shown in the header and the palette",
//	  render(el, params) { ... },  // el: an empty element to fill; params: URLSearchParams of the location
//	  keys: { "e": fn },           // optional single-key shortcuts while the view is shown
//	  commands: [{ title, run }],  // optional ⌘K palette entries
//	});
//
// The route is ?view=name&...; ?c=<conversation id> alone opens the chat
// view. app.js exports api.get/post/put/del (JSON, CSRF header added,
// errors thrown as Error with .status), session() (the GET /api/session
// answer), navigate(params) (pushes history), and toast(text).
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Files is the page's files, rooted at static/.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	return sub
}

// Routes serves the page at / and /login (the target of a sign-in link)
// and its files under /console/.
func Routes(mux *http.ServeMux) {
	files := Files()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic(err)
	}
	page := func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		secure(h)
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		_, _ = w.Write(index)
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /login", page)
	fsrv := http.StripPrefix("/console/", http.FileServerFS(files))
	mux.Handle("GET /console/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w.Header())
		// The files change only with the binary; a reload revalidates.
		w.Header().Set("Cache-Control", "no-cache")
		fsrv.ServeHTTP(w, r)
	}))
}

// secure sets the headers every answer of the page carries. The sign-in
// link's secret is in the URL of /login: no referrer leaves the page, and
// the page runs only its own scripts.
func secure(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}
