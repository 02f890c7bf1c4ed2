// Package bridge is the `switchboard bridge` process: it runs the model
// calls of runs_on: bridge agents on the machine it runs on (its PATH, its
// CLI logins, its keys, its working folder), for a service it reaches
// over the API.
//
// For each agent it serves, the bridge exchanges its token (a host token
// or an agent key) for the agent's session, holds one announcement stream
// (GET /api/bridge/announce, Server-Sent Events) and claims the agent's
// calls (POST /api/bridge/claim) when one is announced, when it
// (re)connects and every Poll: an announcement and a poll run the same
// claim. A claimed call runs with the backend of this machine; its events
// go back as they come (batched every few tens of milliseconds), its
// lease is heartbeated at a third of its length, and its response or
// failure ends it. A revoked token ends the bridge: the stream closes and
// the exchange is refused.
//
// What happens on failure: a bridge killed mid-call stops heartbeating and
// the service hands the call to the next claim once the lease expires (the
// turn discards what was streamed); a bridge that loses its claim (409)
// or whose turn ended (410) cancels the call.
package bridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/model"
)

// BackendFunc builds the backend of this machine for an agent's model
// ("provider:model").
type BackendFunc func(agent, model string) (model.Backend, error)

// Options configures a bridge.
type Options struct {
	// URL is the service's base URL (http://127.0.0.1:8080).
	URL string
	// Token is a host token or an agent key.
	Token string
	// TokenFile, when set, holds the token instead, read again at each
	// exchange: a rotated token is picked up without a restart.
	TokenFile string
	// Agents are the agents served; empty: the one agent the token names.
	Agents []string
	// ID names the bridge in leases and in the service's list; empty: the
	// host name, the process id and a random suffix.
	ID      string
	Version string
	Backend BackendFunc
	// Poll is how often the bridge claims without an announcement (a
	// call whose previous bridge died is found this way); 0: 2s.
	Poll time.Duration
	// Concurrency bounds the calls of one agent run at once; 0: 2.
	Concurrency int
	Logger      *slog.Logger
	Client      *http.Client
	// Ready, when set, is called once every agent's stream is connected.
	Ready func()
	// Grace is how long a stop (the end of Run's ctx) lets running calls
	// finish before it cuts them off; a call cut off is taken by the next
	// bridge once its lease expires. 0: 30s.
	Grace time.Duration
}

func (o *Options) validate() error {
	switch {
	case o.URL == "":
		return errors.New("bridge: -url (the service's address) is required")
	case o.Token == "" && o.TokenFile == "":
		return errors.New("bridge: a token is required: -token, -token-file or SWITCHBOARD_BRIDGE_TOKEN (a host token from `switchboard keys create --host`, or an agent key)")
	case o.Backend == nil:
		return errors.New("bridge: Options.Backend is required")
	}
	if _, err := url.Parse(o.URL); err != nil {
		return fmt.Errorf("bridge: -url %q: %w", o.URL, err)
	}
	return nil
}

// ErrRevoked is returned when the service refuses the bridge's token.
var ErrRevoked = errors.New("the service refused the bridge's token")

// Bridge is one bridge process's connection to a service.
type Bridge struct {
	opts Options
	log  *slog.Logger

	// work is the context calls run under: it outlives Run's ctx by up
	// to Grace, so that a stop lets them finish.
	work     context.Context
	running  sync.WaitGroup
	stopWork context.CancelCauseFunc
}

// New returns a bridge.
func New(opts Options) (*Bridge, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.URL = strings.TrimRight(opts.URL, "/")
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Poll == 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = 2
	}
	if opts.Grace == 0 {
		opts.Grace = 30 * time.Second
	}
	if opts.ID == "" {
		host, _ := os.Hostname()
		var b [3]byte
		_, _ = rand.Read(b[:])
		opts.ID = fmt.Sprintf("%s-%d-%s", strings.ReplaceAll(host, " ", "-"), os.Getpid(), hex.EncodeToString(b[:]))
	}
	return &Bridge{opts: opts, log: opts.Logger}, nil
}

// ID is the bridge's id.
func (b *Bridge) ID() string { return b.opts.ID }

