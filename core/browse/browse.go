// Package browse is the browse tool: an agent opens a page in headless
// Chromium and clicks, types, reads and takes screenshots on it, one
// browser per call.
//
// Every address the browser reaches goes through a filtering proxy on
// loopback whose only way out is the injected DialFunc (the same address
// rules as the web fetch): Chromium is started with that proxy and with
// its implicit loopback bypass removed (--proxy-bypass-list=<-loopback>),
// so not even 127.0.0.1 is reached around it. A page whose address the
// rules refuse is reported as refused, never returned as content. A call
// is bounded in time (Options.Timeout), in pages (Options.MaxPages, main
// frame navigations) and in actions (Options.MaxActions).
//
// What happens on failure: a refused or unreachable page, a scheme other
// than http or https, a used-up page budget or an action that fails stops
// the call's actions; the output says which and why, with what was done
// until then. When the time budget runs out the call stops too, and it
// still returns what it has within the budget: a part of it is kept back
// for reading the page and closing the browser.
package browse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// Defaults of Options.
const (
	DefaultTimeout       = 60 * time.Second
	DefaultMaxPages      = 5
	DefaultMaxActions    = 20
	DefaultMaxConcurrent = 2
	DefaultElementWait   = 10 * time.Second
)

// Bounds of what a call returns.
const (
	// MaxTextBytes bounds the page text a call returns.
	MaxTextBytes = 16 << 10
	// MaxReadBytes bounds the text one read action returns.
	MaxReadBytes = 8 << 10
	// navigationStart is how long a click is given to start a navigation
	// before it is taken to have changed the page in place.
	navigationStart = 500 * time.Millisecond
)

// Options configure a Browser.
type Options struct {
	// Chromium is the browser's path; empty finds chromium (or
	// chromium-browser, google-chrome) on PATH when a call starts.
	Chromium string
	// Dial reaches every address the browser asks for, applying the
	// address rules; a refusal wraps ErrRefused. Required.
	Dial DialFunc
	// Timeout bounds one call, the browser's start and end included.
	Timeout time.Duration
	// MaxPages bounds the pages (main frame navigations) one call opens.
	MaxPages int
	// MaxActions bounds the actions of one call.
	MaxActions int
	// MaxConcurrent bounds the browsers running at once; a call past it
	// waits its turn (within its context).
	MaxConcurrent int
	// ElementWait bounds how long an action waits for its element to
	// appear before it fails.
	ElementWait time.Duration
	// Logger is where the browser's and the proxy's troubles go (default:
	// discard).
	Logger *slog.Logger
}

func (o *Options) defaults() {
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	o.MaxPages = cmp.Or(o.MaxPages, DefaultMaxPages)
	o.MaxActions = cmp.Or(o.MaxActions, DefaultMaxActions)
	o.MaxConcurrent = cmp.Or(o.MaxConcurrent, DefaultMaxConcurrent)
	o.ElementWait = cmp.Or(o.ElementWait, DefaultElementWait)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o *Options) validate() error {
	switch {
	case o.Dial == nil:
		return errors.New("browse: Options.Dial is required: it applies the address rules to everything the browser reaches")
	case o.Timeout < time.Second:
		return fmt.Errorf("browse: Options.Timeout %s must be at least 1s", o.Timeout)
	case o.MaxPages < 1:
		return fmt.Errorf("browse: Options.MaxPages %d must be at least 1", o.MaxPages)
	case o.MaxActions < 1:
		return fmt.Errorf("browse: Options.MaxActions %d must be at least 1", o.MaxActions)
	case o.MaxConcurrent < 1:
		return fmt.Errorf("browse: Options.MaxConcurrent %d must be at least 1", o.MaxConcurrent)
	case o.ElementWait < 0:
		return fmt.Errorf("browse: Options.ElementWait %s must not be negative", o.ElementWait)
	}
	return nil
}

// Browser runs browse calls, each in a Chromium of its own.
type Browser struct {
	o     Options
	slots chan struct{}
}

// New makes a Browser. It starts nothing: each call starts its browser.
func New(o Options) (*Browser, error) {
	o.defaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Browser{o: o, slots: make(chan struct{}, o.MaxConcurrent)}, nil
}

// Options are the Browser's settings, defaults filled in.
func (b *Browser) Options() Options { return b.o }

// FindChromium returns path when it is set, else the first Chromium or
// Chrome on PATH.
func FindChromium(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("browser.chromium %s: %w", path, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH: install it (apt-get install chromium) or set browser.chromium")
}

// acquire waits for a free browser slot.
func (b *Browser) acquire(ctx context.Context) (release func(), err error) {
	select {
	case b.slots <- struct{}{}:
		return func() { <-b.slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free browser (browser.max_concurrent is %d): %w", b.o.MaxConcurrent, context.Cause(ctx))
	}
}

// runningAsRoot reports whether Chromium's sandbox cannot be used: it
// refuses to start as root with it.
func runningAsRoot() bool { return os.Geteuid() == 0 }

// Check starts a browser as a call does (behind the proxy, with the same
// flags) and asks its version: what `switchboard doctor` runs to see that
// browse can work here. It opens no page.
func (b *Browser) Check(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, b.o.Timeout)
	defer cancel()
	s, err := b.start(ctx)
	if err != nil {
		return "", err
	}
	defer s.close()
	v, err := chromedp.CallBrowser(s.ctx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return "", fmt.Errorf("asking chromium its version: %w", err)
	}
	return v.Product, nil
}
