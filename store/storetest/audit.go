package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// The audit: one row per call whose outcome is kept up to date, and a
// filtered list read newest first in pages.

func (s suite) auditTests() []namedTest {
	return []namedTest{
		{"OneRowPerCall", s.testAuditOneRowPerCall},
		{"Settle", s.testAuditSettle},
		{"Filters", s.testAuditFilters},
		{"PagesNewestFirst", s.testAuditPaging},
		{"TraceAndGet", s.testAuditTraceAndGet},
		{"ScanOldestFirst", s.testAuditScan},
	}
}

func auditRow(conv *uuid.UUID, call, agent, tool, decision string, outcome store.AuditOutcome, at time.Time) *store.AuditRecord {
	return &store.AuditRecord{
		ConversationID: conv, CallID: call, Agent: agent, Actor: "agent:" + agent, Action: tool, Risk: "low",
		Decision: decision, Outcome: outcome, DecidedBy: store.DecidedByPolicy, CreatedAt: at,
	}
}

func (s suite) testAuditOneRowPerCall(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)

	t0 := clk.Advance(time.Second)
	first := auditRow(&c.ID, "call-1", "helper", "send_email", "confirm", store.AuditPending, t0)
	first.Risk, first.DecidedBy, first.Detail = "high", "", json.RawMessage(`{"to": "a@b.c"}`)
	noErr(t, st.AuditRecord(ctx, first), "recording a pending call")
	isTrue(t, first.ID != uuid.Nil, "a recorded row must get an id")

	t1 := clk.Advance(time.Minute)
	// The resumed turn records the outcome of the same call without the
	// guard's decision: the row keeps it.
	again := auditRow(&c.ID, "call-1", "helper", "send_email", "", store.AuditOK, t1)
	again.Risk, again.DecidedBy = "", "user:U1"
	noErr(t, st.AuditRecord(ctx, again), "recording the call's outcome")

	// A record that names nobody keeps who decided.
	t1 = clk.Advance(time.Second)
	third := auditRow(&c.ID, "call-1", "helper", "send_email", "", store.AuditOK, t1)
	third.Risk, third.DecidedBy = "", ""
	noErr(t, st.AuditRecord(ctx, third), "recording the call's outcome again, naming nobody")

	got, err := st.AuditList(ctx, &store.AuditListParams{ConversationID: &c.ID})
	noErr(t, err, "listing the conversation's audit")
	eq(t, len(got), 1, "rows for one call recorded three times")
	g := got[0]
	eq(t, g.ID, first.ID, "the row's id (the first record's)")
	eq(t, g.CallID, "call-1", "call id")
	eq(t, g.Agent, "helper", "agent")
	eq(t, g.Actor, "agent:helper", "actor")
	eq(t, g.Action, "send_email", "tool")
	eq(t, g.Risk, "high", "risk (kept when the later record gives none)")
	eq(t, g.Decision, "confirm", "decision (kept when the later record gives none)")
	eq(t, g.Outcome, store.AuditOK, "outcome (the later record's)")
	eq(t, g.DecidedBy, "user:U1", "decided by (the second record's, kept by the third)")
	jsonEq(t, g.Detail, json.RawMessage(`{}`), "detail (replaced by the later record's empty one)")
	timeEq(t, g.CreatedAt, t0, "created at (when the call was made)")
	timeEq(t, g.UpdatedAt, t1, "updated at (when the outcome was written)")

	// The same call id in another conversation is another call.
	other := newConversation(t, st, clk)
	noErr(t, st.AuditRecord(ctx, auditRow(&other.ID, "call-1", "helper", "send_email", "auto", store.AuditOK, t1)), "recording call-1 of another conversation")
	all, err := st.AuditList(ctx, &store.AuditListParams{})
	noErr(t, err, "listing all audit")
	eq(t, len(all), 2, "rows of two conversations' call-1")

	err = st.AuditRecord(ctx, auditRow(&c.ID, "", "helper", "x", "auto", store.AuditOK, t1))
	errIs(t, err, store.ErrInvalid, "recording a row without a call id")
	err = st.AuditRecord(ctx, auditRow(&c.ID, "call-2", "helper", "x", "auto", "done", t1))
	errIs(t, err, store.ErrInvalid, "recording an unknown outcome")

	// An act outside any conversation (an operator's budget extension):
	// its call id names it alone.
	noErr(t, st.AuditRecord(ctx, auditRow(nil, "budget-extend:1", "", "budget_extend", "extend", store.AuditOK, t1)), "recording a row outside any conversation")
	noErr(t, st.AuditRecord(ctx, auditRow(nil, "budget-extend:2", "", "budget_extend", "extend", store.AuditOK, t1)), "recording another")
	ext, err := st.AuditList(ctx, &store.AuditListParams{Action: "budget_extend"})
	noErr(t, err, "listing the extensions")
	eq(t, len(ext), 2, "rows outside any conversation")
}