// Run serves the agents until ctx ends (nil) or the token is refused
// (ErrRevoked).
func (b *Bridge) Run(ctx context.Context) error {
	agents := b.opts.Agents
	if len(agents) == 0 {
		agents = []string{""} // the token's one agent
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	b.work, b.stopWork = context.WithCancelCause(context.WithoutCancel(ctx))
	defer b.stopWork(nil)
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	ready.Add(len(agents))
	for _, name := range agents {
		wg.Add(1)
		a := &agentLoop{b: b, name: name}
		var once sync.Once
		a.ready = func() { once.Do(ready.Done) }
		go func() {
			defer wg.Done()
			if err := a.run(ctx); err != nil {
				cancel(err)
			}
		}()
	}
	go func() {
		ready.Wait()
		if ctx.Err() == nil && b.opts.Ready != nil {
			b.opts.Ready()
		}
	}()
	wg.Wait()
	err := context.Cause(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		b.stopWork(err) // a refused token: nothing more will be accepted
	}
	// A stop lets the calls running finish, for up to Grace.
	finished := make(chan struct{})
	go func() { b.running.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(b.opts.Grace):
		b.log.Warn("stopping: cutting off the calls still running", "grace", b.opts.Grace)
		b.stopWork(errors.New("the bridge stopped"))
		<-finished
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// agentLoop serves one agent: its session, its stream, its calls.
type agentLoop struct {
	b     *Bridge
	name  string // "" until the first exchange names it
	ready func()

	mu      sync.Mutex
	session string
}

// token is the bridge's token: -token, or -token-file's content now.
func (b *Bridge) token() (string, error) {
	if b.opts.TokenFile == "" {
		return b.opts.Token, nil
	}
	raw, err := os.ReadFile(b.opts.TokenFile)
	if err != nil {
		return "", fmt.Errorf("reading -token-file: %w", err)
	}
	return strings.TrimSpace(string(raw)), nil
}

// exchange trades the token for a fresh session of the agent.
func (a *agentLoop) exchange(ctx context.Context) error {
	token, err := a.b.token()
	if err != nil {
		return err
	}
	body, _ := json.Marshal(web.ExchangeRequest{Agent: a.name})
	var out web.SessionTokenJSON
	status, err := a.b.do(ctx, token, "POST", "/api/auth/token", body, &out)
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return fmt.Errorf("%w: %w", ErrRevoked, err)
	}
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.session, a.name = out.Token, out.Agent
	a.mu.Unlock()
	return nil
}

func (a *agentLoop) token() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.session
}

// call makes an API request with the session, exchanging the token again
// once when the session expired.
func (a *agentLoop) call(ctx context.Context, method, path string, body any, out any) (int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("encoding %s: %w", path, err)
	}
	status, err := a.b.do(ctx, a.token(), method, path, raw, out)
	if status == http.StatusUnauthorized {
		if err := a.exchange(ctx); err != nil {
			return status, err
		}
		status, err = a.b.do(ctx, a.token(), method, path, raw, out)
	}
	return status, err
}

func (a *agentLoop) run(ctx context.Context) error {
	backoff := time.Second
	for ctx.Err() == nil {
		if err := a.exchange(ctx); err != nil {
			if errors.Is(err, ErrRevoked) {
				a.b.log.ErrorContext(ctx, "the service refused the bridge's token; stopping", "agent", a.name, "error", err)
				return err
			}
			a.b.log.WarnContext(ctx, "exchanging the token", "agent", a.name, "error", err)
		} else {
			err = a.follow(ctx)
			if ctx.Err() != nil {
				return nil
			}
			a.b.log.WarnContext(ctx, "announcement stream ended; reconnecting", "agent", a.name, "error", err)
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
	return nil
}

// follow holds the announcement stream and claims on each announcement
// and every Poll, until the stream ends.
func (a *agentLoop) follow(ctx context.Context) error {
	q := url.Values{"bridge": {a.b.opts.ID}, "version": {a.b.opts.Version}}
	req, err := http.NewRequestWithContext(ctx, "GET", a.b.opts.URL+"/api/bridge/announce?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token())
	req.Header.Set("Accept", "text/event-stream")
	resp, err := a.b.opts.Client.Do(req)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("connecting: %w", apiError(resp))
	}
	a.b.log.InfoContext(ctx, "connected", "agent", a.name, "bridge", a.b.opts.ID)
	a.ready()
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				select {
				case events <- ev:
				default: // a claim is due anyway
				}
			}
		}
	}()
	slots := make(chan struct{}, a.b.opts.Concurrency)
	poll := time.NewTicker(a.b.opts.Poll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return errors.New("the service closed the stream")
			}
			if ev == "closed" {
				return errors.New("the service closed the stream: the token was revoked or expired")
			}
			a.claim(ctx, slots)
		case <-poll.C:
			a.claim(ctx, slots)
		}
	}
}

