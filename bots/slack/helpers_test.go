package slack

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testSecret = "test-signing-secret"

// fakeCore records what the adapter hands to core.
type fakeCore struct {
	mu        sync.Mutex
	changed   chan struct{}
	inbound   []core.Inbound
	actions   []core.Action
	submitErr error
	failEvent map[string]error // Submit fails for these event ids
	actResult core.ActionResult
}

func newFakeCore() *fakeCore { return &fakeCore{changed: make(chan struct{})} }

func (f *fakeCore) Submit(ctx context.Context, in *core.Inbound) (*core.SubmitResult, error) {
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("Submit called without a deadline")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.submitErr != nil {
		return nil, f.submitErr
	}
	if err := f.failEvent[in.EventID]; err != nil {
		return nil, err
	}
	f.inbound = append(f.inbound, *in)
	close(f.changed)
	f.changed = make(chan struct{})
	return &core.SubmitResult{Seq: int64(len(f.inbound))}, nil
}

func (f *fakeCore) Act(ctx context.Context, a *core.Action) (*core.ActionResult, error) {
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("Act called without a deadline")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, *a)
	close(f.changed)
	f.changed = make(chan struct{})
	res := f.actResult
	return &res, nil
}

func (f *fakeCore) setSubmitErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submitErr = err
}

func (f *fakeCore) Inbound() []core.Inbound {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]core.Inbound(nil), f.inbound...)
}

func (f *fakeCore) Actions() []core.Action {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]core.Action(nil), f.actions...)
}

// waitInbound waits for the n-th submitted message.
func (f *fakeCore) waitInbound(t *testing.T, n int) []core.Inbound {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		got, ch := append([]core.Inbound(nil), f.inbound...), f.changed
		f.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("waited for %d submitted messages, got %d: %+v", n, len(got), got)
		}
	}
}

func (f *fakeCore) waitActions(t *testing.T, n int) []core.Action {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		got, ch := append([]core.Action(nil), f.actions...), f.changed
		f.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("waited for %d actions, got %d", n, len(got))
		}
	}
}

// clock is a settable clock with a sleep that records and returns at once.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newClock() *clock { return &clock{now: time.Unix(1700000000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

type testEnv struct {
	srv   *slacktest.Server
	core  *fakeCore
	clock *clock
	a     *Adapter
	http  *httptest.Server
}

// newEnv starts a fake Slack, an adapter against it, and an HTTP server
// with the adapter's routes.
func newEnv(t testing.TB, mutate func(*Options)) *testEnv {
	t.Helper()
	env := &testEnv{srv: slacktest.NewServer(slacktest.Options{}), core: newFakeCore(), clock: newClock()}
	t.Cleanup(env.srv.Close)
	opts := Options{
		BotToken:      "xoxb-test",
		SigningSecret: testSecret,
		APIURL:        env.srv.APIURL(),
		Submitter:     env.core,
		Logger:        slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:           env.clock.Now,
		SleepFunc:     env.clock.Sleep,
	}
	if mutate != nil {
		mutate(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	env.a = a
	t.Cleanup(a.Stop)
	mux := http.NewServeMux()
	a.Routes(mux)
	env.http = httptest.NewServer(mux)
	t.Cleanup(env.http.Close)
	return env
}

// postSigned sends a signed request to path and returns the status.
func (env *testEnv) postSigned(t testing.TB, path, contentType string, body []byte, at time.Time, header http.Header) (int, string) {
	t.Helper()
	req := slacktest.NewSignedRequest(env.http.URL+path, contentType, testSecret, at, body)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	var buf [4096]byte
	n, _ := resp.Body.Read(buf[:])
	return resp.StatusCode, string(buf[:n])
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
