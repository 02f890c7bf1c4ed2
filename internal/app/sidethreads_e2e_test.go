package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// Side threads, tasks started in a DM and delegation, through the real app
// on the fake Slack and Discord, on both stores.

const sideChannel = "C0SIDE"

// sideScripts: atlas opens side threads with <dm> tags; nova answers and
// atlas resolves; scout answers once and never again (its side thread is
// left to the sweep).
var sideScripts = map[string]string{
	"atlas": `turns:
  - after_tool: resolve_side_thread
    text: "Resolved."
  - when_last_user_contains: "QA signs off"
    tool_calls: [{name: resolve_side_thread, input: {summary: "The launch moves to Friday once QA signs off."}}]
  - when_last_user_contains: "plan the launch"
    text: "Let me check with nova.\n<dm target=\"nova\">Can the launch move to Friday?</dm>"
  - when_last_user_contains: "ask scout"
    text: "Asking scout. <dm target=\"scout\">Is the venue booked?</dm>"
  - when_last_user_contains: "in private"
    text: "<dm target=\"nova\">Can the launch move to Friday?</dm>"
fallback:
  text: "atlas here."
`,
	"nova": `turns:
  - after_tool: resolve_side_thread
    text: "Resolved."
  - when_last_user_contains: "[atlas] @nova Can the launch move"
    delay: 500ms # the marker is on the platform, in progress, before this
    text: "@atlas Friday works if QA signs off."
fallback:
  text: "nova here."
`,
	"scout": "fallback:\n  text: \"scout got it, checking.\"\n",
}

const sideAgents = `  - name: atlas
    model: {{atlas}}
    answers: {default: true}
  - name: nova
    model: {{nova}}
  - name: scout
    model: {{scout}}
`

// sideThreadOf is the one side thread of a parent conversation.
func sideThreadOf(tb testing.TB, st store.Store, parent uuid.UUID) *store.SideThread {
	tb.Helper()
	ths, err := st.SideThreadList(context.Background(), parent)
	if err != nil {
		tb.Fatal(err)
	}
	if len(ths) != 1 {
		tb.Fatalf("conversation %s has %d side threads, want 1", parent, len(ths))
	}
	return ths[0]
}

// markerMessages are the bot's side thread markers in a Slack thread.
func markerMessages(e *slackEnv, channel, thread string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.botMessages(channel) {
		if m.ThreadTS == thread && strings.Contains(string(m.Blocks), "Side thread") {
			out = append(out, m)
		}
	}
	return out
}

