package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/audit"
)

// hmacKey is the audit webhook's signing key in the tests.
const hmacKey = "audit-sink-test-key"

// auditReceiver is a SIEM's webhook on 127.0.0.1: it answers 500 to its
// first failFirst requests, then records each delivery it accepts, after
// checking its signature. It dedupes nothing: a row posted twice is
// recorded twice.
type auditReceiver struct {
	srv       *httptest.Server
	failFirst int64
	tries     atomic.Int64
	mu        sync.Mutex
	got       []audit.Event
	bad       []string // what failed verification
}

// now is the clock the signatures' time stamps are checked against: the
// service's.
func newAuditReceiver(tb testing.TB, failFirst int64, now func() time.Time) *auditReceiver {
	r := &auditReceiver{failFirst: failFirst}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		if r.tries.Add(1) <= r.failFirst {
			http.Error(w, "the collector is starting", http.StatusInternalServerError)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if err := audit.Verify([]byte(hmacKey), req.Header.Get(audit.SignatureHeader), body, now(), 0); err != nil {
			r.bad = append(r.bad, fmt.Sprintf("%s: %v", body, err))
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var ev audit.Event
		if err := json.Unmarshal(body, &ev); err != nil || ev.ID != req.Header.Get(audit.EventIDHeader) {
			r.bad = append(r.bad, fmt.Sprintf("%s: %v (event id header %q)", body, err, req.Header.Get(audit.EventIDHeader)))
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		r.got = append(r.got, ev)
		w.WriteHeader(http.StatusNoContent)
	}))
	tb.Cleanup(r.srv.Close)
	return r
}

func (r *auditReceiver) events() []audit.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]audit.Event(nil), r.got...)
}

