package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

func TestStreamCatchesUpThenFollowsLive(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
		conv := s.create(t)
		if seq := s.post(t, conv, "first"); seq != 1 {
			t.Fatalf("first message got seq %d; want 1", seq)
		}
		waitStatus(t, st, conv, store.ConversationIdle)

		stream := s.openStream(t, conv, "")
		if ct := stream.header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("stream Content-Type = %q; want text/event-stream", ct)
		}
		ids, caught, _ := stream.readThrough(t, 2)
		if fmt.Sprint(ids) != "[1 2]" || kindsOf(caught) != "user,assistant" {
			t.Fatalf("catch-up from cursor 0 = ids %v kinds %s; want ids [1 2]: the user message and the reply", ids, kindsOf(caught))
		}

		// The stream is subscribed (its headers came after the subscription),
		// so this turn is seen live: deltas first, then the finished entry.
		if seq := s.post(t, conv, "second"); seq != 3 {
			t.Fatalf("second message got seq %d; want 3", seq)
		}
		ids, live, deltas := stream.readThrough(t, 4)
		if fmt.Sprint(ids) != "[3 4]" || kindsOf(live) != "user,assistant" {
			t.Fatalf("live entries = ids %v kinds %s; want ids [3 4]", ids, kindsOf(live))
		}
		reply := live[1].text(t)
		if len(deltas) < 2 || strings.Join(deltas, "") != reply {
			t.Fatalf("deltas %q before the reply %q; want the reply streamed as several deltas that add up to it", deltas, reply)
		}
		if !strings.Contains(reply, "second") {
			t.Fatalf("reply = %q; want the scripted echo of the second message", reply)
		}
		// Nothing of the reply trails it: the turn ends right after.
		for _, k := range stream.readTurnEnd(t) {
			if k == "delta" || k == "entry" {
				t.Fatalf("a %s event came after the final entry and before turn_end; want the reply's deltas ahead of it", k)
			}
		}
		sameEntries(t, append(caught, live...), s.entries(t, conv, ""))

		// ?cursor= resumes like Last-Event-ID.
		from2 := s.openStreamQuery(t, conv, "", "?cursor=2")
		if ids, _, _ := from2.readThrough(t, 4); fmt.Sprint(ids) != "[3 4]" {
			t.Fatalf("stream?cursor=2 sent ids %v; want [3 4]", ids)
		}
	})
}

// reopener opens a store handle on the same database each time it is
// called, as a restarted process would.
type reopener func(t *testing.T) store.Store

func reopeners(t *testing.T) map[string]func(t *testing.T) reopener {
	return map[string]func(t *testing.T) reopener{
		"sqlite": func(t *testing.T) reopener {
			path := testenv.SQLiteFile(t)
			return func(t *testing.T) store.Store {
				ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
				defer cancel()
				st, err := sqlite.Open(ctx, sqlite.Options{Path: path, Logger: testenv.Logger(t)})
				if err != nil {
					t.Fatalf("opening %s: %v", path, err)
				}
				t.Cleanup(func() { _ = st.Close() })
				if _, err := st.Migrate(ctx); err != nil {
					t.Fatalf("migrating %s: %v", path, err)
				}
				return st
			}
		},
		"postgres": func(t *testing.T) reopener {
			schema := testenv.PostgresSchema(t)
			return func(t *testing.T) store.Store { return testenv.Postgres(t, schema) }
		},
	}
}

func TestStreamResumesAfterRestart(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			open := reopeners(t)[name](t)
			clk := newClock()
			script := writeScript(t, echoScript)

			st1 := open(t)
			first := start(t, st1, clk, script, web.Options{})
			conv := first.create(t)
			for _, text := range []string{"one", "two"} {
				first.post(t, conv, text)
				waitStatus(t, st1, conv, store.ConversationIdle)
			}
			stream := first.openStream(t, conv, "")
			ids, _, _ := stream.readThrough(t, 2)
			lastID := ids[len(ids)-1]

			// The process goes away: streams cut, worker stopped, store closed.
			first.stop()
			stream.close()
			if err := st1.Close(); err != nil {
				t.Fatalf("closing the first store: %v", err)
			}

			st2 := open(t)
			second := start(t, st2, clk, script, web.Options{})
			for _, text := range []string{"three", "four"} {
				second.post(t, conv, text)
				waitStatus(t, st2, conv, store.ConversationIdle)
			}
			resumed := second.openStream(t, conv, lastID)
			ids, missed, _ := resumed.readThrough(t, 8)
			if want := fmt.Sprint(span(3, 8)); fmt.Sprint(ids) != want || fmt.Sprint(seqsOf(missed)) != want {
				t.Fatalf("after Last-Event-ID %s the stream sent ids %v (seqs %v); want exactly %s, no gap, no repeat", lastID, ids, seqsOf(missed), want)
			}
			sameEntries(t, missed, s2entriesAfter(t, second, conv, 2))

			// Nothing else was queued in the stream: the next event is the next
			// message.
			second.post(t, conv, "five")
			ids, _, _ = resumed.readThrough(t, 10)
			if fmt.Sprint(ids) != "[9 10]" {
				t.Fatalf("after the catch-up the stream sent ids %v; want [9 10]", ids)
			}
		})
	}
}

