package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds every wait in these tests; a healthy run needs a
// fraction of it even under -race.
const waitTimeout = 20 * time.Second

// clock is a fixed test clock shared by the store calls, the engine and the
// worker, so nothing depends on the wall clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// echoScript answers every message with its text, so a reply can be
// predicted whichever process plays it.
const echoScript = `
fallback:
  text: "echo: {{last_user}} (a scripted reply in several words)"
`

// askScript asks a question on the first message and says what was chosen
// once the answer comes back.
const askScript = `
turns:
  - after_tool: ask_user
    text: "You chose {{last_user}}"
  - text: Let me ask.
    tool_calls:
      - {name: ask_user, input: {question: "Which colour?", choices: [Blue, Green]}}
`

// server is one "process": a service, its worker and the HTTP API over a
// store.
type server struct {
	st     store.Store
	svc    *core.Service
	worker *core.Worker
	http   *httptest.Server
	api    *web.API
	cancel context.CancelFunc
	once   sync.Once
}

// start runs a service, a worker and the API over st, with the script at
// scriptPath as the agent's model.
func start(t *testing.T, st store.Store, clk *clock, scriptPath string, opts web.Options) *server {
	t.Helper()
	return startWith(t, st, clk, scriptPath, opts, nil)
}

// startWith is start with extra tools registered.
func startWith(t *testing.T, st store.Store, clk *clock, scriptPath string, opts web.Options, extra func(*tool.Registry)) *server {
	t.Helper()
	return startFull(t, st, clk, scriptPath, opts, extra, nil)
}

// startFull is startWith with fill, when not nil, setting the options that
// need the service (its rulebooks, runs, personalities) before the API is
// built.
func startFull(t *testing.T, st store.Store, clk *clock, scriptPath string, opts web.Options, extra func(*tool.Registry), fill func(*core.Service, *web.Options)) *server {
	t.Helper()
	return startTeam(t, st, clk, []config.Agent{testAgent("atlas", scriptPath, true)}, false, opts, extra, fill)
}

// testAgent is an agent of these tests playing the script at scriptPath.
func testAgent(name, scriptPath string, isDefault bool) config.Agent {
	return config.Agent{
		Name: name, Persona: "You test the API.", Model: "scripted:" + scriptPath,
		MaxTokens: 1000, StepBudget: 25, Answers: config.Answers{Default: isDefault},
	}
}