// TestAuditSinksDeliverEveryRowOnce: the six calls of the audit test (ran
// ok, failed, refused by the policy, approved, denied, expired) with a
// webhook sink whose receiver fails its first three requests, and a file
// sink. Every write of an audit row reaches the webhook exactly once,
// signed, in the order of its conversation; the file holds the same
// events; the export holds each row once, as it stands.
func TestAuditSinksDeliverEveryRowOnce(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		var skew atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		script, err := filepath.Abs(filepath.Join("testdata", "audit_e2e.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		recv := newAuditReceiver(t, 3, now)
		file := filepath.Join(t.TempDir(), "audit", "audit.jsonl")
		config := openAccess + fmt.Sprintf(`audit:
  sinks:
    - {webhook: %q, secret_env: AUDIT_HMAC_KEY}
    - {file: %q}
`, recv.srv.URL+"/hook", file)
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		e := startSlack(t, db(t), envOptions{config: config, now: now, tracer: tp, env: map[string]string{
			"SWITCHBOARD_MODEL": "scripted:" + script, "AUDIT_HMAC_KEY": hmacKey,
		}})
		addAuditTools(t, e.app.Registry)
		ctx := context.Background()

		say := func(channel, ts, text string) {
			t.Helper()
			e.mustPost(newEvent("Ev"+channel, mention(channel, ts, "", alice, text)))
		}
		say("C0LOOK", "1700001000.000001", "please look up the weather")
		say("C0FETCH", "1700001000.000002", "please fetch the page")
		say("C0FORBID", "1700001000.000003", "please use the forbidden tool")
		say("C0DEPLOY", "1700001000.000004", "please deploy prod")
		say("C0DROP", "1700001000.000005", "please drop the users table")
		say("C0PURGE", "1700001000.000006", "please purge the logs")
		e.decide("C0DEPLOY", "1700001000.000004", "approve")
		e.decide("C0DROP", "1700001000.000005", "deny")
		e.waitReply("C0DEPLOY", "Deploy settled.")
		e.waitReply("C0DROP", "Drop settled.")
		e.waitReply("C0LOOK", "Looked it up.")
		e.waitReply("C0FETCH", "The fetch failed.")
		e.waitReply("C0FORBID", "That tool is not allowed.")
		skew.Store(int64(25 * time.Hour))
		if _, err := e.app.Service.Sweep(ctx); err != nil {
			t.Fatalf("sweeping: %v", err)
		}
		e.waitReply("C0PURGE", "Purge settled.")
		// The queue drains once every delivery succeeded, retries included.
		e.waitIdle()

		// What was written: the file sink's lines, after each commit.
		written := readAuditFile(t, file)
		// One event per write of a row: at least one per call, two or more
		// for a call that waited for a person (pending, its outcome).
		if len(written) < 9 {
			t.Fatalf("the file sink holds %d events, want at least 9 (the six rows, three of them twice):\n%s", len(written), eventsText(written))
		}
		got := recv.events()
		if bad := recv.bad; len(bad) > 0 {
			t.Fatalf("deliveries that failed verification: %q", bad)
		}
		if tries := recv.tries.Load(); tries != int64(len(written))+3 {
			t.Errorf("the receiver got %d requests, want %d: one per event and the three it failed", tries, len(written)+3)
		}
		seen := map[string]int{}
		for _, ev := range got {
			seen[ev.ID]++
		}
		for _, ev := range written {
			if seen[ev.ID] != 1 {
				t.Errorf("event %s (%s %s) reached the webhook %d times, want once", ev.ID, ev.Action, ev.Outcome, seen[ev.ID])
			}
			delete(seen, ev.ID)
		}
		if len(seen) > 0 || len(got) != len(written) {
			t.Errorf("the webhook got %d deliveries, %d of events never written: %v", len(got), len(seen), seen)
		}
		// In order per conversation: the webhook's order is the file's,
		// which is the order of the commits.
		byConv := func(evs []audit.Event) map[string][]string {
			out := map[string][]string{}
			for _, ev := range evs {
				k := ev.OrderingKey()
				out[k] = append(out[k], ev.ID+" "+ev.Outcome)
			}
			return out
		}
		want, have := byConv(written), byConv(got)
		for conv, w := range want {
			if strings.Join(w, ",") != strings.Join(have[conv], ",") {
				t.Errorf("conversation %s: the webhook got %v, want %v (the order written)", conv, have[conv], w)
			}
		}
		for _, ev := range got {
			if ev.Schema != audit.Schema || ev.RowID == uuid.Nil || ev.ConversationID == nil || ev.Actor == "" || ev.Action == "" || ev.Outcome == "" {
				t.Errorf("event %+v lacks who, what or where", ev)
			}
		}
		for call, outcome := range map[string]string{"call-lookup": "ok", "call-fetch": "failed", "call-forbidden": "denied"} {
			if evs := rowsOf(got, call); len(evs) != 1 || evs[0].Outcome != outcome {
				t.Errorf("the events of %s = %+v; want one, %s", call, evs, outcome)
			}
		}
		for call, outcome := range map[string]string{"call-deploy": "ok", "call-drop": "denied", "call-purge": "expired"} {
			evs := rowsOf(got, call)
			if len(evs) < 2 || evs[0].Outcome != "pending" || evs[len(evs)-1].Outcome != outcome {
				t.Errorf("the events of %s = %s; want pending first and %s last", call, eventsText(evs), outcome)
				continue
			}
			for _, ev := range evs {
				if ev.RowID != evs[0].RowID {
					t.Errorf("the events of %s name two rows: %s", call, eventsText(evs))
				}
			}
		}
		if deploy := rowsOf(got, "call-deploy"); deploy[len(deploy)-1].DecidedBy != "user:"+alice {
			t.Errorf("the deploy's last event is decided by %q, want alice", deploy[len(deploy)-1].DecidedBy)
		}
		traces := map[string]bool{}
		for _, sp := range spans.Ended() {
			traces[sp.SpanContext().TraceID().String()] = true
		}
		for _, ev := range got {
			if !traces[ev.TraceID] {
				t.Errorf("event %s (%s %s) has trace id %q, which is no trace of the service's spans", ev.ID, ev.Action, ev.Outcome, ev.TraceID)
			}
		}

		// The export: each row once, as it stands, oldest first.
		resp, err := e.http.Get(e.base + "/api/audit/export?since=" + now().Add(-48*time.Hour).Format(time.RFC3339))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/jsonl" {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("GET /api/audit/export answered %d %s %s", resp.StatusCode, ct, b)
		}
		exported := decodeLines(t, resp.Body)
		if len(exported) != 6 {
			t.Fatalf("the export has %d rows, want the six:\n%s", len(exported), eventsText(exported))
		}
		last := map[uuid.UUID]audit.Event{}
		for _, ev := range got {
			last[ev.RowID] = ev
		}
		for i, x := range exported {
			l, ok := last[x.RowID]
			if x.ID != "" || !ok || l.Outcome != x.Outcome || l.DecidedBy != x.DecidedBy || l.TraceID != x.TraceID {
				t.Errorf("exported row %+v; want the last event the webhook got of it, %+v, without an event id", x, l)
			}
			if i > 0 && x.CreatedAt.Before(exported[i-1].CreatedAt) {
				t.Errorf("exported row %d is older than row %d: want oldest first", i, i-1)
			}
		}

		// The metrics count the deliveries and the three failures.
		metrics := e.metricsText(t)
		for series, want := range map[string]int{
			`switchboard_audit_sink_deliveries_total{result="delivered",sink="webhook"}`: len(written),
			`switchboard_audit_sink_deliveries_total{result="failed",sink="webhook"}`:    3,
			`switchboard_audit_sink_deliveries_total{result="delivered",sink="file"}`:    len(written),
		} {
			if n := metricValue(metrics, series); n != want {
				t.Errorf("%s = %d, want %d", series, n, want)
			}
		}
	})
}