func s2entriesAfter(t *testing.T, s *server, conv uuid.UUID, after int64) []entryOut {
	t.Helper()
	var out []entryOut
	for _, e := range s.entries(t, conv, "") {
		if e.Seq != nil && *e.Seq > after {
			out = append(out, e)
		}
	}
	return out
}

func TestForkEditsAnEarlierMessage(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
		parent := s.create(t)
		for _, text := range []string{"one", "two"} {
			s.post(t, parent, text)
			waitStatus(t, st, parent, store.ConversationIdle)
		}
		before := s.entries(t, parent, "")

		var forked struct {
			ConversationID uuid.UUID `json:"conversation_id"`
			ParentID       uuid.UUID `json:"parent_id"`
			Forked         bool      `json:"forked"`
			Seq            int64     `json:"seq"`
		}
		s.mustCall(t, http.MethodPost, "/api/conversations/"+parent.String()+"/fork", `{"seq": 3, "content": "two, edited"}`, http.StatusCreated, &forked)
		if !forked.Forked || forked.ConversationID == uuid.Nil || forked.ConversationID == parent || forked.Seq != 3 || forked.ParentID != parent {
			t.Fatalf("fork answer = %+v; want a new conversation, forked, the edit at seq 3", forked)
		}
		child := forked.ConversationID

		p := s.get(t, parent)
		if !slices.Contains(p.Forks, child.String()) || p.ChildCount != 1 {
			t.Fatalf("parent forks = %v, child_count %d; want the new fork listed", p.Forks, p.ChildCount)
		}
		c := s.get(t, child)
		if c.ParentID == nil || *c.ParentID != parent || c.ForkSeq == nil || *c.ForkSeq != 3 || c.RootID != parent {
			t.Fatalf("fork = %+v; want parent_id %s, fork_seq 3, root %s", c, parent, parent)
		}

		waitStatus(t, st, child, store.ConversationIdle)
		got := s.entries(t, child, "")
		if fmt.Sprint(seqsOf(got)) != "[1 2 3 4]" || kindsOf(got) != "user,assistant,user,assistant" {
			t.Fatalf("fork log = seqs %v kinds %s; want the parent's two entries, the edit and a reply", seqsOf(got), kindsOf(got))
		}
		for i := range 2 {
			if got[i].Kind != before[i].Kind || got[i].Author != before[i].Author || string(compact(t, got[i].Content)) != string(compact(t, before[i].Content)) {
				t.Fatalf("fork entry %d = %+v; want a copy of the parent's %+v", i+1, got[i], before[i])
			}
		}
		if got[2].text(t) != "two, edited" || !strings.Contains(got[3].text(t), "two, edited") {
			t.Fatalf("fork seq 3 = %q, seq 4 = %q; want the edit and the turn's answer to it", got[2].text(t), got[3].text(t))
		}
		after := s.entries(t, parent, "")
		sameEntries(t, after, before)
	})
}

func TestEntriesAtSeqIsTheLogAsItWas(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
		conv := s.create(t)
		for _, text := range []string{"one", "two", "three"} {
			s.post(t, conv, text)
			waitStatus(t, st, conv, store.ConversationIdle)
		}
		all := s.entries(t, conv, "")
		if fmt.Sprint(seqsOf(all)) != fmt.Sprint(span(1, 6)) {
			t.Fatalf("log = seqs %v; want 1..6", seqsOf(all))
		}
		for n := int64(1); n <= 7; n++ {
			got := s.entries(t, conv, fmt.Sprintf("?at=%d", n))
			want := span(1, min(n, 6))
			if fmt.Sprint(seqsOf(got)) != fmt.Sprint(want) || len(got) != len(want) {
				t.Fatalf("entries?at=%d = seqs %v (%d entries); want exactly %v", n, seqsOf(got), len(got), want)
			}
			sameEntries(t, got, all[:len(want)])
		}
	})
}