// claim takes calls while slots are free and starts each.
func (a *agentLoop) claim(ctx context.Context, slots chan struct{}) {
	for len(slots) < cap(slots) {
		var out web.BridgeClaimJSON
		if _, err := a.call(ctx, "POST", "/api/bridge/claim", web.BridgeClaimRequest{Bridge: a.b.opts.ID, Limit: 1}, &out); err != nil {
			a.b.log.WarnContext(ctx, "claiming", "agent", a.name, "error", err)
			return
		}
		if len(out.Calls) == 0 {
			return
		}
		for _, c := range out.Calls {
			slots <- struct{}{}
			a.b.running.Add(1)
			go func() {
				defer a.b.running.Done()
				defer func() { <-slots }()
				a.runCall(a.b.work, c, time.Duration(out.LeaseMS)*time.Millisecond)
			}()
		}
	}
}

// runCall runs one claimed call with this machine's backend.
func (a *agentLoop) runCall(ctx context.Context, c web.BridgeCallJSON, lease time.Duration) {
	log := a.b.log.With("agent", a.name, "call", c.ID, "attempt", c.Attempt)
	log.InfoContext(ctx, "running a model call", "model", c.Model)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	base := "/api/bridge/calls/" + c.ID.String()
	// The lease: a third of its length between heartbeats.
	go func() {
		every := max(lease/3, 100*time.Millisecond)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				status, err := a.call(ctx, "POST", base+"/heartbeat", web.BridgeBeatRequest{Bridge: a.b.opts.ID}, nil)
				if status == http.StatusConflict || status == http.StatusGone || status == http.StatusForbidden {
					cancel(fmt.Errorf("the call was taken back: %w", err))
					return
				}
			}
		}
	}()
	// Events go in order, batched.
	evs := make(chan model.Event, 1024)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for ev := range evs {
			batch := []model.Event{ev}
			timer := time.NewTimer(30 * time.Millisecond)
		gather:
			for len(batch) < 256 {
				select {
				case ev, ok := <-evs:
					if !ok {
						break gather
					}
					batch = append(batch, ev)
				case <-timer.C:
					break gather
				}
			}
			timer.Stop()
			status, err := a.call(ctx, "POST", base+"/events", web.BridgeEventsRequest{Bridge: a.b.opts.ID, Attempt: c.Attempt, Events: batch}, nil)
			if status == http.StatusConflict || status == http.StatusGone || status == http.StatusForbidden {
				cancel(fmt.Errorf("the call was taken back: %w", err))
			}
		}
	}()
	var resp *model.Response
	backend, err := a.b.opts.Backend(a.name, c.Model)
	if err == nil && c.Request != nil {
		req := *c.Request
		req.Dir = "" // the service's folders mean nothing here
		resp, err = backend.Generate(ctx, &req, func(ev model.Event) {
			select {
			case evs <- ev:
			case <-ctx.Done():
			}
		})
	} else if err == nil {
		err = errors.New("the call has no request")
	}
	close(evs)
	<-sent
	if cause := context.Cause(ctx); cause != nil {
		log.WarnContext(ctx, "model call stopped", "cause", cause)
		return
	}
	body := web.BridgeResultRequest{Bridge: a.b.opts.ID, Attempt: c.Attempt, Response: resp}
	if err != nil {
		body.Response, body.Failure = nil, failure(c.Model, err)
		log.WarnContext(ctx, "model call failed", "error", err)
	}
	if _, err := a.call(ctx, "POST", base+"/result", body, nil); err != nil {
		log.WarnContext(ctx, "reporting the call's end", "error", err)
		return
	}
	log.InfoContext(ctx, "model call done")
}

// failure is what the service is told of a failed call.
func failure(spec string, err error) *core.BridgeFailure {
	provider, _, _ := strings.Cut(spec, ":")
	var me *model.Error
	if errors.As(err, &me) {
		msg := err.Error()
		if me.Err != nil {
			msg = me.Err.Error()
		}
		return &core.BridgeFailure{Provider: me.Provider, Status: me.Status, Type: me.Type, Retryable: me.Retryable, Message: msg}
	}
	return &core.BridgeFailure{Provider: provider, Message: err.Error()}
}

// do sends one request with a bearer token and decodes a JSON answer
// into out (when not nil).
func (b *Bridge) do(ctx context.Context, token, method, path string, body []byte, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, b.opts.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.opts.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, apiError(resp))
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// apiError is the service's refusal as an error.
func apiError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var e web.ErrorJSON
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s: %s", resp.Status, e.Error)
	}
	return fmt.Errorf("%s", resp.Status)
}
