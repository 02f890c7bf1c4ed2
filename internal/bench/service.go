package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
)

// The figures that run the whole service.

const (
	benchTeam   = "T0BENCH"
	benchBot    = "U0BOT"
	benchUser   = "U0BENCHUSER"
	benchSecret = "bench-signing-secret"
	benchToken  = "xoxb-bench"
)

// openApp opens and starts the service on e's store, listening on a free
// loopback port, with the zero-latency model and open DMs; edit adjusts the
// configuration (a platform). The caller stops it.
func openApp(ctx context.Context, e *env, edit func(*app.Config)) (*app.App, error) {
	script, err := WriteScript(e.dir)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(e.dir, "switchboard.yaml")
	if err := os.WriteFile(cfgPath, []byte("access:\n  dm_policy: open\n"), 0o600); err != nil {
		return nil, err
	}
	env := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}
	cfg := app.Config{
		// Errors only: the service warns that its model is scripted, which
		// is the point here.
		Addr: "127.0.0.1:0", DatabaseURL: e.url, ConfigPath: cfgPath, Logger: slog.New(errorsOnly{e.opts.Logger.Handler()}),
		Env: func(k string) string { return env[k] }, InstanceID: "bench-" + randomSuffix(),
	}
	if edit != nil {
		edit(&cfg)
	}
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := a.Start(context.WithoutCancel(ctx)); err != nil {
		_ = a.Stop(ctx)
		return nil, err
	}
	return a, nil
}

// errorsOnly passes on the records of level error and above.
type errorsOnly struct{ slog.Handler }

func (h errorsOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError && h.Handler.Enabled(ctx, l)
}

func (h errorsOnly) WithAttrs(as []slog.Attr) slog.Handler {
	return errorsOnly{h.Handler.WithAttrs(as)}
}
func (h errorsOnly) WithGroup(n string) slog.Handler { return errorsOnly{h.Handler.WithGroup(n)} }