func (s suite) testAuditSettle(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)

	t0 := clk.Advance(time.Second)
	noErr(t, st.AuditRecord(ctx, auditRow(&c.ID, "call-1", "helper", "deploy", "confirm", store.AuditPending, t0)), "recording a pending call")

	t1 := clk.Advance(time.Hour)
	r, err := st.AuditSettle(ctx, &store.AuditSettleParams{
		ConversationID: c.ID, CallID: "call-1", Outcome: store.AuditExpired, DecidedBy: store.DecidedBySystem, Now: t1,
	})
	noErr(t, err, "settling the call as expired")
	eq(t, r.Outcome, store.AuditExpired, "outcome after settling")
	eq(t, r.DecidedBy, store.DecidedBySystem, "decided by after settling")
	eq(t, r.Decision, "confirm", "decision after settling (unchanged)")
	timeEq(t, r.CreatedAt, t0, "created at after settling (unchanged)")
	timeEq(t, r.UpdatedAt, t1, "updated at after settling")

	// Without DecidedBy the decider stays; a detail replaces the old one.
	r, err = st.AuditSettle(ctx, &store.AuditSettleParams{
		ConversationID: c.ID, CallID: "call-1", Outcome: store.AuditFailed, Detail: json.RawMessage(`{"error": "boom"}`), Now: t1,
	})
	noErr(t, err, "settling the call as failed")
	eq(t, r.DecidedBy, store.DecidedBySystem, "decided by when the settle names nobody")
	jsonEq(t, r.Detail, json.RawMessage(`{"error": "boom"}`), "detail after settling with one")

	_, err = st.AuditSettle(ctx, &store.AuditSettleParams{ConversationID: c.ID, CallID: "nope", Outcome: store.AuditOK, Now: t1})
	errIs(t, err, store.ErrNotFound, "settling a call that has no row")
	_, err = st.AuditSettle(ctx, &store.AuditSettleParams{ConversationID: c.ID, CallID: "call-1", Outcome: "whatever", Now: t1})
	errIs(t, err, store.ErrInvalid, "settling with an unknown outcome")
}