// TestSideThreadSlack: a <dm> tag in atlas's reply opens a side thread
// with nova: the tag is gone from what people see, a marker card appears
// in the thread, nova and atlas talk in the side conversation, atlas
// resolves it; the summary is posted back to the thread and the marker is
// edited in place (chat.update of the same ts) to show it resolved.
func TestSideThreadSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, sideScripts, sideAgents, "")})
		const ts = "1700001000.000100"
		e.mustPost(newEvent("EvSide1", mention(sideChannel, ts, "", alice, "please plan the launch")))
		e.waitReply(sideChannel, "The launch moves to Friday once QA signs off.")
		e.waitIdle()
		parent := e.conversation(sideChannel, ts).ID

		// What people see: no tag anywhere, the reply's own words.
		for _, m := range e.botMessages(sideChannel) {
			if strings.Contains(shown(m), "<dm") || strings.Contains(string(m.Blocks), "<dm") {
				t.Errorf("a message shows the tag: %q", shown(m))
			}
		}
		answers := logEntries(t, e.store, parent, store.EntryAssistant)
		if len(answers) != 1 || decode[core.AssistantContent](t, answers[0]).Text != "Let me check with nova." {
			t.Fatalf("the parent's replies are %d, want atlas's one reply without the tag", len(answers))
		}

		th := sideThreadOf(t, e.store, parent)
		if th.Status != store.SideThreadResolved || th.Summary != "The launch moves to Friday once QA signs off." || th.FinishedBy != "atlas" {
			t.Errorf("side thread %s: %q by %q; want resolved by atlas with its summary", th.Status, th.Summary, th.FinishedBy)
		}
		if th.ParentSeq != answers[0].SeqValue() || th.Opener != "atlas" || th.Peer != "nova" {
			t.Errorf("side thread links seq %d (%s→%s), want the reply's seq %d (atlas→nova)", th.ParentSeq, th.Opener, th.Peer, answers[0].SeqValue())
		}
		// The side conversation: atlas's message to nova, nova's answer, atlas's close.
		if got, want := replyAgents(t, e.store, th.ChildID), []string{"nova", "atlas"}; !slices.Equal(got, want) {
			t.Errorf("the side conversation has replies by %v, want %v", got, want)
		}
		if th.ProgressAt.Equal(th.CreatedAt) {
			t.Errorf("the side thread never progressed (progress at its creation, %s)", th.ProgressAt)
		}

		// One marker, posted once and edited in place to resolved. It is
		// posted in the state the side thread has when its delivery runs:
		// in progress, or (when the machine is slow and the side thread
		// quick) already resolved, which needs no edit.
		markers := markerMessages(e, sideChannel, ts)
		if len(markers) != 1 {
			t.Fatalf("%d markers in the thread, want 1", len(markers))
		}
		m := markers[0]
		var first string // the marker's first post
		var updated bool
		for _, c := range e.slack.Calls("chat.postMessage", "chat.update") {
			body := c.Params.Get("blocks")
			switch {
			case c.Method == "chat.postMessage" && first == "" && strings.Contains(body, "Side thread"):
				first = body
			case c.Method == "chat.update" && c.Params.Get("ts") == m.TS && strings.Contains(body, "Resolved"):
				updated = true
			}
		}
		inProgress := strings.Contains(first, "In progress")
		switch {
		case first == "":
			t.Errorf("the marker was never posted")
		case !inProgress && !strings.Contains(first, "Resolved"):
			t.Errorf("the marker was first posted as %s; want it in progress or resolved", first)
		case inProgress && (!updated || m.Edits < 1):
			t.Errorf("the marker was posted in progress and that same message (ts %s) updated to resolved: %v (%d edits)", m.TS, updated, m.Edits)
		}
		if !strings.Contains(string(m.Blocks), "Resolved") {
			t.Errorf("the marker shows %s; want it resolved", m.Blocks)
		}
		// The summary, posted back under the marker.
		summary := e.waitReply(sideChannel, "resolved by atlas")
		if summary.ThreadTS != ts || !strings.Contains(shown(summary), "The launch moves to Friday") {
			t.Errorf("the summary posted back is %q in thread %q, want it in %q", shown(summary), summary.ThreadTS, ts)
		}
		if kinds := logEntries(t, e.store, parent, store.EntrySideThread); len(kinds) != 2 {
			t.Errorf("the parent has %d side_thread entries, want the marker and the summary", len(kinds))
		}
	})
}

// TestSideThreadAbandonedSlack: a side thread where nothing happens for
// longer than side_threads.abandon_after is abandoned by the sweep, and
// its marker is edited in place to say so.
func TestSideThreadAbandonedSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		var offset atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		cfg := agentsConfig(t, sideScripts, sideAgents, "side_threads:\n  abandon_after: 10m\n")
		e := startSlack(t, db(t), envOptions{config: cfg, now: now})
		const ts = "1700001100.000100"
		e.mustPost(newEvent("EvAband1", mention(sideChannel, ts, "", alice, "ask scout about the venue")))
		e.waitIdle()
		parent := e.conversation(sideChannel, ts).ID
		th := sideThreadOf(t, e.store, parent)
		if th.Status != store.SideThreadInProgress {
			t.Fatalf("side thread %s before the sweep, want in progress", th.Status)
		}
		ctx := context.Background()
		if res, err := e.app.Service.Sweep(ctx); err != nil || res.SideThreadsAbandoned != 0 {
			t.Fatalf("a sweep at once abandoned %+v (%v); want nothing abandoned yet", res, err)
		}
		offset.Store(int64(11 * time.Minute))
		res, err := e.app.Service.Sweep(ctx)
		if err != nil || res.SideThreadsAbandoned != 1 {
			t.Fatalf("the sweep 11 minutes later: %+v, %v; want one side thread abandoned", res, err)
		}
		e.waitIdle()
		th = sideThreadOf(t, e.store, parent)
		if th.Status != store.SideThreadAbandoned {
			t.Errorf("side thread %s after the sweep, want abandoned", th.Status)
		}
		markers := markerMessages(e, sideChannel, ts)
		if len(markers) != 1 || !strings.Contains(string(markers[0].Blocks), "Abandoned") || markers[0].Edits < 1 {
			t.Fatalf("markers %+v; want one, edited in place to Abandoned", markers)
		}
	})
}

