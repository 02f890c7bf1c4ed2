package browse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/browse"
	"github.com/switchboardhq/switchboard/core/tool"
)

// chromium finds the browser. Without one the test skips, except in CI
// (CI=true), where a missing browser is a failure: .ci/run installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: the browser tests need it in CI (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH: install it (apt-get install -y chromium) to run the browse tests")
	return ""
}

// dialer stands in for the address rules: it reaches the host:ports it
// allows (the test's own servers) and refuses everything else, recording
// the refusal and never dialing it.
type dialer struct {
	mu      sync.Mutex
	allowed []string
	dialed  []string
	refused []string
}

func allow(addrs ...string) *dialer { return &dialer{allowed: addrs} }

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	ok := slices.Contains(d.allowed, addr)
	if ok {
		d.dialed = append(d.dialed, addr)
	} else {
		d.refused = append(d.refused, addr)
	}
	d.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s is not in the test's allow list", browse.ErrRefused, addr)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

func (d *dialer) seen() (dialed, refused []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.dialed), slices.Clone(d.refused)
}

// site serves pages by path on 127.0.0.1 and counts the requests.
type site struct {
	*httptest.Server
	hits atomic.Int64
}

func newSite(t *testing.T, pages map[string]string) *site {
	t.Helper()
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

// addr is the site's host:port, as the browser asks the proxy for it.
func (s *site) addr() string { return strings.TrimPrefix(s.URL, "http://") }

func newBrowser(t *testing.T, d *dialer, o browse.Options) *browse.Browser {
	t.Helper()
	o.Chromium = chromium(t)
	o.Dial = d.dial
	o.Logger = slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := browse.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

const pageTwo = `<!doctype html><title>Two</title><h1>Page two</h1><p id="answer">The answer is 42.</p>`

// browse clicks through a two-page local site, through the registered
// tool as the engine calls it: it ends on page two with its text, the
// read action has the paragraph, and the screenshot comes back as a PNG
// attachment that the model's JSON does not carry. The site was reached
// through the dialer (the proxy), not around it.
func TestBrowseClicksThroughTwoPages(t *testing.T) {
	t.Parallel()
	s := newSite(t, map[string]string{
		"/":    `<!doctype html><title>One</title><h1>Page one</h1><a id="next" href="/two">Next page</a>`,
		"/two": pageTwo,
	})
	d := allow(s.addr())
	reg := tool.NewRegistry()
	if err := browse.RegisterTools(reg, newBrowser(t, d, browse.Options{Timeout: 60 * time.Second})); err != nil {
		t.Fatal(err)
	}
	tl, ok := reg.Get(browse.ToolName)
	if !ok || !tl.OptIn() || tl.Risk() != tool.RiskMedium {
		t.Fatalf("browse registered as %+v (found %v); want an opt-in tool of medium risk", tl, ok)
	}
	args, _ := json.Marshal(map[string]any{"url": s.URL + "/", "actions": []map[string]string{
		{"kind": "click", "selector": "#next"},
		{"kind": "read", "selector": "#answer"},
		{"kind": "screenshot"},
	}})
	res := tl.Call(t.Context(), nil, args)
	if res.IsError {
		t.Fatalf("browse failed: %s (%v)", res.Output, res.Err)
	}
	var out browse.Out
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if out.URL != s.URL+"/two" || out.Title != "Two" || !strings.Contains(out.Text, "The answer is 42.") || out.Stopped != "" || out.Pages != 2 {
		t.Errorf("ended on %q %q (pages %d, stopped %q) with text %q; want page two, read, after 2 pages", out.URL, out.Title, out.Pages, out.Stopped, out.Text)
	}
	if len(out.Actions) != 3 || !out.Actions[0].OK || out.Actions[0].URL != s.URL+"/two" || out.Actions[1].Text != "The answer is 42." || out.Actions[2].Screenshot == "" {
		t.Errorf("actions %+v; want the click to reach /two, the read to return the answer and a screenshot", out.Actions)
	}
	if len(res.Attachments) != 1 {
		t.Fatalf("%d attachments, want the screenshot", len(res.Attachments))
	}
	a := res.Attachments[0]
	if a.MimeType != "image/png" || a.Name != out.Actions[2].Screenshot || len(a.Data) < 1000 || !bytes.HasPrefix(a.Data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("attachment %s (%s, %d bytes, starts %q); want a PNG screenshot", a.Name, a.MimeType, len(a.Data), a.Data[:min(8, len(a.Data))])
	}
	if len(res.Output) > 8<<10 {
		t.Errorf("the model's output is %d bytes: the screenshot's bytes must stay out of it", len(res.Output))
	}
	if dialed, refused := d.seen(); !slices.Contains(dialed, s.addr()) || slices.Contains(refused, s.addr()) {
		t.Errorf("dialed %v, refused %v; want the site reached through the proxy's dialer", dialed, refused)
	}
	if len(out.NotReached) != 0 {
		t.Errorf("not reached %q; want nothing of the page's missed (Chromium's own traffic is not the page's)", out.NotReached)
	}
}

// A link to a local server the rules do not allow (loopback on another
// port) is refused: the click's page is not read, the output says
// refused with the address, and that server receives no request. Opening
// it directly, over http or https (a CONNECT), is refused the same way;
// a link to a file: address is not followed, and a file: address is not
// opened at all.
func TestBrowseRefusesAnAddressTheRulesRefuse(t *testing.T) {
	t.Parallel()
	other := newSite(t, map[string]string{"/": `<!doctype html><title>Secret</title><p>internal secret</p>`})
	s := newSite(t, map[string]string{
		"/": `<!doctype html><title>One</title>
<a id="inside" href="` + other.URL + `/">An internal page</a>
<a id="file" href="file:///etc/hostname">A file</a>`,
		"/img": `<!doctype html><title>Image</title><p>A page with an internal image</p><img src="` + other.URL + `/x.png">`,
	})
	d := allow(s.addr())
	b := newBrowser(t, d, browse.Options{Timeout: 60 * time.Second})

	refused := "refused: " + other.addr()
	refusal := refused + " (" + browse.ErrRefused.Error() + ": " + other.addr() + " is not in the test's allow list)"
	for _, tc := range []struct {
		name    string
		in      browse.In
		stopped string
	}{
		{"link", browse.In{URL: s.URL + "/", Actions: []browse.Action{{Kind: "click", Selector: "#inside"}, {Kind: "read"}}}, refused},
		{"http", browse.In{URL: other.URL + "/"}, refused},
		{"https", browse.In{URL: "https://" + other.addr() + "/"}, refused},
		{"localhost", browse.In{URL: "http://localhost:" + other.URL[strings.LastIndex(other.URL, ":")+1:] + "/"}, "refused: localhost:"},
		{"file link", browse.In{URL: s.URL + "/", Actions: []browse.Action{{Kind: "click", Selector: "#file"}, {Kind: "read"}}}, "only http and https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := b.Browse(t.Context(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.Stopped, tc.stopped) {
				t.Errorf("stopped %q; want it to say %q", out.Stopped, tc.stopped)
			}
			if strings.Contains(out.Text, "secret") || strings.Contains(out.Text, "refused") || out.Title == "Secret" {
				t.Errorf("the output has the page's text %q (title %q); a refused page is not content", out.Text, out.Title)
			}
			if n := len(out.Actions); n > 1 || (n == 1 && (out.Actions[0].OK || out.Actions[0].Error == "")) {
				t.Errorf("actions %+v; want the click failed with why and nothing after it", out.Actions)
			}
			if tc.stopped == refused && !slices.Contains(out.NotReached, refusal) {
				t.Errorf("not reached %q; want the refusal with its reason", out.NotReached)
			}
		})
	}
	// A refused part of a page is listed; the page itself is read.
	out, err := b.Browse(t.Context(), browse.In{URL: s.URL + "/img"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stopped != "" || out.Text != "A page with an internal image" || !slices.Equal(out.NotReached, []string{refusal}) {
		t.Errorf("stopped %q, text %q, not reached %q; want the page read and its refused image listed", out.Stopped, out.Text, out.NotReached)
	}
	if n := other.hits.Load(); n != 0 {
		t.Errorf("the refused server got %d requests, want none", n)
	}
	if _, got := d.seen(); !slices.Contains(got, other.addr()) {
		t.Errorf("the dialer refused %v; want %s among them", got, other.addr())
	}
	if _, err := b.Browse(t.Context(), browse.In{URL: "file:///etc/hostname"}); err == nil || !strings.Contains(err.Error(), "only http and https") {
		t.Errorf("opening a file: address: %v; want it refused before any browser starts", err)
	}
}

// Typing into a form and clicking its button submits it; back returns to
// the form. An element that never appears fails its action, and the call
// stops there, naming it.
func TestBrowseTypesSubmitsAndGoesBack(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>Search</title><form action="/search"><input id="q" name="q"><button id="go">Search</button></form>`)
		case "/search":
			fmt.Fprintf(w, `<!doctype html><title>Results</title><p id="result">You searched for %s.</p>`, html.EscapeString(r.URL.Query().Get("q")))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	b := newBrowser(t, allow(strings.TrimPrefix(srv.URL, "http://")), browse.Options{Timeout: 90 * time.Second, ElementWait: 10 * time.Second})
	out, err := b.Browse(t.Context(), browse.In{URL: srv.URL + "/", Actions: []browse.Action{
		{Kind: "type", Selector: "#q", Text: "gophers"},
		{Kind: "click", Selector: "#go"},
		{Kind: "read", Selector: "#result"},
		{Kind: "back"},
		{Kind: "wait", Selector: "#q"},
		{Kind: "click", Selector: "#missing"},
		{Kind: "read"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Actions) != 6 || out.Actions[2].Text != "You searched for gophers." || out.Actions[1].URL != srv.URL+"/search?q=gophers" || out.Actions[3].URL != srv.URL+"/" {
		t.Fatalf("actions %+v; want the search submitted, read, and back on the form", out.Actions)
	}
	if a := out.Actions[5]; a.OK || !strings.Contains(a.Error, `no visible element matches "#missing" after 10s`) || !strings.Contains(out.Stopped, "action 6 (click) failed") {
		t.Errorf("the missing element's action %+v, stopped %q; want it failed, naming the selector, and the call stopped there", a, out.Stopped)
	}
	if out.URL != srv.URL+"/" || out.Title != "Search" || out.Pages != 3 {
		t.Errorf("ended on %q %q after %d pages; want the form, after 3", out.URL, out.Title, out.Pages)
	}
}

// With a page budget of one, a click that opens a second page stops the
// call there, saying so, without reading that page.
func TestBrowseStopsAtThePageBudget(t *testing.T) {
	t.Parallel()
	s := newSite(t, map[string]string{
		"/":    `<!doctype html><title>One</title><a id="next" href="/two">Next page</a>`,
		"/two": pageTwo,
	})
	b := newBrowser(t, allow(s.addr()), browse.Options{Timeout: 60 * time.Second, MaxPages: 1})
	out, err := b.Browse(t.Context(), browse.In{URL: s.URL + "/", Actions: []browse.Action{{Kind: "click", Selector: "#next"}, {Kind: "read"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Stopped, "browser.max_pages") || !strings.Contains(out.Stopped, "may open 1") {
		t.Errorf("stopped %q; want the page budget named", out.Stopped)
	}
	if strings.Contains(out.Text, "42") || len(out.Actions) != 1 || out.Actions[0].OK {
		t.Errorf("text %q, actions %+v; want page two unread and the read not run", out.Text, out.Actions)
	}
}

// A page that never finishes loading does not hold the call past its
// time budget: it returns within it, saying the budget ran out.
func TestBrowseReturnsWithinItsTimeBudget(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>Slow</title><p>start`))
		w.(http.Flusher).Flush()
		select { // never finishes the page
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	// The budget counts Chromium's start, which a loaded CI machine has
	// taken over 15 s to finish.
	const budget = 45 * time.Second
	b := newBrowser(t, allow(strings.TrimPrefix(hang.URL, "http://")), browse.Options{Timeout: budget})
	began := time.Now()
	out, err := b.Browse(t.Context(), browse.In{URL: hang.URL + "/", Actions: []browse.Action{{Kind: "read"}}})
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	// Generous past the budget: a loaded CI machine starts Chromium slowly,
	// and what is checked is that the hanging page does not hold the call.
	if took > budget+10*time.Second {
		t.Errorf("the call took %s; want it back within its budget of %s", took, budget)
	}
	if !strings.Contains(out.Stopped, "time budget of 45s (browser.timeout) ran out") {
		t.Errorf("stopped %q; want the time budget named", out.Stopped)
	}
}

// With max_concurrent 1, a call made while another holds the browser
// waits for it, no longer than its deadline, and says what it waited for
// when the deadline comes first.
func TestBrowseWaitsForAFreeBrowserWithinItsBudget(t *testing.T) {
	t.Parallel()
	requested := make(chan struct{}, 1)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case requested <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	var once sync.Once
	finish := func() { once.Do(func() { close(release) }) }
	t.Cleanup(finish)
	b := newBrowser(t, allow(strings.TrimPrefix(hang.URL, "http://")), browse.Options{Timeout: 60 * time.Second, MaxConcurrent: 1})
	first := make(chan error, 1)
	go func() {
		_, err := b.Browse(t.Context(), browse.In{URL: hang.URL + "/"})
		first <- err
	}()
	select {
	case <-requested: // the first call has the browser
	case err := <-first:
		t.Fatalf("the first call ended before reaching the page: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	_, err := b.Browse(ctx, browse.In{URL: hang.URL + "/"})
	if err == nil || !strings.Contains(err.Error(), "waiting for a free browser (browser.max_concurrent is 1)") {
		t.Errorf("the second call: %v; want it to say it waited for a free browser", err)
	}
	finish() // the first call's page loads, and it ends
	if err := <-first; err != nil {
		t.Errorf("the first call: %v", err)
	}
}

// More actions than max_actions, or an action without what it needs, are
// refused before a browser starts.
func TestBrowseRefusesBadInput(t *testing.T) {
	t.Parallel()
	b, err := browse.New(browse.Options{Dial: allow().dial, MaxActions: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   browse.In
		want string
	}{
		{browse.In{URL: "http://example.test/", Actions: make([]browse.Action, 3)}, "at most 2 (browser.max_actions)"},
		{browse.In{URL: "http://example.test/", Actions: []browse.Action{{Kind: "click"}}}, "actions[0]: click needs a selector"},
		{browse.In{URL: "http://example.test/", Actions: []browse.Action{{Kind: "hover", Selector: "a"}}}, `actions[0].kind "hover"`},
		{browse.In{URL: "data:text/html,hi"}, "only http and https"},
		{browse.In{URL: "http:///nohost"}, "has no host"},
	} {
		if _, err := b.Browse(t.Context(), tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Browse(%+v) = %v; want an error saying %q", tc.in, err, tc.want)
		}
	}
	if _, err := browse.New(browse.Options{}); err == nil || !strings.Contains(err.Error(), "Options.Dial") {
		t.Errorf("New without Dial: %v; want the field named", err)
	}
}
