package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// GET /api/audit is the operator's: the token is required when one is set,
// and the rows come back newest first with the page's cursor.
func TestAuditNeedsTheOperatorToken(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	clk := newClock()
	s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "s3cret-token"})
	conv, err := st.ConversationCreate(context.Background(), &store.ConversationCreateParams{Title: "t", Provider: "scripted", Model: "m", Now: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for i, call := range []string{"a", "b", "c"} {
		if err := st.AuditRecord(context.Background(), &store.AuditRecord{
			ConversationID: &conv.ID, CallID: call, Agent: "atlas", Action: "lookup", Decision: "auto",
			Outcome: store.AuditOK, DecidedBy: store.DecidedByPolicy, CreatedAt: clk.Now().Add(time.Duration(i) * time.Second),
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got, raw := s.call(t, http.MethodGet, "/api/audit", "", nil, nil); got != http.StatusUnauthorized {
		t.Fatalf("GET /api/audit without the token = %d %s; want 401", got, raw)
	}
	var page web.AuditPage
	got, raw := s.call(t, http.MethodGet, "/api/audit?limit=2", "", http.Header{"Authorization": {"Bearer s3cret-token"}}, &page)
	if got != http.StatusOK {
		t.Fatalf("GET /api/audit with the token = %d %s; want 200", got, raw)
	}
	if len(page.Records) != 2 || page.Records[0].CallID != "c" || page.Records[1].CallID != "b" || page.NextCursor == "" {
		t.Fatalf("first page = %s; want c, b and a cursor", raw)
	}
	cursor := page.NextCursor
	page = web.AuditPage{}
	got, raw = s.call(t, http.MethodGet, "/api/audit?limit=2&cursor="+url.QueryEscape(cursor), "", http.Header{"Authorization": {"Bearer s3cret-token"}}, &page)
	if got != http.StatusOK || len(page.Records) != 1 || page.Records[0].CallID != "a" || page.NextCursor != "" {
		t.Fatalf("second page = %d %s; want a alone and no cursor", got, raw)
	}
}

func TestParseAuditQuery(t *testing.T) {
	t.Parallel()
	conv := uuid.New()
	q, err := web.ParseAuditQuery(url.Values{
		"workspace": {"T1"}, "agent": {"atlas"}, "conversation": {conv.String()}, "tool": {"lookup"},
		"decision": {"confirm"}, "outcome": {"expired"}, "from": {"2026-01-02T00:00:00Z"}, "to": {"2026-01-03T00:00:00+01:00"},
		"limit": {"10"}, "cursor": {"abc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if q.Workspace != "T1" || q.Agent != "atlas" || q.Conversation == nil || *q.Conversation != conv || q.Tool != "lookup" ||
		q.Decision != "confirm" || q.Outcome != store.AuditExpired || q.Limit != 10 || q.Cursor != "abc" ||
		!q.From.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) || !q.To.Equal(time.Date(2026, 1, 2, 23, 0, 0, 0, time.UTC)) {
		t.Fatalf("parsed %+v; want every filter read", q)
	}
	for _, tc := range []struct{ query, names string }{
		{"outcome=done", "outcome"},
		{"conversation=C1", "conversation"},
		{"from=yesterday", "from"},
		{"to=2026-01-02", "to"},
		{"limit=0", "limit"},
		{"limit=201", "limit"},
	} {
		v, _ := url.ParseQuery(tc.query)
		if _, err := web.ParseAuditQuery(v); err == nil || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("ParseAuditQuery(%s) = %v; want an error naming %s", tc.query, err, tc.names)
		}
	}
}

// GET /api/audit/export is the operator's too: without the token 401;
// with it the range's rows as JSON lines, oldest first, in the sinks'
// shape; a bound that is no time is 400 naming it.
func TestAuditExportNeedsTheOperatorToken(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	clk := newClock()
	s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "s3cret-token"})
	conv, err := st.ConversationCreate(context.Background(), &store.ConversationCreateParams{Title: "t", Provider: "scripted", Model: "m", Now: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for i, call := range []string{"a", "b", "c"} {
		if err := st.AuditRecord(context.Background(), &store.AuditRecord{
			ConversationID: &conv.ID, CallID: call, Agent: "atlas", Actor: "agent:atlas", Action: "lookup", Decision: "auto",
			Outcome: store.AuditOK, DecidedBy: store.DecidedByPolicy, CreatedAt: clk.Now().Add(time.Duration(i) * time.Second),
		}); err != nil {
			t.Fatal(err)
		}
	}
	auth := http.Header{"Authorization": {"Bearer s3cret-token"}}
	if got, raw := s.call(t, http.MethodGet, "/api/audit/export", "", nil, nil); got != http.StatusUnauthorized {
		t.Fatalf("GET /api/audit/export without the token = %d %s; want 401", got, raw)
	}
	since := url.QueryEscape(clk.Now().Add(time.Second).Format(time.RFC3339))
	got, raw := s.call(t, http.MethodGet, "/api/audit/export?since="+since, "", auth, nil)
	lines := strings.Split(strings.TrimSpace(raw), "\n")
	if got != http.StatusOK || len(lines) != 2 || !strings.Contains(lines[0], `"call_id":"b"`) || !strings.Contains(lines[1], `"call_id":"c"`) ||
		!strings.Contains(lines[0], `"schema":"switchboard.audit.v1"`) {
		t.Fatalf("the export since b = %d\n%s\nwant b then c, one event a line", got, raw)
	}
	if got, raw := s.call(t, http.MethodGet, "/api/audit/export?since=soon", "", auth, nil); got != http.StatusBadRequest || !strings.Contains(raw, "since") {
		t.Fatalf("a bad since = %d %s; want 400 naming it", got, raw)
	}
	if got, raw := s.call(t, http.MethodGet, "/api/audit/export?workspace="+uuid.NewString(), "", auth, nil); got != http.StatusOK || raw != "" {
		t.Fatalf("the export of a workspace with no rows = %d %q; want 200 and nothing", got, raw)
	}
}