func TestToolResultsResumeAPausedTurn(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := start(t, st, newClock(), writeScript(t, askScript), web.Options{})
		conv := s.create(t)
		s.post(t, conv, "ask me")
		waitStatus(t, st, conv, store.ConversationPaused)

		c := s.get(t, conv)
		if len(c.PendingCalls) != 1 || c.PendingCalls[0].Name != "ask_user" || c.PendingCalls[0].WaitingFor != "client" {
			t.Fatalf("pending_calls = %+v; want one ask_user call waiting for the client (a frontend tool in the api context)", c.PendingCalls)
		}
		call := c.PendingCalls[0]
		var in struct {
			Question string   `json:"question"`
			Choices  []string `json:"choices"`
		}
		if err := json.Unmarshal(call.Input, &in); err != nil || in.Question != "Which colour?" || len(in.Choices) != 2 {
			t.Fatalf("pending call input = %s (%v); want the question and its choices for the client to show", call.Input, err)
		}
		before := s.entries(t, conv, "")
		path := "/api/conversations/" + conv.String() + "/tool-results"

		refused := []struct{ name, body string }{
			{"unknown call", `{"results": [{"call_id": "nope", "output": {"answer": "Blue"}}]}`},
			{"pending call twice in one post", fmt.Sprintf(`{"results": [{"call_id": %q, "output": {"answer": "Blue"}}, {"call_id": %q, "output": {"answer": "Green"}}]}`, call.CallID, call.CallID)},
			{"pending and unknown", fmt.Sprintf(`{"results": [{"call_id": %q, "output": {"answer": "Blue"}}, {"call_id": "nope", "output": {}}]}`, call.CallID)},
		}
		for _, tc := range refused {
			if code, raw := s.call(t, http.MethodPost, path, tc.body, nil, nil); code != http.StatusConflict || !strings.Contains(raw, "not pending") {
				t.Fatalf("%s: tool-results = %d %s; want 409 saying the call is not pending", tc.name, code, raw)
			}
			sameEntries(t, s.entries(t, conv, ""), before)
		}

		var accepted struct {
			Seq int64 `json:"seq"`
		}
		s.mustCall(t, http.MethodPost, path, fmt.Sprintf(`{"results": [{"call_id": %q, "output": {"answer": "Blue"}}]}`, call.CallID), http.StatusAccepted, &accepted)
		if accepted.Seq != before[len(before)-1].seqValue()+1 {
			t.Fatalf("accepted result at seq %d; want the next seq after %d", accepted.Seq, before[len(before)-1].seqValue())
		}
		waitStatus(t, st, conv, store.ConversationIdle)
		es := s.entries(t, conv, "")
		last := es[len(es)-1]
		if last.Kind != "assistant" || !strings.Contains(last.text(t), "Blue") {
			t.Fatalf("log = %s, last %s; want the resumed turn's reply using the answer Blue", kindsOf(es), last.Content)
		}
		if c := s.get(t, conv); len(c.PendingCalls) != 0 || c.Status != "idle" {
			t.Fatalf("after the answer: status %s, pending_calls %+v; want idle with nothing pending", c.Status, c.PendingCalls)
		}
		if code, raw := s.call(t, http.MethodPost, path, fmt.Sprintf(`{"results": [{"call_id": %q, "output": {"answer": "Green"}}]}`, call.CallID), nil, nil); code != http.StatusConflict {
			t.Fatalf("a second result for an answered call = %d %s; want 409", code, raw)
		}
	})
}

// TestToolResultsCannotAnswerForAPerson: a call that waits for a person's
// confirmation is settled only by that person's click on the platform. A
// result posted through the API is refused, leaves the approval pending and
// the log as it was, and the tool does not run.
func TestToolResultsCannotAnswerForAPerson(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		var ran atomic.Int32
		register := func(r *tool.Registry) {
			tool.MustRegister(r, tool.Def{Name: "delete_everything", Description: "risky", Risk: tool.RiskHigh},
				func(ctx context.Context, _ *tool.Request, in struct {
					Target string `json:"target"`
				}) (map[string]string, error) {
					ran.Add(1)
					return map[string]string{"deleted": in.Target}, nil
				})
		}
		s := startWith(t, st, newClock(), writeScript(t, `
turns:
  - after_tool: delete_everything
    text: "Done."
  - tool_calls:
      - {name: delete_everything, input: {target: prod}}
`), web.Options{}, register)
		conv := s.create(t)
		s.post(t, conv, "clean up")
		waitStatus(t, st, conv, store.ConversationPaused)
		c := s.get(t, conv)
		if len(c.PendingCalls) != 1 || c.PendingCalls[0].WaitingFor != "person" {
			t.Fatalf("pending_calls = %+v; want the risky call waiting for a person", c.PendingCalls)
		}
		call := c.PendingCalls[0].CallID
		before := s.entries(t, conv, "")
		path := "/api/conversations/" + conv.String() + "/tool-results"
		cases := []struct{ name, body string }{
			{"an approval", fmt.Sprintf(`{"results": [{"call_id": %q, "output": {"value": "approve"}}]}`, call)},
			{"a made-up result", fmt.Sprintf(`{"results": [{"call_id": %q, "output": {"deleted": "prod"}}]}`, call)},
			{"an error result", fmt.Sprintf(`{"results": [{"call_id": %q, "output": {"error": "no"}, "is_error": true}]}`, call)},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				hdr := http.Header{"X-Switchboard-User": {"U-the-approver"}}
				if code, raw := s.call(t, http.MethodPost, path, tc.body, hdr, nil); code != http.StatusForbidden || !strings.Contains(raw, "person") {
					t.Fatalf("tool-results with %s = %d %s; want 403 saying the call waits for a person", tc.name, code, raw)
				}
				ap, err := st.ApprovalFindByCall(context.Background(), &store.ApprovalFindByCallParams{ConversationID: conv, CallID: call})
				if err != nil || ap.Status != store.ApprovalPending || ap.DecidedBy != "" {
					t.Fatalf("approval after the refused result = %+v, %v; want it still pending, decided by nobody", ap, err)
				}
				sameEntries(t, s.entries(t, conv, ""), before)
			})
		}
		if n := ran.Load(); n != 0 {
			t.Fatalf("the risky tool ran %d times; want never, nobody approved it", n)
		}
		if c := s.get(t, conv); c.Status != "paused" || len(c.PendingCalls) != 1 {
			t.Fatalf("after the refused results: status %s, pending %+v; want still paused on the call", c.Status, c.PendingCalls)
		}
	})
}