func (s suite) testAuditFilters(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()

	inTeam := func(team, channel string) uuid.UUID {
		res, err := st.BindingEnsure(ctx, &store.BindingEnsureParams{
			Place:        store.Place{Platform: "slack", Workspace: team, Channel: channel},
			Conversation: store.ConversationCreateParams{Title: "t", Provider: "scripted", Model: "m1", Now: clk.Now()},
			Now:          clk.Now(),
		})
		noErr(t, err, "binding a conversation in %s", team)
		return res.Binding.ConversationID
	}
	a, b := inTeam("T1", "C1"), inTeam("T2", "C2")

	t0 := clk.Now()
	rows := []*store.AuditRecord{
		auditRow(&a, "1", "helper", "search", "auto", store.AuditOK, t0.Add(1*time.Minute)),
		auditRow(&a, "2", "helper", "deploy", "confirm", store.AuditDenied, t0.Add(2*time.Minute)),
		auditRow(&a, "3", "ops", "deploy", "confirm", store.AuditExpired, t0.Add(3*time.Minute)),
		auditRow(&b, "1", "ops", "search", "auto", store.AuditFailed, t0.Add(4*time.Minute)),
		auditRow(&b, "2", "ops", "rm", "deny", store.AuditDenied, t0.Add(5*time.Minute)),
	}
	for _, r := range rows {
		noErr(t, st.AuditRecord(ctx, r), "recording %s/%s", r.Action, r.CallID)
	}
	ids := func(rs ...*store.AuditRecord) []uuid.UUID {
		out := []uuid.UUID{}
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	r := rows
	cases := []struct {
		name string
		p    store.AuditListParams
		want []*store.AuditRecord
	}{
		{"everything, newest first", store.AuditListParams{}, []*store.AuditRecord{r[4], r[3], r[2], r[1], r[0]}},
		{"workspace", store.AuditListParams{Workspace: "T1"}, []*store.AuditRecord{r[2], r[1], r[0]}},
		{"unknown workspace", store.AuditListParams{Workspace: "T9"}, nil},
		{"agent", store.AuditListParams{Agent: "ops"}, []*store.AuditRecord{r[4], r[3], r[2]}},
		{"conversation", store.AuditListParams{ConversationID: &b}, []*store.AuditRecord{r[4], r[3]}},
		{"tool", store.AuditListParams{Action: "deploy"}, []*store.AuditRecord{r[2], r[1]}},
		{"decision", store.AuditListParams{Decision: "auto"}, []*store.AuditRecord{r[3], r[0]}},
		{"outcome", store.AuditListParams{Outcome: store.AuditDenied}, []*store.AuditRecord{r[4], r[1]}},
		{"from (inclusive)", store.AuditListParams{From: t0.Add(4 * time.Minute)}, []*store.AuditRecord{r[4], r[3]}},
		{"to (exclusive)", store.AuditListParams{To: t0.Add(2 * time.Minute)}, []*store.AuditRecord{r[0]}},
		{"range", store.AuditListParams{From: t0.Add(2 * time.Minute), To: t0.Add(4 * time.Minute)}, []*store.AuditRecord{r[2], r[1]}},
		{"several at once", store.AuditListParams{Workspace: "T1", Agent: "helper", Action: "deploy", Outcome: store.AuditDenied}, []*store.AuditRecord{r[1]}},
		{"limit", store.AuditListParams{Limit: 2}, []*store.AuditRecord{r[4], r[3]}},
	}
	for _, tc := range cases {
		got, err := st.AuditList(ctx, &tc.p)
		noErr(t, err, "listing audit by %s", tc.name)
		deepEq(t, ids(got...), ids(tc.want...), "rows listed by %s", tc.name)
	}
	_, err := st.AuditList(ctx, &store.AuditListParams{From: t0.Add(time.Hour), To: t0})
	errIs(t, err, store.ErrInvalid, "listing with From after To")
	_, err = st.AuditList(ctx, &store.AuditListParams{Limit: store.MaxAuditLimit + 1})
	errIs(t, err, store.ErrInvalid, "listing more than the most a page holds")
}

func (s suite) testAuditPaging(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)

	// Seven calls, three of them at one instant: the id breaks the tie.
	t0 := clk.Now()
	at := []time.Duration{1, 2, 3, 3, 3, 4, 5}
	want := map[uuid.UUID]bool{}
	for i, d := range at {
		r := auditRow(&c.ID, string(rune('a'+i)), "helper", "search", "auto", store.AuditOK, t0.Add(d*time.Second))
		noErr(t, st.AuditRecord(ctx, r), "recording call %d", i)
		want[r.ID] = true
	}
	var seen []*store.AuditRecord
	var after *store.AuditCursor
	for page := 0; ; page++ {
		isTrue(t, page < 5, "paging did not end after %d pages", page)
		got, err := st.AuditList(ctx, &store.AuditListParams{ConversationID: &c.ID, After: after, Limit: 3})
		noErr(t, err, "listing page %d", page)
		if len(got) == 0 {
			break
		}
		seen = append(seen, got...)
		// The cursor travels as an opaque token.
		tok := store.CursorOf(got[len(got)-1]).String()
		after, err = store.ParseAuditCursor(tok)
		noErr(t, err, "parsing the cursor token %q", tok)
	}
	eq(t, len(seen), len(at), "rows over all pages")
	for i, r := range seen {
		isTrue(t, want[r.ID], "row %s listed twice or not recorded", r.ID)
		delete(want, r.ID)
		if i == 0 {
			continue
		}
		p := seen[i-1]
		newer := p.CreatedAt.After(r.CreatedAt) || (p.CreatedAt.Equal(r.CreatedAt) && p.ID.String() > r.ID.String())
		isTrue(t, newer, "row %d (%s at %s) must come after row %d (%s at %s): newest first, then by id", i, r.ID, r.CreatedAt, i-1, p.ID, p.CreatedAt)
	}
	_, err := store.ParseAuditCursor("not a cursor")
	errIs(t, err, store.ErrInvalid, "parsing a malformed cursor")
}

