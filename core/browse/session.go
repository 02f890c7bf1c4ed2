package browse

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/core/tool"
)

// Action kinds.
const (
	ActionClick      = "click"
	ActionType       = "type"
	ActionRead       = "read"
	ActionScreenshot = "screenshot"
	ActionWait       = "wait"
	ActionBack       = "back"
)

// ActionKinds are the kinds an action takes, in the order the model is
// told them.
var ActionKinds = []string{ActionClick, ActionType, ActionRead, ActionScreenshot, ActionWait, ActionBack}

// In is browse's input.
type In struct {
	URL     string   `json:"url" jsonschema:"the http or https address to open first"`
	Actions []Action `json:"actions,omitempty" jsonschema:"what to do on the page, in order; none: open the page and read it"`
}

// Action is one step on the page.
type Action struct {
	Kind     string `json:"kind" jsonschema:"click (an element), type (text into an element), read (an element's text, or the page's without a selector), screenshot (the page, or an element), wait (until an element is visible, or the page has loaded) or back (the previous page)"`
	Selector string `json:"selector,omitempty" jsonschema:"a CSS selector of the element; required for click and type"`
	Text     string `json:"text,omitempty" jsonschema:"the text to type, for type"`
}

// Out is what a call did and where it ended.
type Out struct {
	// URL is the address of the page the call ended on.
	URL string `json:"url"`
	// Title and Text are that page's, the text capped at MaxTextBytes.
	// They are left out when the page was refused, not reached or past
	// the page budget.
	Title         string `json:"title,omitempty"`
	Text          string `json:"text,omitempty"`
	TextTruncated bool   `json:"text_truncated,omitempty"`
	// Pages is how many pages the call opened.
	Pages int `json:"pages"`
	// Actions are the results of the actions that ran, in order.
	Actions []ActionResult `json:"actions,omitempty"`
	// Stopped says why the call ended before its last action, if it did.
	Stopped string `json:"stopped,omitempty"`
	// NotReached lists the addresses the browser was kept from or could
	// not reach, pages and their parts (images, scripts) alike.
	NotReached []string `json:"not_reached,omitempty"`

	shots []tool.Attachment
}

// Attachments are the call's screenshots, for the platform.
func (o Out) Attachments() []tool.Attachment { return o.shots }