func (e entryOut) seqValue() int64 {
	if e.Seq == nil {
		return 0
	}
	return *e.Seq
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{Token: "s3cret-token"})
	cases := []struct {
		name   string
		header string
		want   int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"wrong token", "Bearer nope", http.StatusUnauthorized},
		{"token as a prefix", "Bearer s3cret", http.StatusUnauthorized},
		{"not a bearer", "Basic s3cret-token", http.StatusUnauthorized},
		{"lower-case scheme", "bearer s3cret-token", http.StatusCreated},
		{"right token", "Bearer s3cret-token", http.StatusCreated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := http.Header{}
			if tc.header != "" {
				hdr.Set("Authorization", tc.header)
			}
			code, raw := s.call(t, http.MethodPost, "/api/conversations", "", hdr, nil)
			if code != tc.want {
				t.Fatalf("POST /api/conversations with Authorization %q = %d %s; want %d", tc.header, code, raw, tc.want)
			}
			if tc.want == http.StatusUnauthorized && !strings.Contains(raw, "Bearer") {
				t.Fatalf("401 body %s; want it to say a Bearer token is required", raw)
			}
		})
	}
}

func TestWithoutTokenOnlyDirectLoopbackIsServed(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
	mux := http.NewServeMux()
	s.api.Routes(mux)
	cases := []struct {
		name   string
		remote string
		host   string
		hdr    map[string]string
		want   int
		says   string
	}{
		{"another host", "192.0.2.1:1234", "localhost:8080", nil, http.StatusForbidden, "loopback"},
		{"private network", "10.0.0.7:80", "localhost:8080", nil, http.StatusForbidden, "loopback"},
		{"another host over IPv6", "[2001:db8::1]:443", "localhost:8080", nil, http.StatusForbidden, "loopback"},
		{"loopback", "127.0.0.1:5555", "localhost:8080", nil, http.StatusCreated, ""},
		{"loopback by address", "127.0.0.1:5555", "127.0.0.1:8080", nil, http.StatusCreated, ""},
		{"IPv6 loopback", "[::1]:5555", "[::1]:8080", nil, http.StatusCreated, ""},
		{"loopback through a proxy (Forwarded)", "127.0.0.1:5555", "localhost:8080", map[string]string{"Forwarded": "for=192.0.2.60"}, http.StatusForbidden, "Forwarded"},
		{"loopback through a proxy (X-Forwarded-For)", "127.0.0.1:5555", "localhost:8080", map[string]string{"X-Forwarded-For": "192.0.2.60"}, http.StatusForbidden, "X-Forwarded-For"},
		{"loopback through a proxy (X-Real-IP)", "[::1]:5555", "localhost:8080", map[string]string{"X-Real-IP": "192.0.2.60"}, http.StatusForbidden, "proxy"},
		{"loopback with an empty proxy header", "127.0.0.1:5555", "localhost:8080", map[string]string{"X-Forwarded-For": ""}, http.StatusForbidden, "proxy"},
		{"loopback through a proxy (Via)", "127.0.0.1:5555", "localhost:8080", map[string]string{"Via": "1.1 nginx"}, http.StatusForbidden, "Via"},
		{"loopback through a proxy (X-Forwarded-Host)", "127.0.0.1:5555", "localhost:8080", map[string]string{"X-Forwarded-Host": "sb.example.com"}, http.StatusForbidden, "X-Forwarded-Host"},
		{"loopback through a CDN (CF-Connecting-IP)", "127.0.0.1:5555", "localhost:8080", map[string]string{"CF-Connecting-IP": "192.0.2.60"}, http.StatusForbidden, "proxy"},
		// A page whose name was rebound to 127.0.0.1 reaches us from
		// loopback, same-origin, with its own name as Host.
		{"rebound name", "127.0.0.1:5555", "evil.example:8080", nil, http.StatusForbidden, "not a loopback name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/api/conversations", nil)
			req.RemoteAddr = tc.remote
			req.Host = tc.host
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.says) {
				t.Fatalf("request from %s to Host %s with %v = %d %s; want %d saying %q", tc.remote, tc.host, tc.hdr, rec.Code, rec.Body, tc.want, tc.says)
			}
		})
	}
}