// startTeam is startFull with these agents; with runs, the worker also
// moves runs (their steps start and end). tweak, when given, changes the
// service's options before it is built.
func startTeam(t *testing.T, st store.Store, clk *clock, team []config.Agent, runs bool, opts web.Options, extra func(*tool.Registry), fill func(*core.Service, *web.Options), tweak ...func(*core.Options)) *server {
	t.Helper()
	agents := &config.Config{Agents: team}
	reg := tool.NewRegistry()
	if err := headless.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	if extra != nil {
		extra(reg)
	}
	co := core.Options{
		Store: st, Agents: agents, Registry: reg,
		Tools:  func(c tool.ContextName) []*tool.Tool { return headless.ToolsFor(reg, c) },
		Logger: testenv.Logger(t),
		Now:    clk.Now,
	}
	for _, f := range tweak {
		f(&co)
	}
	svc, err := core.New(co)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	handlers := core.NewHandlers()
	core.AddHandler(handlers, svc.RunTurn)
	if runs {
		svc.AddRunHandlers(handlers)
	}
	w, err := core.NewWorker(core.WorkerOptions{
		Store: st, WorkerID: svc.WorkerID(), PollInterval: 20 * time.Millisecond,
		Handlers: handlers,
		Logger:   testenv.Logger(t), Now: clk.Now,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	opts.Service, opts.Grants = svc, svc
	if fill != nil {
		fill(svc, &opts)
	}
	if opts.Logger == nil {
		opts.Logger = testenv.Logger(t)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	api, err := web.New(opts)
	if err != nil {
		cancel()
		_ = w.Stop(context.Background())
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Routes(mux)
	s := &server{st: st, svc: svc, worker: w, http: httptest.NewServer(mux), api: api, cancel: cancel}
	t.Cleanup(s.stop)
	return s
}

// stop is what a process exit looks like to clients: open streams are cut,
// the listener closes, the worker stops.
func (s *server) stop() {
	s.once.Do(func() {
		s.http.CloseClientConnections()
		s.http.Close()
		s.cancel()
		_ = s.worker.Stop(context.Background())
	})
}

// call sends a request with a JSON body (none when body is "") and decodes
// the JSON answer into out when out is not nil. It returns the status and
// the raw answer. A request other than GET says its body is JSON unless hdr
// sets Content-Type ("" to send none).
func (s *server) call(t *testing.T, method, path, body string, hdr http.Header, out any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.http.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Del("Content-Type")
	}
	if host := hdr.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := s.http.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decoding %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, string(raw)
}

// mustCall is call that fails the test unless the status is want.
func (s *server) mustCall(t *testing.T, method, path, body string, want int, out any) {
	t.Helper()
	if got, raw := s.call(t, method, path, body, nil, out); got != want {
		t.Fatalf("%s %s %s = %d %s; want %d", method, path, body, got, raw, want)
	}
}

type conversationOut struct {
	ID           uuid.UUID          `json:"id"`
	RootID       uuid.UUID          `json:"root_id"`
	ParentID     *uuid.UUID         `json:"parent_id"`
	ForkSeq      *int64             `json:"fork_seq"`
	Status       string             `json:"status"`
	LastSeq      int64              `json:"last_seq"`
	ChildCount   int                `json:"child_count"`
	Forks        []string           `json:"forks"`
	PendingCalls []core.PendingCall `json:"pending_calls"`
}

type entryOut struct {
	ID       uuid.UUID       `json:"id"`
	Kind     string          `json:"kind"`
	Author   string          `json:"author"`
	Content  json.RawMessage `json:"content"`
	Seq      *int64          `json:"seq"`
	AfterSeq *int64          `json:"after_seq"`
}

func (e entryOut) text(t *testing.T) string {
	t.Helper()
	var c struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(e.Content, &c); err != nil {
		t.Fatalf("decoding entry %s content %s: %v", e.ID, e.Content, err)
	}
	return c.Text
}

func (s *server) create(t *testing.T) uuid.UUID {
	t.Helper()
	var c conversationOut
	s.mustCall(t, http.MethodPost, "/api/conversations", "", http.StatusCreated, &c)
	if c.ID == uuid.Nil {
		t.Fatal("POST /api/conversations answered no id")
	}
	return c.ID
}

func (s *server) post(t *testing.T, conv uuid.UUID, text string) int64 {
	t.Helper()
	var out struct {
		Seq int64 `json:"seq"`
	}
	body, _ := json.Marshal(map[string]string{"text": text})
	s.mustCall(t, http.MethodPost, "/api/conversations/"+conv.String()+"/messages", string(body), http.StatusAccepted, &out)
	return out.Seq
}

func (s *server) get(t *testing.T, conv uuid.UUID) conversationOut {
	t.Helper()
	var c conversationOut
	s.mustCall(t, http.MethodGet, "/api/conversations/"+conv.String(), "", http.StatusOK, &c)
	return c
}

func (s *server) entries(t *testing.T, conv uuid.UUID, query string) []entryOut {
	t.Helper()
	var out struct {
		Entries []entryOut `json:"entries"`
	}
	s.mustCall(t, http.MethodGet, "/api/conversations/"+conv.String()+"/entries"+query, "", http.StatusOK, &out)
	return out.Entries
}

func seqsOf(es []entryOut) []int64 {
	out := make([]int64, 0, len(es))
	for _, e := range es {
		if e.Seq != nil {
			out = append(out, *e.Seq)
		}
	}
	return out
}

func kindsOf(es []entryOut) string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Kind)
	}
	return strings.Join(out, ",")
}

func span(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
}

// waitStatus waits until the conversation is in want with no turn left to
// run.
func waitStatus(t *testing.T, st store.Store, conv uuid.UUID, want store.ConversationStatus) {
	t.Helper()
	waitFor(t, fmt.Sprintf("conversation %s to be %s", conv, want), func() bool {
		c, err := st.ConversationGet(context.Background(), conv)
		if err != nil || c.Status != want {
			return false
		}
		items, err := st.WorkList(context.Background(), &store.WorkListParams{
			ConversationID: &conv, States: []store.WorkState{store.WorkAvailable, store.WorkRunning},
		})
		return err == nil && len(items) == 0
	})
}