// ActionResult is one action's outcome.
type ActionResult struct {
	Kind     string `json:"kind"`
	Selector string `json:"selector,omitempty"`
	OK       bool   `json:"ok"`
	// Text is what a read action read.
	Text      string `json:"text,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Screenshot names the image a screenshot action posted.
	Screenshot string `json:"screenshot,omitempty"`
	// URL is the page's address after the action, when it changed.
	URL   string `json:"url,omitempty"`
	Error string `json:"error,omitempty"`
}

// checkInput refuses what no browser needs starting for.
func (b *Browser) checkInput(in In) (*url.URL, error) {
	u, err := webURL(in.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	if len(in.Actions) > b.o.MaxActions {
		return nil, fmt.Errorf("actions: %d given, at most %d (browser.max_actions)", len(in.Actions), b.o.MaxActions)
	}
	for i, a := range in.Actions {
		switch a.Kind {
		case ActionClick, ActionType:
			if strings.TrimSpace(a.Selector) == "" {
				return nil, fmt.Errorf("actions[%d]: %s needs a selector", i, a.Kind)
			}
		case ActionRead, ActionScreenshot, ActionWait, ActionBack:
		default:
			return nil, fmt.Errorf("actions[%d].kind %q must be one of %s", i, a.Kind, strings.Join(ActionKinds, ", "))
		}
	}
	return u, nil
}

// webURL parses an address the browser may open: http or https, with a
// host.
func webURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%q is not an address: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q: only http and https addresses are opened, not %q", raw, u.Scheme+":")
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", raw)
	}
	return u, nil
}

// addrOf is the host:port a browser's request for u goes to.
func addrOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" || u.Scheme == "wss" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// Browse runs one call: it starts a browser behind the proxy, opens
// in.URL, runs the actions and reads the page it ends on.
func (b *Browser) Browse(ctx context.Context, in In) (Out, error) {
	start, err := b.checkInput(in)
	if err != nil {
		return Out{}, err
	}
	// The budget covers the wait for a free browser too: the call answers
	// within it.
	ctx, cancel := context.WithTimeout(ctx, b.o.Timeout)
	defer cancel()
	release, err := b.acquire(ctx)
	if err != nil {
		return Out{}, err
	}
	defer release()
	s, err := b.start(ctx)
	if err != nil {
		return Out{}, err
	}
	defer s.close()

	// The actions get the budget less a reserve for reading the page and
	// closing the browser, so a page that never loads still leaves time
	// to say so. They run in children of the browser's context (chromedp
	// finds the browser there), under the call's deadline.
	end, _ := ctx.Deadline()
	reserve := min(b.o.Timeout/4, 5*time.Second)
	actCtx, cancelAct := context.WithDeadline(s.ctx, end.Add(-reserve))
	defer cancelAct()
	readCtx, cancelRead := context.WithDeadline(s.ctx, end)
	defer cancelRead()

	out := Out{Actions: []ActionResult{}}
	readable := s.run(actCtx, &out, start, in.Actions)

	out.Pages = s.pages()
	for _, r := range s.proxy.refusals() {
		// Chromium's own traffic (updates, sign-in) is refused too, but it
		// is not the page's and says nothing about it.
		if s.asked(r.Addr) && !slices.Contains(out.NotReached, r.String()) {
			out.NotReached = append(out.NotReached, r.String())
		}
	}
	cur := s.current()
	out.URL = cur
	if readable {
		snap, err := s.snapshot(readCtx)
		switch {
		case err == nil:
			out.URL, out.Title, out.Text, out.TextTruncated = cmp.Or(snap.URL, cur), snap.Title, snap.Text, snap.Truncated
		case out.Stopped == "":
			out.Stopped = fmt.Sprintf("reading the page: %v", err)
		}
	}
	return out, nil
}

// session is one call's browser and proxy.
type session struct {
	b      *Browser
	proxy  *proxy
	ctx    context.Context // the browser's: every action runs in a child of it
	cancel func()

	mu        sync.Mutex
	mainFrame cdp.FrameID
	navs      int    // main-frame navigations, about:blank left out
	url       string // the main frame's address (the one it failed to load, for an error page)
	failed    bool   // the main frame shows Chromium's error page
	loader    cdp.LoaderID
	// proxied is the loader whose document the proxy answered itself (a
	// refusal, an unreachable host), so that page is not the site's.
	proxied   cdp.LoaderID
	loading   bool
	changed   chan struct{}   // closed and replaced on every change above
	requested map[string]bool // host:port of every request the page made
}

// start starts the proxy and the browser behind it.
func (b *Browser) start(ctx context.Context) (*session, error) {
	path, err := FindChromium(b.o.Chromium)
	if err != nil {
		return nil, err
	}
	p, err := startProxy(b.o.Dial, b.o.Logger)
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.ProxyServer(p.url()),
		// Chromium sends loopback addresses around any proxy unless told
		// not to; <-loopback> takes that bypass away, so 127.0.0.1 goes
		// through the proxy and its rules like any other host.
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		// Nothing is resolved or reached outside the proxy: the browser's
		// own name lookups fail (the proxy resolves, through Dial), QUIC
		// and WebRTC, which a proxy does not carry, are off.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		// A page restored from the back-forward cache fires no load and
		// leaves chromedp's view of the document stale; back loads anew.
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,BackForwardCache"),
		// Pop-ups would be pages outside the call's count.
		chromedp.Flag("disable-popup-blocking", false),
		chromedp.Flag("block-new-web-contents", true),
		chromedp.WindowSize(1280, 800),
	)
	if runningAsRoot() {
		opts = append(opts, chromedp.NoSandbox)
	}
	// No user-data-dir: chromedp makes a fresh one per browser and removes
	// it when the browser ends.
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	log := b.o.Logger
	bctx, cancelBrowser := chromedp.NewContext(actx,
		chromedp.WithLogf(func(f string, a ...any) { log.DebugContext(ctx, "chromium: "+fmt.Sprintf(f, a...)) }),
		chromedp.WithErrorf(func(f string, a ...any) { log.DebugContext(ctx, "chromium error: "+fmt.Sprintf(f, a...)) }),
	)
	s := &session{b: b, proxy: p, ctx: bctx, changed: make(chan struct{}), requested: map[string]bool{}}
	s.cancel = func() {
		cancelBrowser()
		cancelAlloc()
		p.close()
	}
	// Listen starts the browser, bound to bctx (not to an action's
	// shorter context).
	if err := chromedp.Listen(bctx, s.event); err != nil {
		s.cancel()
		return nil, fmt.Errorf("starting chromium %s: %w", path, err)
	}
	tree, err := chromedp.Call(bctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		s.cancel()
		return nil, fmt.Errorf("starting chromium %s: reading its page: %w", path, err)
	}
	s.mu.Lock()
	s.mainFrame = tree.FrameTree.Frame.ID
	s.mu.Unlock()
	return s, nil
}

func (s *session) close() { s.cancel() }

// event follows the main frame. It runs on the browser's reading
// goroutine, so it only records.
func (s *session) event(ev any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Request != nil {
			if u, err := url.Parse(e.Request.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "ws" || u.Scheme == "wss") {
				s.requested[addrOf(u)] = true
			}
		}
		return
	case *network.EventResponseReceived:
		if e.Type == network.ResourceTypeDocument && e.FrameID == s.mainFrame && e.Response != nil && e.Response.Headers[notReachedHeader] != nil {
			s.proxied = e.LoaderID
		}
		return
	case *page.EventFrameNavigated:
		if e.Frame == nil || e.Frame.ParentID != "" {
			return
		}
		s.mainFrame, s.loader = e.Frame.ID, e.Frame.LoaderID
		s.failed = e.Frame.UnreachableURL != ""
		s.url = cmp.Or(e.Frame.UnreachableURL, e.Frame.URL+e.Frame.URLFragment)
		if s.url != "about:blank" {
			s.navs++
		}
	case *page.EventFrameStartedLoading:
		if e.FrameID != s.mainFrame {
			return
		}
		s.loading = true
	case *page.EventFrameStoppedLoading:
		if e.FrameID != s.mainFrame {
			return
		}
		s.loading = false
	default:
		return
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// asked reports whether the page made a request to addr.
func (s *session) asked(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requested[addr]
}

func (s *session) pages() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.navs
}

func (s *session) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// notSite reports whether the main frame shows a page that is not the
// site's: Chromium's error page, or the proxy's answer.
func (s *session) notSite() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed || (s.proxied != "" && s.proxied == s.loader)
}

// state returns the navigation count, whether the main frame loads, and
// a channel closed at the next change.
func (s *session) state() (navs int, loading bool, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.navs, s.loading, s.changed
}

// settle waits, after an action that may navigate, for a navigation it
// started (within navigationStart) to finish loading.
func (s *session) settle(ctx context.Context, navsBefore int) error {
	return s.settleWithin(ctx, navsBefore, navigationStart)
}

// settleWithin is settle giving the navigation window to start: a click
// on a link to another page waits longer for it than an action that may
// change the page in place, as a busy host starts navigations late.
func (s *session) settleWithin(ctx context.Context, navsBefore int, window time.Duration) error {
	started := time.NewTimer(window)
	defer started.Stop()
	for {
		navs, loading, changed := s.state()
		if !loading && navs != navsBefore {
			return nil
		}
		if !loading {
			select {
			case <-changed:
				continue
			case <-started.C:
				return nil // the action changed the page in place
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// check says why the page the browser is on must not be read: refused or
// not reached by the proxy, or an address other than http and https.
// It is "" for a page that may be read.
func (s *session) check() string {
	cur := s.current()
	if cur == "" || cur == "about:blank" {
		return ""
	}
	u, err := url.Parse(cur)
	if err != nil {
		return fmt.Sprintf("the browser went to %q, which is not an address", cur)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("the page went to a %s: address (%s); only http and https pages are opened", u.Scheme, cur)
	}
	if !s.notSite() {
		return ""
	}
	if r, ok := s.proxy.refusalFor(addrOf(u)); ok {
		return r.String()
	}
	return fmt.Sprintf("%s could not be opened", cur)
}

// run opens start and runs the actions, recording into out, and says
// whether the page the browser ends on may be read.
func (s *session) run(ctx context.Context, out *Out, start *url.URL, actions []Action) (readable bool) {
	timedOut := func(what string) bool {
		out.Stopped = fmt.Sprintf("the time budget of %s (browser.timeout) ran out while %s", s.b.o.Timeout, what)
		return true // what loaded so far is read
	}
	err := chromedp.Do(ctx, chromedp.Navigate(start.String()))
	if r, ok := s.proxy.refusalFor(addrOf(start)); ok && err != nil {
		// A failed tunnel (https) fails the navigation before any page
		// commits.
		out.Stopped = r.String()
		return false
	}
	if why := s.check(); why != "" {
		out.Stopped = why
		return false
	}
	if err != nil {
		if ctx.Err() != nil {
			return timedOut("opening " + start.String())
		}
		out.Stopped = fmt.Sprintf("opening %s: %v", start, err)
		return false
	}
	for i, a := range actions {
		if ctx.Err() != nil {
			return timedOut(fmt.Sprintf("before action %d (%s)", i+1, a.Kind))
		}
		before := s.current()
		res, shot, err := s.act(ctx, i, a)
		if after := s.current(); after != before {
			res.URL = after
		}
		if shot != nil {
			out.shots = append(out.shots, *shot)
		}
		if why := s.check(); why != "" {
			res.OK, res.Error = false, why
			out.Actions = append(out.Actions, res)
			out.Stopped = fmt.Sprintf("action %d (%s): %s", i+1, a.Kind, why)
			return false
		}
		if n := s.pages(); n > s.b.o.MaxPages {
			res.OK, res.Error = false, "page budget used up"
			out.Actions = append(out.Actions, res)
			out.Stopped = fmt.Sprintf("action %d (%s) opened page %d; the call may open %d (browser.max_pages), so it stopped there without reading it", i+1, a.Kind, n, s.b.o.MaxPages)
			return false
		}
		if err != nil {
			res.OK, res.Error = false, err.Error()
			out.Actions = append(out.Actions, res)
			if ctx.Err() != nil {
				return timedOut(fmt.Sprintf("in action %d (%s)", i+1, a.Kind))
			}
			out.Stopped = fmt.Sprintf("action %d (%s) failed: %v", i+1, a.Kind, err)
			return true
		}
		res.OK = true
		out.Actions = append(out.Actions, res)
	}
	return true
}

// act runs one action; a screenshot comes back as an attachment.
func (s *session) act(ctx context.Context, i int, a Action) (ActionResult, *tool.Attachment, error) {
	res := ActionResult{Kind: a.Kind, Selector: a.Selector}
	navsBefore := s.pages()
	wait, cancel := context.WithTimeout(ctx, s.b.o.ElementWait)
	defer cancel()
	sel := chromedp.CSS(a.Selector)
	missing := func(err error) error {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return fmt.Errorf("no visible element matches %q after %s", a.Selector, s.b.o.ElementWait)
		}
		return err
	}
	switch a.Kind {
	case ActionClick:
		if err := chromedp.Do(wait, chromedp.WaitVisible(sel)); err != nil {
			return res, nil, missing(err)
		}
		target, err := chromedp.Run(wait, chromedp.Evaluate[string](linkTargetJS(a.Selector)))
		if err != nil {
			return res, nil, fmt.Errorf("reading the link of %q: %w", a.Selector, err)
		}
		if target != "" {
			if _, err := webURL(target); err != nil {
				return res, nil, fmt.Errorf("the element links to %s; only http and https pages are opened", target)
			}
		}
		if err := chromedp.Do(wait, chromedp.Click(sel)); err != nil {
			return res, nil, missing(err)
		}
		if target != "" && !sameDocument(target, s.current()) {
			// A link or a form to another page: its navigation is coming.
			return res, nil, s.settleWithin(ctx, navsBefore, s.b.o.ElementWait)
		}
		return res, nil, s.settle(ctx, navsBefore)
	case ActionType:
		if err := chromedp.Do(wait, chromedp.WaitVisible(sel), chromedp.SendKeys(sel, a.Text)); err != nil {
			return res, nil, missing(err)
		}
		return res, nil, s.settle(ctx, navsBefore) // typing Enter may submit a form
	case ActionRead:
		var text string
		var err error
		if a.Selector == "" {
			text, err = chromedp.Run(wait, chromedp.Evaluate[string](pageTextJS))
		} else if err = chromedp.Do(wait, chromedp.WaitReady(sel)); err == nil {
			text, err = chromedp.Run(wait, chromedp.Text(sel))
		}
		if err != nil {
			return res, nil, missing(err)
		}
		res.Text, res.Truncated = capText(text, MaxReadBytes)
		return res, nil, nil
	case ActionScreenshot:
		var png []byte
		var err error
		if a.Selector == "" {
			png, err = chromedp.Run(wait, chromedp.CaptureScreenshot())
		} else {
			png, err = chromedp.Run(wait, chromedp.Screenshot(sel, chromedp.NodeVisible))
		}
		if err != nil {
			return res, nil, missing(err)
		}
		res.Screenshot = "screenshot-" + strconv.Itoa(i+1) + ".png"
		return res, &tool.Attachment{Name: res.Screenshot, MimeType: "image/png", Data: png, Title: s.current()}, nil
	case ActionWait:
		if a.Selector == "" {
			return res, nil, s.settle(wait, navsBefore)
		}
		return res, nil, missing(chromedp.Do(wait, chromedp.WaitVisible(sel)))
	case ActionBack:
		// Not chromedp.NavigateBack: it waits for a load event, which a
		// page restored from the back-forward cache never fires.
		h, err := chromedp.Call(wait, page.GetNavigationHistory, cdp.Empty{})
		if err != nil {
			return res, nil, fmt.Errorf("reading the history: %w", err)
		}
		if h.CurrentIndex < 1 || int(h.CurrentIndex) > len(h.Entries)-1 || h.Entries[h.CurrentIndex-1].URL == "about:blank" {
			return res, nil, errors.New("there is no previous page")
		}
		if _, err := chromedp.Call(wait, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[h.CurrentIndex-1].ID}); err != nil {
			return res, nil, fmt.Errorf("going back: %w", err)
		}
		return res, nil, s.settle(ctx, navsBefore)
	}
	return res, nil, fmt.Errorf("unknown action %q", a.Kind)
}

// linkTargetJS returns the address the element at selector leads to (its
// link's, its form's), "" for none. A link meant for another window is
// made to open in this one, where the call follows it.
// sameDocument reports whether addresses a and b name one document (they
// differ at most in their fragment).
func sameDocument(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return a == b
	}
	ua.Fragment, ub.Fragment = "", ""
	return ua.String() == ub.String()
}

func linkTargetJS(selector string) string {
	sel, _ := json.Marshal(selector)
	return `(() => {
		const el = document.querySelector(` + string(sel) + `);
		if (!el) return "";
		const a = el.closest("a[href], area[href]");
		if (a) { a.removeAttribute("target"); return a.href; }
		const f = el.form || el.closest("form");
		if (f) { f.removeAttribute("target"); return f.action || ""; }
		return "";
	})()`
}

const pageTextJS = `document.body ? document.body.innerText : ""`

// snapshot is the page the call ended on.
type snapshot struct {
	URL, Title, Text string
	Truncated        bool
}

func (s *session) snapshot(ctx context.Context) (snapshot, error) {
	var snap struct {
		URL   string `json:"url"`
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](`({url: location.href, title: document.title, text: `+pageTextJS+`})`))
	if err != nil {
		return snapshot{}, err
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		return snapshot{}, fmt.Errorf("decoding the page: %w", err)
	}
	text, cut := capText(snap.Text, MaxTextBytes)
	return snapshot{URL: snap.URL, Title: snap.Title, Text: text, Truncated: cut}, nil
}

// capText cuts s to at most n bytes on a rune boundary.
func capText(s string, n int) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