// TestOtherSitesAreRefused is a page on another site making the browser post
// to the API on localhost: whatever its body type, nothing is stored and no
// turn runs.
func TestOtherSitesAreRefused(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
		conv := s.create(t)
		msgs := "/api/conversations/" + conv.String() + "/messages"
		self := s.http.URL // the API's own origin
		hdr := func(kv ...string) http.Header {
			h := http.Header{}
			for i := 0; i < len(kv); i += 2 {
				h.Set(kv[i], kv[i+1])
			}
			return h
		}
		cases := []struct {
			name   string
			method string
			path   string
			body   string
			hdr    http.Header
			want   int
			says   string
		}{
			{"cross-origin text/plain", "POST", msgs, `{"text":"hi"}`, hdr("Origin", "https://evil.example", "Content-Type", "text/plain"), 403, "https://evil.example"},
			{"cross-origin JSON", "POST", msgs, `{"text":"hi"}`, hdr("Origin", "https://evil.example"), 403, "SWITCHBOARD_ALLOWED_ORIGINS"},
			{"cross-origin form", "POST", msgs, `text=hi`, hdr("Origin", "http://evil.example", "Content-Type", "application/x-www-form-urlencoded"), 403, "cross-site"},
			{"another port of localhost", "POST", msgs, `{"text":"hi"}`, hdr("Origin", "http://localhost:3000"), 403, "cross-site"},
			{"opaque origin", "POST", msgs, `{"text":"hi"}`, hdr("Origin", "null"), 403, "cross-site"},
			{"cross-site without Origin", "POST", msgs, `{"text":"hi"}`, hdr("Sec-Fetch-Site", "cross-site"), 403, "cross-site"},
			{"same-site", "POST", msgs, `{"text":"hi"}`, hdr("Sec-Fetch-Site", "same-site", "Origin", "http://app.localhost:8080"), 403, "cross-site"},
			{"cross-origin create", "POST", "/api/conversations", "", hdr("Origin", "https://evil.example"), 403, "cross-site"},
			{"cross-origin read", "GET", "/api/conversations/" + conv.String(), "", hdr("Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"), 403, "cross-site"},
			{"cross-origin preflight", "OPTIONS", msgs, "", hdr("Origin", "https://evil.example", "Access-Control-Request-Method", "POST"), 403, "cross-site"},
			{"text/plain", "POST", msgs, `{"text":"hi"}`, hdr("Content-Type", "text/plain"), 415, "application/json"},
			{"no Content-Type", "POST", msgs, `{"text":"hi"}`, hdr("Content-Type", ""), 415, "application/json"},
			{"empty create without Content-Type", "POST", "/api/conversations", "", hdr("Content-Type", ""), 415, "even with an empty body"},
			{"same-origin read", "GET", "/api/conversations/" + conv.String(), "", hdr("Origin", self, "Sec-Fetch-Site", "same-origin"), 200, ""},
			{"typed URL", "GET", "/api/conversations/" + conv.String(), "", hdr("Sec-Fetch-Site", "none"), 200, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				code, raw := s.call(t, tc.method, tc.path, tc.body, tc.hdr, nil)
				if code != tc.want || !strings.Contains(raw, tc.says) {
					t.Fatalf("%s %s with %v = %d %s; want %d saying %q", tc.method, tc.path, tc.hdr, code, raw, tc.want, tc.says)
				}
			})
		}
		if got := s.entries(t, conv, ""); len(got) != 0 {
			t.Fatalf("after the refused requests the log has %s; want nothing stored", kindsOf(got))
		}
		if items, err := st.WorkList(context.Background(), &store.WorkListParams{ConversationID: &conv}); err != nil || len(items) != 0 {
			t.Fatalf("work queued for the conversation = %d (%v); want no turn", len(items), err)
		}

		// The API's own page posts with its own origin.
		var ok struct {
			Seq int64 `json:"seq"`
		}
		if code, raw := s.call(t, http.MethodPost, msgs, `{"text":"from our own page"}`, hdr("Origin", self, "Sec-Fetch-Site", "same-origin"), &ok); code != http.StatusAccepted || ok.Seq != 1 {
			t.Fatalf("same-origin message = %d %s; want 202 at seq 1", code, raw)
		}
	})
}