// BurstPost sends every request, inFlight at a time, and returns each one's
// latency (request written to answer read), sorted. A request that fails or
// is not answered 200 is an error.
func BurstPost(client *http.Client, inFlight int, reqs []func() *http.Request) ([]time.Duration, error) {
	lat := make([]time.Duration, len(reqs))
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range inFlight {
		wg.Go(func() {
			for i := range next {
				req := reqs[i]()
				start := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("%s answered %d, want 200", req.URL.Path, resp.StatusCode)
					}
				}
				lat[i] = time.Since(start)
				if err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	return lat, first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// runAck posts a burst of signed app_mention events (each a new thread) to
// the service, inFlight at a time, while its workers answer them, and the
// same bodies to a handler that only reads the body and answers 200, over
// the same kind of client.
func runAck(ctx context.Context, e *env) (*Result, error) {
	if slackFakes == nil {
		return &Result{Metric: "ack p99", Unit: "ms", Baseline: "bare handler p99", Skipped: errNoSlackFake.Error()}, nil
	}
	burst, inFlight := e.opts.size(1000, 40), e.opts.size(64, 8)
	slack := slackFakes.Start(benchToken, benchBot, benchTeam)
	defer slack.Close()
	a, err := openApp(ctx, e, func(c *app.Config) {
		c.SlackBotToken, c.SlackSigningSecret, c.SlackAPIURL = benchToken, benchSecret, slack.APIURL()
	})
	if err != nil {
		return nil, err
	}
	defer a.Stop(context.WithoutCancel(ctx))
	bare, err := serveLoopback(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	if err != nil {
		return nil, err
	}
	defer bare.Close()
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: inFlight}}
	defer client.CloseIdleConnections()

	requests := func(round string, n int) (events, base []func() *http.Request) {
		for i := range n {
			channel, ts := fmt.Sprintf("C%sB%05d", round, i), fmt.Sprintf("1700009%s.%06d", round, i)
			body := slackFakes.EventBody(benchTeam, fmt.Sprintf("EvBench%s_%05d", round, i), map[string]any{
				"type": "app_mention", "user": benchUser, "text": "<@" + benchBot + "> summarise the incident please",
				"ts": ts, "channel": channel, "team": benchTeam, "event_ts": ts,
			})
			events = append(events, func() *http.Request {
				// Signed when sent, as Slack does.
				return slackFakes.Signed("http://"+a.Addr()+"/slack/events", benchSecret, time.Now(), body)
			})
			base = append(base, func() *http.Request {
				r, _ := http.NewRequest(http.MethodPost, bare.URL(), bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				return r
			})
		}
		return events, base
	}
	// Warm both servers' connections and the store's first writes.
	warmEvents, warmBase := requests("000", inFlight)
	if _, err := BurstPost(client, inFlight, warmBase); err != nil {
		return nil, err
	}
	if _, err := BurstPost(client, inFlight, warmEvents); err != nil {
		return nil, err
	}
	if err := waitDrained(ctx, e.st, 10*time.Minute); err != nil {
		return nil, err
	}
	events, base := requests("001", burst)
	baseLat, err := BurstPost(client, inFlight, base)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	acks, err := BurstPost(client, inFlight, events)
	if err != nil {
		return nil, err
	}
	if err := waitDrained(ctx, e.st, 10*time.Minute); err != nil {
		return nil, err
	}
	drain := time.Since(start)
	return &Result{
		Metric: "ack p99", Value: ms(Quantile(acks, 0.99)), Unit: "ms",
		Baseline: "bare handler p99", BaselineValue: ms(Quantile(baseLat, 0.99)),
		Extra: map[string]float64{
			"ack_p50_ms": ms(Quantile(acks, 0.5)), "bare_p50_ms": ms(Quantile(baseLat, 0.5)),
			"mentions": float64(burst), "in_flight": float64(inFlight), "answered_per_s": float64(burst) / drain.Seconds(),
		},
	}, nil
}

// runCatchup appends entries to one conversation and reads them back over
// GET /api/conversations/{id}/stream from cursor 0 until the last one
// arrived; the baseline is one store read of the same entries, the limit
// a bare select of them written as SSE (bareCatchUp), over loopback too.
func runCatchup(ctx context.Context, e *env) (*Result, error) {
	n := e.opts.size(10000, 200)
	a, err := openApp(ctx, e, nil)
	if err != nil {
		return nil, err
	}
	defer a.Stop(context.WithoutCancel(ctx))
	conv, err := a.Service.CreateConversation(ctx, "", "api", "bench")
	if err != nil {
		return nil, err
	}
	const batch = 500
	for start := 0; start < n; start += batch {
		err := e.st.InTx(ctx, func(q store.Queries) error {
			for range min(batch, n-start) {
				if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: store.EntryAssistant,
					Author: "agent:bench", Content: entryContent, Now: time.Now()}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("appending: %w", err)
		}
	}
	client := &http.Client{}
	defer client.CloseIdleConnections()
	bareHandler, err := bareCatchUp(e.st, conv.ID)
	if err != nil {
		return nil, err
	}
	bare, err := serveLoopback(bareHandler)
	if err != nil {
		return nil, err
	}
	defer bare.Close()
	rounds := e.opts.size(5, 2)
	var streams, reads, bares []time.Duration
	for range rounds {
		d, err := catchUp(ctx, client, "http://"+a.Addr()+"/api/conversations/"+conv.ID.String()+"/stream?cursor=0", n)
		if err != nil {
			return nil, err
		}
		streams = append(streams, d)
		if d, err = catchUp(ctx, client, bare.URL(), n); err != nil {
			return nil, fmt.Errorf("the bare select-to-SSE: %w", err)
		}
		bares = append(bares, d)
		start := time.Now()
		es, err := e.st.EntryList(ctx, &store.EntryListParams{ConversationID: conv.ID})
		if err != nil {
			return nil, err
		}
		reads = append(reads, time.Since(start))
		if len(es) != n {
			return nil, fmt.Errorf("the store read %d entries, want %d", len(es), n)
		}
	}
	// Then with a stream following the conversation (a tab left open):
	// the others' catch-ups are served from the frames it read.
	streamURL := "http://" + a.Addr() + "/api/conversations/" + conv.ID.String() + "/stream?cursor=0"
	cached, err := cachedCatchUps(ctx, client, streamURL, n, rounds)
	if err != nil {
		return nil, err
	}
	return &Result{
		Metric: fmt.Sprintf("catch-up of %d, median", n), Value: ms(Quantile(streams, 0.5)), Unit: "ms",
		Baseline: "EntryList of them, median", BaselineValue: ms(Quantile(reads, 0.5)),
		Limit: "a bare SELECT seq, content written as SSE, median", LimitValue: ms(Quantile(bares, 0.5)),
		Extra: map[string]float64{"entries": float64(n), "rounds": float64(rounds),
			"cached_median_ms": ms(Quantile(cached, 0.5)), "cached_vs_bare": ms(Quantile(cached, 0.5)) / ms(Quantile(bares, 0.5))},
	}, nil
}

// cachedCatchUps opens one stream of url that reads the whole log and
// stays open, following, then times rounds catch-ups of n entries by
// other streams while it follows.
func cachedCatchUps(ctx context.Context, client *http.Client, url string, n, rounds int) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for seen := 0; seen < n; {
		if !sc.Scan() {
			return nil, fmt.Errorf("the following stream ended after %d entries of %d: %v", seen, n, sc.Err())
		}
		if bytes.Equal(sc.Bytes(), []byte("event: entry")) {
			seen++
		}
	}
	var out []time.Duration
	for range rounds {
		d, err := catchUp(ctx, client, url, n)
		if err != nil {
			return nil, fmt.Errorf("a catch-up while another stream follows: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// catchUp reads the SSE stream at url until it has seen n entry events.
func catchUp(ctx context.Context, client *http.Client, url string, n int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s answered %d", url, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	seen := 0
	event := []byte("event: entry")
	for sc.Scan() {
		// Bytes, not Text: a string per line would make the client's
		// allocations part of the figure.
		if bytes.Equal(sc.Bytes(), event) {
			if seen++; seen == n {
				return time.Since(start), nil
			}
		}
	}
	return 0, fmt.Errorf("the stream ended after %d entries of %d: %v", seen, n, sc.Err())
}

// runStart measures a restart of the real binary: `switchboard serve`
// started as a process on a store migrated already, until GET /readyz
// answers 200. The baseline is `switchboard migrate` on the same store, a
// process that starts, opens the store, reads its schema version and exits.
func runStart(ctx context.Context, e *env) (*Result, error) {
	rounds := e.opts.size(7, 2)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	var starts, opens []time.Duration
	for range rounds {
		p, err := startServe(e)
		if err != nil {
			return nil, err
		}
		d, err := p.ready(ctx, client)
		if serr := p.stop(); err == nil {
			err = serr
		}
		if err != nil {
			return nil, err
		}
		starts = append(starts, d)
		d, _, err = runMigrate(e)
		if err != nil {
			return nil, err
		}
		opens = append(opens, d)
	}
	return &Result{
		Metric: "serve start-to-ready, median", Value: ms(Quantile(starts, 0.5)), Unit: "ms",
		Baseline: "migrate process (no-op), median", BaselineValue: ms(Quantile(opens, 0.5)),
		Extra: map[string]float64{"rounds": float64(rounds), "start_max_ms": ms(Quantile(starts, 1))},
	}, nil
}

func waitReady(ctx context.Context, client *http.Client, url string) error {
	return waitReadyOr(ctx, client, url, nil)
}

// waitReadyOr waits for url to answer 200, for at most 30s, or until
// exited is closed (the process that should answer ended).
func waitReadyOr(ctx context.Context, client *http.Client, url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer 200 within 30s (last: %v)", url, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return fmt.Errorf("the process behind %s ended before it was ready", url)
		case <-time.After(time.Millisecond):
		}
	}
}

// runRSS measures the resident memory (VmRSS) of `switchboard serve`
// started as a process, ready and then idle for a few seconds: the workers
// wait, the scheduler ticks. Nothing is trimmed: this is what the process
// holds, and Extra has its anonymous (heap, stacks, runtime) and
// file-backed (the executable's pages) parts. The service runs
// from a copy of the binary of its own, as it would deployed (see
// privateBinary). The baseline is the
// peak RSS of `switchboard migrate` on the same store: the binary, the
// runtime and an open store.
func runRSS(ctx context.Context, e *env) (*Result, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	bin, err := privateBinary(e)
	if err != nil {
		return nil, err
	}
	defer os.Remove(bin)
	p, err := startServeAs(e, bin)
	if err != nil {
		return nil, err
	}
	if _, err := p.ready(ctx, client); err != nil {
		_ = p.stop()
		return nil, err
	}
	client.CloseIdleConnections()
	var mem rss
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case <-p.exited:
		err = fmt.Errorf("switchboard serve ended while idle:\n%s", p.output.String())
	case <-time.After(time.Duration(e.opts.size(5000, 200)) * time.Millisecond):
		mem, err = readRSS(p.cmd.Process.Pid)
	}
	if serr := p.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	_, base, err := runMigrate(e)
	if err != nil {
		return nil, err
	}
	return &Result{
		Metric: "serve idle RSS", Value: mem.total, Unit: "MB",
		Baseline: "migrate process peak RSS", BaselineValue: base,
		Extra: map[string]float64{"anon_mb": mem.anon, "file_mb": mem.file},
	}, nil
}

// loopbackServer is an HTTP server on a free loopback port.
type loopbackServer struct {
	srv *http.Server
	ln  net.Listener
}

func serveLoopback(h http.Handler) (*loopbackServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	s := &loopbackServer{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, ln: ln}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *loopbackServer) URL() string { return "http://" + s.ln.Addr().String() }

func (s *loopbackServer) Close() { _ = s.srv.Close() }