// A later record of a call returns the first record's id and keeps the
// trace id unless it brings one; AuditGet reads the row as it stands.
func (s suite) testAuditTraceAndGet(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)

	first := auditRow(&c.ID, "call-1", "helper", "deploy", "confirm", store.AuditPending, clk.Advance(time.Second))
	first.TraceID = "0af7651916cd43dd8448eb211c80319c"
	noErr(t, st.AuditRecord(ctx, first), "recording a pending call")
	again := auditRow(&c.ID, "call-1", "helper", "deploy", "", store.AuditOK, clk.Advance(time.Second))
	noErr(t, st.AuditRecord(ctx, again), "recording its outcome without a trace")
	eq(t, again.ID, first.ID, "the id a later record returns (the row's)")
	g, err := st.AuditGet(ctx, first.ID)
	noErr(t, err, "reading the row")
	eq(t, g.Outcome, store.AuditOK, "outcome")
	eq(t, g.TraceID, first.TraceID, "trace id kept by a record without one")

	settled, err := st.AuditSettle(ctx, &store.AuditSettleParams{ConversationID: c.ID, CallID: "call-1", Outcome: store.AuditFailed,
		TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Now: clk.Advance(time.Second)})
	noErr(t, err, "settling with a trace")
	eq(t, settled.TraceID, "4bf92f3577b34da6a3ce929d0e0e4736", "trace id replaced by the settle's")

	logged, err := st.AuditLog(ctx, &store.AuditLogParams{Action: store.AuditRetention, Actor: "system", Outcome: store.AuditOK,
		TraceID: "00000000000000000000000000000abc", Now: clk.Advance(time.Second)})
	noErr(t, err, "logging an action")
	eq(t, logged.TraceID, "00000000000000000000000000000abc", "trace id of a logged action")

	_, err = st.AuditGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "reading a row that does not exist")
}

// The export's read: a time range oldest first, in pages that neither
// skip nor repeat rows that share a time.
func (s suite) testAuditScan(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	t0 := clk.Advance(time.Minute)
	// Two rows a second, at t0, t0+1s, t0+2s; a seventh at t0+3s is past
	// the range.
	var want []uuid.UUID
	for i := range 7 {
		r := auditRow(&c.ID, string(rune('a'+i)), "helper", "search", "auto", store.AuditOK, t0.Add(time.Duration(i/2)*time.Second))
		noErr(t, st.AuditRecord(ctx, r), "recording row %d", i)
		if i < 6 {
			want = append(want, r.ID)
		}
	}
	got := scanAll(t, st, &store.AuditScanParams{From: t0, To: t0.Add(3 * time.Second), Limit: 2})
	eq(t, len(got), 6, "rows in [t0, t0+3s)")
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		isTrue(t, a.CreatedAt.Before(b.CreatedAt) || (a.CreatedAt.Equal(b.CreatedAt) && a.ID.String() < b.ID.String()),
			"row %d (%s %s) must come before row %d (%s %s)", i-1, a.CreatedAt, a.ID, i, b.CreatedAt, b.ID)
	}
	seen := map[uuid.UUID]bool{}
	for _, r := range got {
		isTrue(t, !seen[r.ID], "row %s read twice", r.ID)
		seen[r.ID] = true
	}
	for _, id := range want {
		isTrue(t, seen[id], "row %s missing from the range", id)
	}
	_, err := st.AuditScan(ctx, &store.AuditScanParams{From: t0, To: t0})
	errIs(t, err, store.ErrInvalid, "an empty range")
}

func scanAll(t *testing.T, st store.Store, p *store.AuditScanParams) []*store.AuditRecord {
	t.Helper()
	var out []*store.AuditRecord
	for {
		page, err := st.AuditScan(ctxFor(t), p)
		noErr(t, err, "scanning the audit")
		out = append(out, page...)
		if len(page) < p.Limit {
			return out
		}
		p.After = store.CursorOf(page[len(page)-1])
	}
}