func TestAllowedOriginGetsCORS(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		const app = "https://app.example.com"
		s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{
			Token: "s3cret-token", AllowedOrigins: []string{"https://APP.example.com:443"},
		})
		bearer := "Bearer s3cret-token"

		// The preflight carries no token and is answered.
		code, raw, h := s.do(t, http.MethodOptions, "/api/conversations", "", http.Header{
			"Origin": {app}, "Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"authorization,content-type"},
		})
		if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != app ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization") ||
			!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "content-type") ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
			t.Fatalf("preflight from %s = %d %s %v; want 204 allowing POST with Authorization and Content-Type", app, code, raw, h)
		}

		cases := []struct {
			name   string
			origin string
			site   string
			auth   string
			want   int
		}{
			{"allowed origin with the token", app, "cross-site", bearer, http.StatusCreated},
			{"allowed origin, same site", app, "same-site", bearer, http.StatusCreated},
			{"allowed origin without the token", app, "cross-site", "", http.StatusUnauthorized},
			{"another origin with the token", "https://evil.example", "cross-site", bearer, http.StatusForbidden},
			{"a look-alike of the allowed origin", "https://app.example.com.evil.example", "cross-site", bearer, http.StatusForbidden},
			{"the allowed host over http", "http://app.example.com", "cross-site", bearer, http.StatusForbidden},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				hdr := http.Header{"Origin": {tc.origin}, "Sec-Fetch-Site": {tc.site}, "Content-Type": {"application/json"}}
				if tc.auth != "" {
					hdr.Set("Authorization", tc.auth)
				}
				code, raw, h := s.do(t, http.MethodPost, "/api/conversations", "", hdr)
				if code != tc.want {
					t.Fatalf("POST from %s = %d %s; want %d", tc.origin, code, raw, tc.want)
				}
				// An allowed page can read the answer, a refusal included;
				// no other origin is told anything.
				wantACAO := ""
				if tc.origin == app {
					wantACAO = app
				}
				if got := h.Get("Access-Control-Allow-Origin"); got != wantACAO {
					t.Fatalf("Access-Control-Allow-Origin = %q; want %q", got, wantACAO)
				}
			})
		}
	})
}

// do is call returning the answer's headers too.
func (s *server) do(t *testing.T, method, path, body string, hdr http.Header) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.http.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := s.http.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw), resp.Header
}

func TestNewRefusesMalformedOrigins(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
	for _, o := range []string{"*", "app.example.com", "https://app.example.com/path", "ftp://app.example.com", "https://", "null", "https://user@app.example.com"} {
		if _, err := web.New(web.Options{Service: s.svc, AllowedOrigins: []string{o}}); err == nil || !strings.Contains(err.Error(), "AllowedOrigins") {
			t.Fatalf("web.New with allowed origin %q: %v; want an error naming AllowedOrigins", o, err)
		}
	}
	got, err := web.ParseOrigins(" https://A.example:443 , http://b.example:8080,,")
	if err != nil || fmt.Sprint(got) != "[https://a.example http://b.example:8080]" {
		t.Fatalf("ParseOrigins = %v, %v; want the two origins as browsers send them", got, err)
	}
}

// TestCallerComesFromAuthentication checks that no header names the caller:
// the log records the principal the request authenticated as.
func TestCallerComesFromAuthentication(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		cases := []struct {
			name  string
			token string
			want  string
		}{
			{"loopback without a token", "", "user:local"},
			{"operator token", "s3cret-token", "user:operator"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				st := open(t)
				s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{Token: tc.token})
				hdr := http.Header{"X-Switchboard-User": {"U-the-approver"}}
				if tc.token != "" {
					hdr.Set("Authorization", "Bearer "+tc.token)
				}
				var c conversationOut
				if code, raw := s.call(t, http.MethodPost, "/api/conversations", "", hdr, &c); code != http.StatusCreated {
					t.Fatalf("create = %d %s", code, raw)
				}
				if code, raw := s.call(t, http.MethodPost, "/api/conversations/"+c.ID.String()+"/messages", `{"text":"who am I"}`, hdr, nil); code != http.StatusAccepted {
					t.Fatalf("message = %d %s", code, raw)
				}
				es, err := st.EntryList(context.Background(), &store.EntryListParams{ConversationID: c.ID})
				if err != nil || len(es) == 0 {
					t.Fatalf("log = %v, %v; want the message", es, err)
				}
				if string(es[0].Author) != tc.want || strings.Contains(string(es[0].Content), "U-the-approver") {
					t.Fatalf("message author %q content %s; want %q and no trace of the X-Switchboard-User header", es[0].Author, es[0].Content, tc.want)
				}
			})
		}
	})
}