// TestSideThreadFromDMSlack: a task asked of atlas in a DM that atlas
// takes to nova runs in a side conversation bound nowhere, and the DM
// shows only the result: no tag, no marker, no side conversation.
func TestSideThreadFromDMSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, sideScripts, sideAgents, "")})
		const dm = "D0SIDE"
		e.mustPost(newEvent("EvDM1", directMessage(dm, "1700001200.000100", alice, "sort the launch date out in private")))
		e.waitReply(dm, "The launch moves to Friday once QA signs off.")
		e.waitIdle()
		msgs := e.botMessages(dm)
		if len(msgs) != 1 {
			var shownAll []string
			for _, m := range msgs {
				shownAll = append(shownAll, shown(m))
			}
			t.Fatalf("the DM shows %d bot messages %q, want only the result", len(msgs), shownAll)
		}
		bs, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("slack", e2eTeam, dm, "")})
		if err != nil {
			t.Fatal(err)
		}
		th := sideThreadOf(t, e.store, bs.ConversationID)
		if th.MarkerEntryID != nil || th.Status != store.SideThreadResolved {
			t.Errorf("the DM's side thread: marker %v, %s; want no marker, resolved", th.MarkerEntryID, th.Status)
		}
		if child, err := e.store.BindingListByConversation(context.Background(), th.ChildID); err != nil || len(child) != 0 {
			t.Errorf("the side conversation has bindings %v (%v); want none: it is added to no channel", child, err)
		}
	})
}

// delegateScripts: atlas delegates billing work without naming anyone and
// relays the result; clerk and ledger are billing specialists alike, but
// only ledger may use the tool the task needs, so the score picks ledger
// although clerk is declared first.
var delegateScripts = map[string]string{
	"atlas": `turns:
  - after_tool: delegate
    text: "I have asked a billing specialist."
  - when_last_user_contains: "Result of the task"
    text: "Final: {{last_user}}"
  - when_last_user_contains: "duplicate invoice"
    tool_calls: [{name: delegate, input: {task: "Refund the duplicate invoice payment", tools: [remember]}}]
fallback:
  text: "atlas here."
`,
	"clerk":  "fallback:\n  text: \"clerk refunded it.\"\n",
	"ledger": "fallback:\n  text: \"Refund issued for the duplicate payment.\"\n",
}

const delegateAgents = `  - name: atlas
    model: {{atlas}}
    role: generalist
    answers: {default: true}
  - name: clerk
    model: {{clerk}}
    role: specialist
    tools: [post_result]
    domains:
      - name: billing
        keywords: [invoice, refund, payment]
  - name: ledger
    model: {{ledger}}
    role: specialist
    domains:
      - name: billing
        keywords: [invoice, refund, payment]
  - name: forge
    model: {{clerk}}
    role: specialist
    domains:
      - name: infra
        keywords: [deploy, server]
`