func rowsOf(evs []audit.Event, call string) []audit.Event {
	var out []audit.Event
	for _, ev := range evs {
		if ev.CallID == call {
			out = append(out, ev)
		}
	}
	return out
}

func readAuditFile(tb testing.TB, path string) []audit.Event {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("the audit file sink: %v", err)
	}
	defer f.Close()
	return decodeLines(tb, f)
}

func decodeLines(tb testing.TB, r io.Reader) []audit.Event {
	tb.Helper()
	var out []audit.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			tb.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func eventsText(evs []audit.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "  %s row %s %s %s %s\n", ev.ID, ev.RowID, ev.CallID, ev.Action, ev.Outcome)
	}
	return b.String()
}

// metricsText is what GET /metrics serves.
func (e *slackEnv) metricsText(tb testing.TB) string {
	tb.Helper()
	resp, err := e.http.Get(e.base + "/metrics")
	if err != nil {
		tb.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// metricValue is the value of one series in a Prometheus text page, 0
// when it is absent.
func metricValue(page, series string) int {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(page)
	if m == nil {
		return 0
	}
	f, _ := strconv.ParseFloat(m[1], 64)
	return int(f)
}

// TestAuditSinksShipSignIns: a console sign-in with the operator token and
// its sign-out are audit rows like a tool call's, and reach a webhook sink
// signed, once each.
func TestAuditSinksShipSignIns(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		recv := newAuditReceiver(t, 0, time.Now)
		config := openAccess + fmt.Sprintf("audit:\n  sinks:\n    - {webhook: %q, secret_env: AUDIT_HMAC_KEY}\n", recv.srv.URL+"/hook")
		e := startSlack(t, db(t), envOptions{config: config, apiToken: "op", env: map[string]string{"AUDIT_HMAC_KEY": hmacKey}})
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		browser := &http.Client{Jar: jar, Timeout: waitLong}
		resp, err := browser.Post(e.base+"/auth/token", "application/json", strings.NewReader(`{"token":"op"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("signing in with the operator token: %s", resp.Status)
		}
		var s web.SessionJSON
		if code := getJSON(t, browser, e.base, "/api/session", "", &s); code != http.StatusOK {
			t.Fatalf("GET /api/session = %d", code)
		}
		if code := postJSON(t, browser, e.base, "/auth/logout", s.CSRF, "", nil); code != http.StatusOK {
			t.Fatalf("signing out = %d", code)
		}
		e.waitIdle()
		count := map[string]int{}
		for _, ev := range recv.events() {
			count[ev.Action]++
		}
		if bad := recv.bad; len(bad) > 0 {
			t.Fatalf("deliveries that failed verification: %q", bad)
		}
		if count["sign_in"] != 1 || count["sign_out"] != 1 {
			t.Errorf("the webhook got %v; want one sign_in and one sign_out", count)
		}
	})
}