func TestRequireToken(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	cases := []struct {
		name, token, header, remote, proxy string
		want                               int
	}{
		{"token set, none sent", "t0ken", "", "", "", http.StatusUnauthorized},
		{"token set, wrong one", "t0ken", "Bearer nope", "", "", http.StatusUnauthorized},
		{"token set, right one", "t0ken", "Bearer t0ken", "", "", http.StatusOK},
		{"no token set, another host", "", "", "192.0.2.1:1234", "", http.StatusForbidden},
		{"no token set, loopback", "", "", "127.0.0.1:5555", "", http.StatusOK},
		{"no token set, loopback through a proxy", "", "", "127.0.0.1:5555", "Via", http.StatusForbidden},
		{"no token set, loopback through a forwarder", "", "", "[::1]:5555", "X-Forwarded-Proto", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if tc.remote != "" {
				req.RemoteAddr, req.Host = tc.remote, "localhost:8080"
			}
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			if tc.proxy != "" {
				req.Header.Set(tc.proxy, "x")
			}
			rec := httptest.NewRecorder()
			web.RequireToken(tc.token, ok).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("GET /metrics from %s with Authorization %q and %q = %d; want %d", req.RemoteAddr, tc.header, tc.proxy, rec.Code, tc.want)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
		conv := s.create(t)
		s.post(t, conv, "hello")
		waitStatus(t, st, conv, store.ConversationIdle)
		c := "/api/conversations/" + conv.String()
		nobody := "/api/conversations/" + uuid.NewString()
		cases := []struct {
			name         string
			method, path string
			body         string
			hdr          http.Header
			want         int
			says         string
		}{
			{"id not a uuid", "GET", "/api/conversations/not-a-uuid", "", nil, 400, `conversation id \"not-a-uuid\" is not a UUID`},
			{"id not a uuid on post", "POST", "/api/conversations/123/messages", `{"text":"hi"}`, nil, 400, "is not a UUID"},
			{"truncated json", "POST", c + "/messages", `{"text":`, nil, 400, "request body"},
			{"not json", "POST", c + "/messages", `text=hi`, nil, 400, "request body"},
			{"unknown field", "POST", c + "/messages", `{"txt":"hi"}`, nil, 400, `unknown field \"txt\"`},
			{"wrong type", "POST", c + "/messages", `{"text": 5}`, nil, 400, "request body"},
			{"trailing data", "POST", c + "/messages", `{"text":"a"} {"text":"b"}`, nil, 400, "unexpected data"},
			{"no body", "POST", c + "/messages", "", nil, 400, "request body is empty"},
			{"body too large", "POST", c + "/messages", `{"text":"` + strings.Repeat("a", 1<<20) + `"}`, nil, 413, "larger than"},
			{"trailing garbage", "POST", c + "/messages", `{"text":"a"}x`, nil, 400, "unexpected data"},
			{"empty text", "POST", c + "/messages", `{"text":"  "}`, nil, 400, "empty"},
			{"unknown agent", "POST", "/api/conversations", `{"agent":"nobody"}`, nil, 400, `no agent named \"nobody\"`},
			{"unknown field on create", "POST", "/api/conversations", `{"agnet":"atlas"}`, nil, 400, "unknown field"},
			{"no results", "POST", c + "/tool-results", `{"results": []}`, nil, 400, "no results"},
			{"fork at seq 0", "POST", c + "/fork", `{"seq": 0, "content": "x"}`, nil, 400, "seq must be at least 1"},
			{"fork past the end", "POST", c + "/fork", `{"seq": 9, "content": "x"}`, nil, 400, "past the end"},
			{"fork with no content", "POST", c + "/fork", `{"seq": 1, "content": ""}`, nil, 400, "content is empty"},
			{"at=0", "GET", c + "/entries?at=0", "", nil, 400, "at="},
			{"at not a number", "GET", c + "/entries?at=x", "", nil, 400, "at="},
			{"negative cursor", "GET", c + "/stream?cursor=-1", "", nil, 400, "cursor"},
			{"bad Last-Event-ID", "GET", c + "/stream", "", http.Header{"Last-Event-Id": {"abc"}}, 400, "cursor"},
			{"negative tail", "GET", c + "/stream?tail=-1", "", nil, 400, "tail="},
			{"tail not a number", "GET", c + "/stream?tail=ten", "", nil, 400, "tail="},
			{"empty tail", "GET", c + "/stream?tail=", "", nil, 400, "tail="},
			{"tail past the most", "GET", c + "/stream?tail=10001", "", nil, 400, "tail="},
			{"unknown conversation", "GET", nobody, "", nil, 404, "not found"},
			{"message to unknown conversation", "POST", nobody + "/messages", `{"text":"hi"}`, nil, 404, "not found"},
			{"entries of unknown conversation", "GET", nobody + "/entries", "", nil, 404, "not found"},
			{"stream of unknown conversation", "GET", nobody + "/stream", "", nil, 404, "not found"},
			{"fork of unknown conversation", "POST", nobody + "/fork", `{"seq": 1, "content": "x"}`, nil, 404, "not found"},
			{"results for unknown conversation", "POST", nobody + "/tool-results", `{"results": [{"call_id": "c1", "output": {}}]}`, nil, 404, "not found"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				code, raw := s.call(t, tc.method, tc.path, tc.body, tc.hdr, nil)
				if code != tc.want || !strings.Contains(raw, tc.says) {
					t.Fatalf("%s %s %s = %d %s; want %d saying %q", tc.method, tc.path, tc.body, code, raw, tc.want, tc.says)
				}
				var e struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal([]byte(raw), &e); err != nil || e.Error == "" {
					t.Fatalf("error body %q; want JSON {\"error\": ...}", raw)
				}
			})
		}
		if got := s.entries(t, conv, ""); fmt.Sprint(seqsOf(got)) != "[1 2]" {
			t.Fatalf("after the bad requests the log has seqs %v; want [1 2] unchanged", seqsOf(got))
		}
	})
}