// TestDelegationSlack: delegate with no name picks the agent the score
// says (ledger: same capability as clerk, but it has the tool the task
// needs), records every candidate's factors, runs the task in ledger's own
// conversation, and the result comes back to the thread as ledger's
// message, which wakes atlas to relay it.
func TestDelegationSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		scripts := map[string]string{}
		for k, v := range delegateScripts {
			scripts[k] = v
		}
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, scripts, delegateAgents, "")})
		const ts = "1700001300.000100"
		e.mustPost(newEvent("EvDel1", mention(sideChannel, ts, "", alice, "please sort out the duplicate invoice")))
		final := e.waitReply(sideChannel, "Final:")
		e.waitIdle()
		if !strings.Contains(shown(final), "Refund issued for the duplicate payment.") {
			t.Errorf("atlas relayed %q, want ledger's result in it", shown(final))
		}
		parent := e.conversation(sideChannel, ts).ID
		ds, err := e.store.DelegationList(context.Background(), parent)
		if err != nil || len(ds) != 1 {
			t.Fatalf("delegations from the thread: %d (%v), want 1", len(ds), err)
		}
		d := ds[0]
		if d.ToAgent != "ledger" || d.Status != store.DelegationCompleted || d.Result != "Refund issued for the duplicate payment." {
			t.Errorf("delegation to %s, %s, result %q; want ledger, completed, its reply", d.ToAgent, d.Status, d.Result)
		}
		_, choice, err := e.app.Service.Delegation(context.Background(), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if choice.Chosen != "ledger" || choice.ChosenBy != "score" || len(choice.Candidates) != 3 {
			t.Fatalf("choice %+v; want ledger by score among 3 candidates", choice)
		}
		byName := map[string]core.Candidate{}
		for _, c := range choice.Candidates {
			byName[c.Agent] = c
		}
		ledger, clerk, forge := byName["ledger"], byName["clerk"], byName["forge"]
		if choice.Candidates[0].Agent != "ledger" || !(ledger.Score > clerk.Score && clerk.Score > forge.Score) {
			t.Errorf("scores ledger %v, clerk %v, forge %v; want ledger > clerk > forge, ledger first", ledger.Score, clerk.Score, forge.Score)
		}
		if ledger.Factors.Tools != 1 || clerk.Factors.Tools != 0 || ledger.Factors.Capability != 1 || clerk.Factors.Capability != 1 || forge.Factors.Capability != 0 {
			t.Errorf("factors ledger %+v, clerk %+v, forge %+v; want equal capability for the billing pair, tools only for ledger", ledger.Factors, clerk.Factors, forge.Factors)
		}
		if choice.Weights.Tools == 0 || choice.Weights.Capability == 0 {
			t.Errorf("weights recorded %+v; want the defaults", choice.Weights)
		}
		// A real work item in ledger's own conversation.
		child, err := e.store.ConversationGet(context.Background(), d.ChildID)
		if err != nil {
			t.Fatal(err)
		}
		row, err := e.store.AgentGetByName(context.Background(), "ledger")
		if err != nil || child.AgentID == nil || *child.AgentID != row.ID {
			t.Errorf("the task's conversation belongs to %v, want ledger (%v)", child.AgentID, err)
		}
		turns, err := e.store.WorkList(context.Background(), &store.WorkListParams{Kind: core.WorkTurn, ConversationID: &d.ChildID})
		if err != nil || len(turns) == 0 {
			t.Errorf("%d turns in the task's conversation (%v), want ledger's", len(turns), err)
		}
		// The result entered the thread as ledger's message.
		var fromLedger bool
		for _, en := range logEntries(t, e.store, parent, store.EntryUser) {
			fromLedger = fromLedger || (en.Author == store.AgentAuthor("ledger") && strings.Contains(decode[core.UserContent](t, en).Text, "Refund issued"))
		}
		if !fromLedger {
			t.Error("the result did not come back to the thread as ledger's message")
		}
		// People see why over the API.
		resp, err := e.http.Get(e.base + "/api/delegations/" + d.ID.String())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			ToAgent string `json:"to_agent"`
			Status  string `json:"status"`
			Factors struct {
				Chosen     string           `json:"chosen"`
				Candidates []core.Candidate `json:"candidates"`
			} `json:"factors"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /api/delegations/%s: %d, %v", d.ID, resp.StatusCode, err)
		}
		if got.ToAgent != "ledger" || got.Status != "completed" || got.Factors.Chosen != "ledger" || len(got.Factors.Candidates) != 3 {
			t.Errorf("the API shows %+v; want ledger, completed, with the three candidates' factors", got)
		}
	})
}

// TestSideThreadDiscord: on Discord too the tag is stripped, the marker is
// posted under the reply and, once resolved, that same message is edited
// (same id) while the summary is posted back.
func TestSideThreadDiscord(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		const channel = "3200000000000000001"
		e := discordStartWith(t, db, 0, agentsConfig(t, sideScripts, sideAgents, ""))
		e.mention(channel, discordAlice, "please plan the launch")
		// Agents post under their own names (webhooks), the marker as the bot.
		shownHere := func() []*discordtest.Message {
			var out []*discordtest.Message
			for _, m := range e.fake.Messages(channel, "") {
				if m.Author.ID != discordAlice.ID {
					out = append(out, m)
				}
			}
			return out
		}
		e.fake.Wait(t, "the summary posted back", func() bool {
			return slices.ContainsFunc(shownHere(), func(m *discordtest.Message) bool { return strings.Contains(m.Content, "resolved by atlas") })
		})
		conv := e.settle(channel)
		th := sideThreadOf(t, e.store, conv)
		if th.Status != store.SideThreadResolved {
			t.Fatalf("side thread %s, want resolved", th.Status)
		}
		var markers []string
		for _, m := range shownHere() {
			body := m.Content + string(m.Components) + string(m.Embeds)
			if strings.Contains(body, "<dm") {
				t.Errorf("a message shows the tag: %q", body)
			}
			if strings.Contains(string(m.Components)+string(m.Embeds), "Side thread") {
				markers = append(markers, m.ID)
				if !strings.Contains(body, "Resolved") || m.Edits < 1 {
					t.Errorf("the marker shows %s after %d edits; want it edited to Resolved", body, m.Edits)
				}
			}
		}
		if len(markers) != 1 {
			t.Fatalf("%d markers in the channel, want 1", len(markers))
		}
		b, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("discord", discordGuild, channel, "")})
		if err != nil {
			t.Fatal(err)
		}
		posted, err := e.store.PostedGet(context.Background(), &store.PostedGetParams{BindingID: b.ID, EntryID: *th.MarkerEntryID})
		if err != nil || len(posted.MessageIDs) != 1 || !strings.HasSuffix(posted.MessageIDs[0], "/"+markers[0]) {
			t.Errorf("the marker entry was posted as %v (%v); want the one message %s that was edited", posted, err, markers[0])
		}
		if got := replyAgents(t, e.store, conv); !slices.Equal(got, []string{"atlas"}) {
			t.Errorf("the channel's replies are by %v, want atlas's only", got)
		}
		// The marker carries a real Discord thread, named after the two
		// agents: what atlas asked nova first, then the outcome.
		thread := e.fake.Channel(markers[0])
		if thread == nil || thread.ParentID != channel || !thread.IsThread() || !strings.Contains(thread.Name, "atlas ↔ nova") {
			t.Fatalf("the marker's thread is %+v; want a thread of the channel started from the marker, named after atlas and nova", thread)
		}
		var inThread []string
		e.fake.Wait(t, "the outcome posted in the marker's thread", func() bool {
			inThread = inThread[:0]
			for _, m := range e.fake.Messages(thread.ID, "") {
				inThread = append(inThread, m.Content)
			}
			return slices.ContainsFunc(inThread, func(s string) bool { return strings.Contains(s, "✅ Resolved by atlas") })
		})
		e.settle(channel)
		inThread = inThread[:0]
		for _, m := range e.fake.Messages(thread.ID, "") {
			inThread = append(inThread, m.Content)
		}
		// The side conversation's messages, each once, and the outcome.
		for _, want := range []string{"Side thread between atlas and nova", "**atlas**: @nova Can the launch move to Friday?",
			"**nova**: @atlas Friday works if QA signs off.", "✅ Resolved by atlas: The launch moves to Friday once QA signs off."} {
			n := 0
			for _, m := range inThread {
				if strings.Contains(m, want) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("the thread shows %q %d times, want once; it shows %q", want, n, inThread)
			}
		}
	})
}

// TestDelegationFailedSlack: a delegate whose turn fails (its model
// answers 400) fails the task: the delegation is marked failed, the
// delegating thread gets the delegate's message saying so (which wakes
// atlas to tell the person), and the delegate's track record counts it.
func TestDelegationFailedSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		scripts := map[string]string{
			"atlas": `turns:
  - after_tool: delegate
    text: "I have asked ledger."
  - when_last_user_contains: "could not finish the task"
    text: "Sorry: {{last_user}}"
  - when_last_user_contains: "duplicate invoice"
    tool_calls: [{name: delegate, input: {task: "Refund the duplicate invoice payment", agent: ledger}}]
fallback:
  text: "atlas here."
`,
			"ledger": "fallback:\n  failure: {status: 400, message: \"the ledger is closed\"}\n",
		}
		agents := "  - name: atlas\n    model: {{atlas}}\n    answers: {default: true}\n  - name: ledger\n    model: {{ledger}}\n"
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, scripts, agents, "")})
		const ts = "1700001400.000100"
		e.mustPost(newEvent("EvDelFail1", mention(sideChannel, ts, "", alice, "please sort out the duplicate invoice")))
		sorry := e.waitReply(sideChannel, "Sorry:")
		e.waitIdle()
		if !strings.Contains(shown(sorry), "failed") {
			t.Errorf("atlas told the person %q, want the failure in it", shown(sorry))
		}
		parent := e.conversation(sideChannel, ts).ID
		ds, err := e.store.DelegationList(context.Background(), parent)
		if err != nil || len(ds) != 1 {
			t.Fatalf("delegations from the thread: %d (%v), want 1", len(ds), err)
		}
		if d := ds[0]; d.Status != store.DelegationFailed || !strings.Contains(d.Result, "the ledger is closed") {
			t.Errorf("delegation %s with result %q; want failed with the delegate's error", d.Status, d.Result)
		}
		var said bool
		for _, en := range logEntries(t, e.store, parent, store.EntryUser) {
			said = said || (en.Author == store.AgentAuthor("ledger") && strings.Contains(decode[core.UserContent](t, en).Text, "could not finish"))
		}
		if !said {
			t.Error("the delegating thread has no entry saying the task failed")
		}
		recs, err := e.store.DelegationTrackRecords(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var rec *store.TrackRecord
		for _, r := range recs {
			if r.Agent == "ledger" {
				rec = r
			}
		}
		if rec == nil || rec.Delegated != 1 || rec.Completed != 0 || rec.Failed != 1 {
			t.Fatalf("ledger's track record %+v; want 1 delegated, 0 completed, 1 failed", rec)
		}
		choice, err := e.app.Service.Rank(context.Background(), "atlas", "refund", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := choice.Candidates[0].Factors.TrackRecord; got != 1.0/3 {
			t.Errorf("ledger's track record factor %v, want (0+1)/(1+2)", got)
		}
	})
}

// TestDelegationLatencyMeasured: the latency factor comes from the agents'
// turns, not their settings, once each has answered 3 times: quick (its
// setting says 10s) answers at once, slow (its setting says 1s) takes
// 600ms a reply, and the score's latency favours quick.
func TestDelegationLatencyMeasured(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		scripts := map[string]string{
			"atlas": "fallback:\n  text: \"atlas here.\"\n",
			"quick": "fallback:\n  text: \"quick here.\"\n",
			"slow":  "fallback:\n  delay: 2s\n  text: \"slow here.\"\n",
		}
		agents := "  - name: atlas\n    model: {{atlas}}\n    answers: {default: true}\n" +
			"  - name: quick\n    model: {{quick}}\n    latency: 10s\n  - name: slow\n    model: {{slow}}\n    latency: 1s\n"
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, scripts, agents, "")})
		rank := func() (quick, slow core.Factors) {
			t.Helper()
			choice, err := e.app.Service.Rank(context.Background(), "atlas", "anything", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range choice.Candidates {
				switch c.Agent {
				case "quick":
					quick = c.Factors
				case "slow":
					slow = c.Factors
				}
			}
			return quick, slow
		}
		if q, s := rank(); !(s.Latency > q.Latency) {
			t.Fatalf("before any turn, latency factors quick %v, slow %v; want the settings (slow's 1s before quick's 10s)", q.Latency, s.Latency)
		}
		for i := range 3 {
			for _, name := range []string{"quick", "slow"} {
				ts := fmt.Sprintf("17000015%02d.000100", i*2+len(name)%2)
				e.mustPost(newEvent("EvLat"+name+ts, mention(sideChannel, ts, "", alice, name+", hello")))
			}
		}
		e.waitIdle()
		if q, s := rank(); !(q.Latency > s.Latency) {
			t.Fatalf("after 3 turns each, latency factors quick %v, slow %v; want quick's measured time to win over the settings", q.Latency, s.Latency)
		}
	})
}
