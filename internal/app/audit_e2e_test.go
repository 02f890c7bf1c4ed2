package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestAuditReadsBackEveryOutcome: six calls on Slack, one per way a call can
// end (ran ok, failed, refused by the policy, approved by a person, denied
// by a person, left to expire), each read back through GET /api/audit and
// the switchboard binary's audit command with its outcome and who decided,
// filtered and paged.
func TestAuditReadsBackEveryOutcome(t *testing.T) {
	t.Parallel()
	bin := buildSwitchboard(t)
	eachStore(t, func(t *testing.T, db databaseFunc) {
		var skew atomic.Int64 // how far the service's clock runs ahead
		now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		script, err := filepath.Abs(filepath.Join("testdata", "audit_e2e.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		dbURL := db(t)
		e := startSlack(t, dbURL, envOptions{env: map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}, now: now})
		addAuditTools(t, e.app.Registry)
		ctx := context.Background()

		say := func(channel, ts, text string) {
			t.Helper()
			e.mustPost(newEvent("Ev"+channel, mention(channel, ts, "", alice, text)))
		}
		say("C0LOOK", "1700001000.000001", "please look up the weather")
		say("C0FETCH", "1700001000.000002", "please fetch the page")
		say("C0FORBID", "1700001000.000003", "please use the forbidden tool")
		e.waitReply("C0LOOK", "Looked it up.")
		e.waitReply("C0FETCH", "The fetch failed.")
		e.waitReply("C0FORBID", "That tool is not allowed.")

		// Three calls wait for a person: one approved, one denied, one
		// left alone until it expires.
		say("C0DEPLOY", "1700001000.000004", "please deploy prod")
		say("C0DROP", "1700001000.000005", "please drop the users table")
		say("C0PURGE", "1700001000.000006", "please purge the logs")
		e.decide("C0DEPLOY", "1700001000.000004", "approve")
		e.decide("C0DROP", "1700001000.000005", "deny")
		e.waitReply("C0DEPLOY", "Deploy settled.")
		e.waitReply("C0DROP", "Drop settled.")
		e.waitIdle()

		purge := e.auditPage(t, url.Values{"tool": {"audit_purge"}})
		if len(purge.Records) != 1 || purge.Records[0].Outcome != store.AuditPending || purge.Records[0].DecidedBy != "" {
			t.Fatalf("the unanswered purge before its expiry = %+v; want one row, pending, decided by nobody", purge.Records)
		}
		// A day later nobody has answered: the sweep expires the request
		// and the agent hears of it.
		skew.Store(int64(25 * time.Hour))
		if _, err := e.app.Service.Sweep(ctx); err != nil {
			t.Fatalf("sweeping: %v", err)
		}
		e.waitReply("C0PURGE", "Purge settled.")
		e.waitIdle()

		all := e.auditPage(t, nil)
		want := map[string]struct {
			tool, decision string
			outcome        store.AuditOutcome
			decidedBy      string
		}{
			"call-lookup":    {"audit_lookup", "auto", store.AuditOK, store.DecidedByPolicy},
			"call-fetch":     {"audit_fetch", "auto", store.AuditFailed, store.DecidedByPolicy},
			"call-forbidden": {"audit_forbidden", "deny", store.AuditDenied, store.DecidedByPolicy},
			"call-deploy":    {"audit_deploy", "confirm", store.AuditOK, "user:" + alice},
			"call-drop":      {"audit_drop", "confirm", store.AuditDenied, "user:" + alice},
			"call-purge":     {"audit_purge", "confirm", store.AuditExpired, store.DecidedBySystem},
		}
		if len(all.Records) != len(want) || all.NextCursor != "" {
			t.Fatalf("GET /api/audit = %d rows (next %q); want one per call (%d) on one page:\n%+v", len(all.Records), all.NextCursor, len(want), all.Records)
		}
		agent := all.Records[0].Agent
		for i, r := range all.Records {
			w, ok := want[r.CallID]
			if !ok {
				t.Fatalf("row %d is of call %q, which the script never made", i, r.CallID)
			}
			if r.Tool != w.tool || r.Decision != w.decision || r.Outcome != w.outcome || r.DecidedBy != w.decidedBy {
				t.Errorf("call %s: tool %s, decision %s, outcome %s, decided by %q; want %s, %s, %s, %q",
					r.CallID, r.Tool, r.Decision, r.Outcome, r.DecidedBy, w.tool, w.decision, w.outcome, w.decidedBy)
			}
			if r.Agent == "" || r.Agent != agent || r.Actor != "agent:"+agent || r.ConversationID == nil {
				t.Errorf("call %s: agent %q, actor %q, conversation %v; want the one agent and its conversation", r.CallID, r.Agent, r.Actor, r.ConversationID)
			}
			if i > 0 && r.CreatedAt.After(all.Records[i-1].CreatedAt) {
				t.Errorf("row %d (%s) is newer than row %d: want newest first", i, r.CallID, i-1)
			}
		}
		for _, r := range all.Records {
			if r.CallID == "call-fetch" && !strings.Contains(string(r.Detail), "the page is gone") {
				t.Errorf("the failed call's detail = %s; want the handler's error", r.Detail)
			}
		}
		if e.conversation("C0PURGE", "1700001000.000006").ID != *rowOf(t, all, "call-purge").ConversationID {
			t.Errorf("the purge row names another conversation than the purge thread's")
		}

		// Each filter narrows the list to the calls it names.
		deployConv := rowOf(t, all, "call-deploy").ConversationID.String()
		for _, tc := range []struct {
			query url.Values
			calls []string
		}{
			{url.Values{"outcome": {"denied"}}, []string{"call-drop", "call-forbidden"}},
			{url.Values{"decision": {"confirm"}}, []string{"call-purge", "call-drop", "call-deploy"}},
			{url.Values{"tool": {"audit_fetch"}}, []string{"call-fetch"}},
			{url.Values{"conversation": {deployConv}}, []string{"call-deploy"}},
			{url.Values{"workspace": {e2eTeam}, "outcome": {"ok"}}, []string{"call-deploy", "call-lookup"}},
			{url.Values{"workspace": {"T0ELSEWHERE"}}, nil},
			{url.Values{"agent": {agent}, "outcome": {"expired"}}, []string{"call-purge"}},
			{url.Values{"agent": {"nobody"}}, nil},
			// The purge was made before the clock jumped a day ahead.
			{url.Values{"from": {now().Add(-time.Hour).Format(time.RFC3339)}}, nil},
			{url.Values{"to": {now().Add(time.Hour).Format(time.RFC3339)}, "tool": {"audit_lookup"}}, []string{"call-lookup"}},
		} {
			page := e.auditPage(t, tc.query)
			var got []string
			for _, r := range page.Records {
				got = append(got, r.CallID)
			}
			// The calls of several threads ran concurrently: the order among
			// them is checked on the whole list above, the set here.
			slices.Sort(got)
			slices.Sort(tc.calls)
			if strings.Join(got, ",") != strings.Join(tc.calls, ",") {
				t.Errorf("GET /api/audit?%s = %v; want %v", tc.query.Encode(), got, tc.calls)
			}
		}

		// Pages of two, newest first, cover every row once.
		var paged []string
		query := url.Values{"limit": {"2"}}
		for range 4 {
			page := e.auditPage(t, query)
			for _, r := range page.Records {
				paged = append(paged, r.CallID)
			}
			if page.NextCursor == "" {
				break
			}
			query.Set("cursor", page.NextCursor)
		}
		var whole []string
		for _, r := range all.Records {
			whole = append(whole, r.CallID)
		}
		if strings.Join(paged, ",") != strings.Join(whole, ",") {
			t.Errorf("pages of 2 = %v; want the whole list in its order %v", paged, whole)
		}
		for _, bad := range []url.Values{{"outcome": {"done"}}, {"from": {"yesterday"}}, {"cursor": {"xyz"}}, {"limit": {"0"}}, {"conversation": {"C0LOOK"}}} {
			if status, body := e.getAudit(t, bad); status != http.StatusBadRequest {
				t.Errorf("GET /api/audit?%s answered %d %s; want 400 saying what is wrong", bad.Encode(), status, body)
			}
		}

		// The binary's audit command reads the same rows from the database.
		out := runCLI(t, bin, "audit", "--database-url", dbURL, "--json", "--decision", "confirm")
		var cli web.AuditPage
		if err := json.Unmarshal([]byte(out), &cli); err != nil {
			t.Fatalf("switchboard audit --json printed %q: %v", out, err)
		}
		if len(cli.Records) != 3 {
			t.Fatalf("switchboard audit --decision confirm listed %d rows, want 3: %s", len(cli.Records), out)
		}
		for _, r := range cli.Records {
			if w := want[r.CallID]; r.Outcome != w.outcome || r.DecidedBy != w.decidedBy {
				t.Errorf("CLI: call %s %s by %q; want %s by %q", r.CallID, r.Outcome, r.DecidedBy, w.outcome, w.decidedBy)
			}
		}
		table := runCLI(t, bin, "audit", "--database-url", dbURL, "--limit", "4")
		lines := strings.Split(strings.TrimSpace(table), "\n")
		if len(lines) != 6 || !strings.HasPrefix(lines[0], "TIME") || !strings.HasPrefix(lines[5], "more: switchboard audit --cursor ") {
			t.Fatalf("switchboard audit --limit 4 printed:\n%s\nwant a header, 4 rows and how to see more", table)
		}
		for _, l := range lines[1:5] {
			f := strings.Fields(l)
			if len(f) != 8 {
				t.Fatalf("table row %q has %d columns, want 8", l, len(f))
			}
			if w := want[f[7]]; f[2] != w.tool || f[4] != string(w.outcome) || f[5] != w.decidedBy {
				t.Errorf("table row %q; want tool %s, outcome %s, decided by %s", l, w.tool, w.outcome, w.decidedBy)
			}
		}
		cursor := strings.TrimSuffix(strings.TrimPrefix(lines[5], "more: switchboard audit --cursor "), " (with the same filters)")
		rest := runCLI(t, bin, "audit", "--database-url", dbURL, "--limit", "4", "--cursor", cursor)
		if n := len(strings.Split(strings.TrimSpace(rest), "\n")); n != 3 {
			t.Errorf("the second page printed:\n%s\nwant a header and the 2 oldest rows", rest)
		}
	})
}

// addAuditTools registers the tools of the audit script: two that run, one
// failing, and three a person must confirm. audit_forbidden is never
// registered: the guard refuses a tool the agent is not offered.
func addAuditTools(tb testing.TB, reg *tool.Registry) {
	tb.Helper()
	type in struct {
		Q string `json:"q,omitempty"`
	}
	type out struct {
		Done string `json:"done"`
	}
	ok := func(ctx context.Context, req *tool.Request, i in) (out, error) { return out{Done: i.Q}, nil }
	for _, d := range []struct {
		name string
		risk tool.Risk
		h    tool.Handler[in, out]
	}{
		{"audit_lookup", tool.RiskLow, ok},
		{"audit_fetch", tool.RiskLow, func(ctx context.Context, req *tool.Request, i in) (out, error) {
			return out{}, errors.New("the page is gone")
		}},
		{"audit_deploy", tool.RiskHigh, ok},
		{"audit_drop", tool.RiskHigh, ok},
		{"audit_purge", tool.RiskHigh, ok},
	} {
		tl, err := tool.New(tool.Def{Name: d.name, Description: "A tool of the audit test.", Risk: d.risk}, d.h)
		if err != nil {
			tb.Fatal(err)
		}
		if err := reg.Add(tl); err != nil {
			tb.Fatal(err)
		}
	}
}

// decide waits for the approval prompt in a thread and clicks value
// ("approve" or "deny") on it as alice.
func (e *slackEnv) decide(channel, thread, value string) {
	e.tb.Helper()
	var prompt slacktest.Message
	poll(e.tb, "the approval prompt in "+channel, func() (bool, string) {
		msgs := e.botMessages(channel)
		for _, m := range msgs {
			if len(m.Blocks) > 0 {
				prompt = m
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", msgs)
	})
	for _, b := range buttonsOf(e.tb, prompt.Blocks) {
		if b.Value != value {
			continue
		}
		env := e.slack.SendInteractive(slacktest.BlockActions(slacktest.Click{
			TeamID: e2eTeam, UserID: alice, UserName: "alice", Channel: channel, MessageTS: prompt.TS, ThreadTS: thread,
			ActionID: b.ActionID, Value: b.Value, Label: b.Text.Text, TriggerID: "trig-" + channel,
			Blocks: prompt.Blocks, Text: prompt.Text,
		}))
		if _, err := e.slack.WaitAck(env, waitLong); err != nil {
			e.tb.Fatalf("the %s click in %s was not acknowledged: %v", value, channel, err)
		}
		return
	}
	e.tb.Fatalf("the prompt in %s has no %q button: %s", channel, value, prompt.Blocks)
}

// getAudit calls GET /api/audit with query.
func (e *slackEnv) getAudit(tb testing.TB, query url.Values) (int, []byte) {
	tb.Helper()
	resp, err := e.http.Get(e.base + "/api/audit?" + query.Encode())
	if err != nil {
		tb.Fatalf("GET /api/audit: %v", err)
	}
	defer resp.Body.Close()
	var body json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		tb.Fatalf("GET /api/audit?%s: decoding the answer: %v", query.Encode(), err)
	}
	return resp.StatusCode, body
}

func (e *slackEnv) auditPage(tb testing.TB, query url.Values) *web.AuditPage {
	tb.Helper()
	status, body := e.getAudit(tb, query)
	if status != http.StatusOK {
		tb.Fatalf("GET /api/audit?%s answered %d %s, want 200", query.Encode(), status, body)
	}
	var page web.AuditPage
	if err := json.Unmarshal(body, &page); err != nil {
		tb.Fatalf("GET /api/audit answered %s: %v", body, err)
	}
	return &page
}

func rowOf(tb testing.TB, page *web.AuditPage, call string) *web.AuditRecordJSON {
	tb.Helper()
	for i := range page.Records {
		if page.Records[i].CallID == call {
			return &page.Records[i]
		}
	}
	tb.Fatalf("no audit row of call %s in %+v", call, page.Records)
	return nil
}

// buildSwitchboard builds cmd/switchboard, the binary people run.
func buildSwitchboard(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "switchboard")
	if out, err := testenv.BuildSwitchboard(bin); err != nil {
		tb.Fatalf("building the switchboard binary: %v\n%s", err, out)
	}
	return bin
}

// runCLI runs the switchboard binary with args and returns what it printed.
func runCLI(tb testing.TB, bin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tb.TempDir()}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("switchboard %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