// TestStreamEndsWithTheRequest checks that a client going away ends the
// handler (goleak in TestMain catches a stream left running).
func TestStreamEndsWithTheRequest(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{KeepAlive: 10 * time.Millisecond})
	conv := s.create(t)
	stream := s.openStream(t, conv, "")
	stream.close()
	s.post(t, conv, "after the client left")
	waitStatus(t, st, conv, store.ConversationIdle)
}

func TestStreamSendsErrorsWithoutAnID(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := start(t, st, newClock(), writeScript(t, `
turns:
  - when_last_user_contains: boom
    once: true
    failure: {status: 400, message: "the request was malformed"}
fallback:
  text: "echo: {{last_user}}"
`), web.Options{})
		conv := s.create(t)
		s.post(t, conv, "boom")
		waitStatus(t, st, conv, store.ConversationIdle)

		stream := s.openStream(t, conv, "")
		var got []sseEvent
		for len(got) < 2 {
			if ev := stream.next(t, "the user entry and the error"); ev.Event == "entry" || ev.Event == "error" {
				got = append(got, ev)
			}
		}
		if got[0].Event != "entry" || got[0].ID != "1" || got[1].Event != "error" || got[1].ID != "" ||
			!strings.Contains(got[1].Data, "The model provider rejected the request (400)") || strings.Contains(got[1].Data, "malformed") || !strings.Contains(got[1].Data, `"after_seq":1`) {
			t.Fatalf("stream = %+v; want entry 1, then the model error as an error event with no id and after_seq 1", got)
		}
		s.post(t, conv, "again")
		ids, es, _ := stream.readThrough(t, 3)
		if fmt.Sprint(ids) != "[2 3]" || kindsOf(es) != "user,assistant" {
			t.Fatalf("after the error the stream sent ids %v kinds %s; want [2 3] and the error not repeated", ids, kindsOf(es))
		}
	})
}

// TestStreamCatchUpOfALongLog: a catch-up longer than the stream reads at
// once (a page of seqs) sends every entry once, in order, with each error
// entry right after the entry it followed, also where it sits on the
// boundary of two reads; a reconnect at a boundary starts with the errors
// that follow the entry it last saw.
func TestStreamCatchUpOfALongLog(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
		conv := s.create(t)
		const n = 2500
		errorsAfter := map[int64]int{1000: 2, 2000: 1, n: 1}
		want := fillLog(t, st, conv, n, errorsAfter) // "seq" for an entry, "!seq" for an error after it
		read := func(stream *sseStream, count int) []string {
			t.Helper()
			var got []string
			for len(got) < count {
				ev := stream.next(t, fmt.Sprintf("event %d of %d", len(got)+1, count))
				var e entryOut
				if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
					t.Fatalf("decoding %s event %q: %v", ev.Event, ev.Data, err)
				}
				switch {
				case ev.Event == "entry" && e.Seq != nil && ev.ID == fmt.Sprint(*e.Seq):
					got = append(got, ev.ID)
				case ev.Event == "error" && e.AfterSeq != nil && ev.ID == "":
					got = append(got, fmt.Sprintf("!%d", *e.AfterSeq))
				default:
					t.Fatalf("event %s id %q data %s; want entry events with their seq as id and error events without one", ev.Event, ev.ID, ev.Data)
				}
			}
			return got
		}
		if got := read(s.openStream(t, conv, ""), len(want)); !slices.Equal(got, want) {
			t.Fatalf("catch-up from 0 sent %d events that differ from the log's %d at %d", len(got), len(want), firstDiff(got, want))
		}
		from := slices.Index(want, "1000") + 1
		if got := read(s.openStream(t, conv, "1000"), len(want)-from); !slices.Equal(got, want[from:]) {
			t.Fatalf("catch-up from 1000 starts %v; want %v", got[:4], want[from:from+4])
		}
	})
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