// sseEvent is one Server-Sent Event as a browser's EventSource would see it.
type sseEvent struct {
	ID, Event, Data string
}

// sseStream reads a stream in the background; events ends when the stream
// does.
type sseStream struct {
	events chan sseEvent
	header http.Header
	cancel context.CancelFunc
	done   chan struct{}
}

// openStream follows conv from lastEventID ("" for the start).
func (s *server) openStream(t *testing.T, conv uuid.UUID, lastEventID string) *sseStream {
	t.Helper()
	return s.openStreamQuery(t, conv, lastEventID, "")
}

// openStreamQuery is openStream with a query string ("?cursor=N").
func (s *server) openStreamQuery(t *testing.T, conv uuid.UUID, lastEventID, query string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.http.URL+"/api/conversations/"+conv.String()+"/stream"+query, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := s.http.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatalf("opening stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("GET stream = %d %s; want 200", resp.StatusCode, raw)
	}
	st := &sseStream{events: make(chan sseEvent, 4096), header: resp.Header, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(st.done)
		defer close(st.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Event != "" || len(data) > 0 {
					ev.Data = strings.Join(data, "\n")
					st.events <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, ":"):
				// a comment (keep-alive)
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.Event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	t.Cleanup(st.close)
	return st
}

func (st *sseStream) close() {
	st.cancel()
	<-st.done
}

// next returns the next event, failing when the stream ends or stalls.
func (st *sseStream) next(t *testing.T, what string) sseEvent {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	select {
	case ev, ok := <-st.events:
		if !ok {
			t.Fatalf("the stream ended while waiting for %s", what)
		}
		return ev
	case <-timer.C:
		t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
	}
	return sseEvent{}
}

// readThrough reads until the entry event whose id is seq, and returns the
// entry events read (their SSE ids and entries) and the delta texts seen
// before the last entry.
func (st *sseStream) readThrough(t *testing.T, seq int64) (ids []string, entries []entryOut, deltas []string) {
	t.Helper()
	want := fmt.Sprint(seq)
	for {
		ev := st.next(t, "entry "+want)
		switch ev.Event {
		case "entry":
			var e entryOut
			if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
				t.Fatalf("decoding entry event %q: %v", ev.Data, err)
			}
			ids = append(ids, ev.ID)
			entries = append(entries, e)
			if ev.ID == want {
				return ids, entries, deltas
			}
		case "delta":
			if ev.ID != "" {
				t.Fatalf("delta event has id %q: deltas are never replayed, so they must not move the client's Last-Event-ID", ev.ID)
			}
			var d struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				t.Fatalf("decoding delta event %q: %v", ev.Data, err)
			}
			deltas = append(deltas, d.Text)
		}
	}
}

// readTurnEnd reads up to the turn_end event and returns the kinds of the
// events before it.
func (st *sseStream) readTurnEnd(t *testing.T) []string {
	t.Helper()
	var kinds []string
	for {
		ev := st.next(t, "turn_end")
		if ev.Event == "turn_end" {
			return kinds
		}
		kinds = append(kinds, ev.Event)
	}
}

// sameEntries compares what a stream delivered with what GET /entries
// lists.
func sameEntries(t *testing.T, streamed, listed []entryOut) {
	t.Helper()
	if len(streamed) != len(listed) {
		t.Fatalf("stream delivered %d entries (%s), GET /entries lists %d (%s)", len(streamed), kindsOf(streamed), len(listed), kindsOf(listed))
	}
	for i := range streamed {
		a, b := streamed[i], listed[i]
		if a.ID != b.ID || a.Kind != b.Kind || a.Author != b.Author || !bytes.Equal(compact(t, a.Content), compact(t, b.Content)) ||
			fmt.Sprint(seqsOf([]entryOut{a})) != fmt.Sprint(seqsOf([]entryOut{b})) {
			t.Fatalf("entry %d: stream sent %+v, GET /entries lists %+v; want the same entry", i, a, b)
		}
	}
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compacting %s: %v", raw, err)
	}
	return b.Bytes()
}
