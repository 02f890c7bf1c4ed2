package app_test

// End-to-end tests of the guard through the real service and the fake
// Slack: a policy from switchboard.yaml, the approval prompt's Always allow
// and its standing grant, revoking it, who may decide, the expiry setting
// and the notify line.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

const boss = "U0BOSS"

// offsetClock is the real clock moved forward by Advance.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// startGuard starts the service with the guard script and a switchboard.yaml
// whose policy asks before routine_list and notifies after remind.
func startGuard(t *testing.T, db string, extraYAML string, clock *offsetClock) *slackEnv {
	t.Helper()
	return startGuardPolicy(t, db, "{routine_list: confirm, remind: notify}", extraYAML, clock)
}

// startGuardPolicy is startGuard with the platform policy's tools map.
func startGuardPolicy(t *testing.T, db, tools, extraYAML string, clock *offsetClock) *slackEnv {
	t.Helper()
	yaml := openAccess + "policy:\n  tools: " + tools + "\n" + extraYAML
	script, err := filepath.Abs(filepath.Join("testdata", "guard_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	opts := envOptions{env: map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}, config: yaml}
	if clock != nil {
		opts.now = clock.Now
	}
	return startSlack(t, db, opts)
}

// prompt waits for the approval prompt (a message with buttons) in a thread.
func (e *slackEnv) prompt(channel, thread string) slacktest.Message {
	e.tb.Helper()
	var found slacktest.Message
	poll(e.tb, "an approval prompt in thread "+thread, func() (bool, string) {
		msgs := e.botMessages(channel)
		for _, m := range msgs {
			if m.ThreadTS == thread && len(m.Blocks) > 0 && len(buttonsOf(e.tb, m.Blocks)) > 0 {
				found = m
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", msgs)
	})
	return found
}

// click clicks the prompt's button labelled label as user, over Socket Mode.
func (e *slackEnv) click(channel, thread string, m slacktest.Message, label, user, trigger string) {
	e.tb.Helper()
	for _, b := range buttonsOf(e.tb, m.Blocks) {
		if b.Text.Text != label {
			continue
		}
		env := e.slack.SendInteractive(slacktest.BlockActions(slacktest.Click{
			TeamID: e2eTeam, UserID: user, UserName: strings.ToLower(user), Channel: channel, MessageTS: m.TS, ThreadTS: thread,
			ActionID: b.ActionID, Value: b.Value, Label: b.Text.Text, TriggerID: trigger, Blocks: m.Blocks, Text: m.Text,
		}))
		if _, err := e.slack.WaitAck(env, waitLong); err != nil {
			e.tb.Fatalf("the click on %q by %s was not acknowledged: %v", label, user, err)
		}
		return
	}
	e.tb.Fatalf("the prompt has no button %q: %s", label, m.Blocks)
}

func (e *slackEnv) grants() []*store.Grant {
	e.tb.Helper()
	gs, err := e.store.GrantList(context.Background(), &store.GrantListParams{})
	if err != nil {
		e.tb.Fatal(err)
	}
	return gs
}

// apiGrants reads GET /api/grants (loopback, no token set).
func (e *slackEnv) apiGrants() []map[string]any {
	e.tb.Helper()
	resp, err := e.http.Get(e.base + "/api/grants")
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.tb.Fatalf("GET /api/grants answered %d: %s", resp.StatusCode, body)
	}
	var out struct {
		Grants []map[string]any `json:"grants"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		e.tb.Fatalf("GET /api/grants: %v in %s", err, body)
	}
	return out.Grants
}

// TestGuardAlwaysAllowThenRevoke: a call the policy asks about shows Allow
// once, Always allow, Always allow these arguments and Deny; a stranger's
// click is refused privately and grants nothing; the starter's Always allow
// runs the call and makes a grant, so the next identical call runs without
// asking; after "!grants revoke" it asks again. The API lists and revokes
// grants too.
func TestGuardAlwaysAllowThenRevoke(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startGuard(t, db(t), "", nil)
		const channel = "C0GUARD"
		const ts1, ts2, ts3, ts4 = "1700000700.000100", "1700000701.000100", "1700000702.000100", "1700000703.000100"

		e.mustPost(newEvent("EvGuard1", mention(channel, ts1, "", alice, "list my routines")))
		p := e.prompt(channel, ts1)
		var labels []string
		for _, b := range buttonsOf(t, p.Blocks) {
			labels = append(labels, b.Text.Text)
		}
		if want := []string{"Allow once", "Always allow", "Always allow these arguments", "Deny"}; !slices.Equal(labels, want) {
			t.Fatalf("prompt buttons = %q, want %q", labels, want)
		}
		e.waitIdle()

		e.click(channel, ts1, p, "Always allow", mallory, "trig-g-mallory")
		eph := e.waitCalls("chat.postEphemeral", 1)
		if q := eph[0].Params; q.Get("user") != mallory || !strings.Contains(q.Get("text"), "yours") {
			t.Errorf("refusal = %v, want an ephemeral message to %s", q, mallory)
		}
		if gs := e.grants(); len(gs) != 0 {
			t.Fatalf("a stranger's Always allow made %d grants, want none", len(gs))
		}

		e.click(channel, ts1, p, "Always allow", alice, "trig-g-alice")
		e.waitReply(channel, "Listed:")
		e.waitIdle()
		gs := e.grants()
		if len(gs) != 1 {
			t.Fatalf("%d grants after Always allow, want 1", len(gs))
		}
		g := gs[0]
		if g.Agent != "switchboard" || g.Tool != "routine_list" || g.Workspace != e2eTeam || g.GrantedBy != alice || g.ArgsHash != "" {
			t.Errorf("grant = %+v, want routine_list for switchboard in %s by %s, any arguments", g, e2eTeam, alice)
		}

		// The same call again, in another thread: it runs without asking.
		e.mustPost(newEvent("EvGuard2", mention(channel, ts2, "", alice, "list my routines")))
		poll(t, "the granted call's reply in "+ts2, func() (bool, string) {
			for _, m := range e.botMessages(channel) {
				if m.ThreadTS == ts2 && strings.Contains(shown(m), "Listed:") {
					return true, ""
				}
			}
			return false, "no reply yet"
		})
		e.waitIdle()
		for _, m := range e.botMessages(channel) {
			if m.ThreadTS == ts2 && len(m.Blocks) > 0 && len(buttonsOf(t, m.Blocks)) > 0 {
				t.Fatalf("the granted call asked again: %q", m.Text)
			}
		}

		if api := e.apiGrants(); len(api) != 1 || api[0]["id"] != g.ID.String() {
			t.Errorf("GET /api/grants = %v, want the one grant %s", api, g.ID)
		}
		e.mustPost(newEvent("EvGuard3", mention(channel, ts3, "", alice, "!grants")))
		e.waitReply(channel, g.ID.String())
		e.mustPost(newEvent("EvGuard4", mention(channel, ts3, ts3, alice, "!grants revoke "+g.ID.String())))
		e.waitReply(channel, "Revoked")
		e.waitIdle()
		if gs := e.grants(); len(gs) != 0 {
			t.Fatalf("%d live grants after the revoke, want none", len(gs))
		}

		// Revoked: the same call asks again.
		e.mustPost(newEvent("EvGuard5", mention(channel, ts4, "", alice, "list my routines")))
		e.prompt(channel, ts4)
		e.waitIdle()
		if len(e.apiGrants()) != 0 {
			t.Error("GET /api/grants still lists the revoked grant")
		}
	})
}

// TestGuardAdminsDecideAndExpiry: with approvals.deciders admins, the
// starter who is no admin is refused privately and an admin decides;
// approvals.expiry sets the request's expiry, and a click after it (the
// clock moved on) runs nothing.
func TestGuardAdminsDecideAndExpiry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		clock := &offsetClock{}
		e := startGuard(t, db(t), "approvals: {deciders: admins, admins: ["+boss+"], expiry: 2h}\n", clock)
		ctx := context.Background()
		const channel = "C0ADMINS"
		const ts1, ts2 = "1700000800.000100", "1700000801.000100"

		e.mustPost(newEvent("EvAdmin1", mention(channel, ts1, "", alice, "list my routines")))
		p := e.prompt(channel, ts1)
		e.waitIdle()
		conv := e.conversation(channel, ts1)
		aps, err := e.store.ApprovalListPending(ctx, conv.ID)
		if err != nil || len(aps) != 1 {
			t.Fatalf("pending approvals = %v, %v; want one", aps, err)
		}
		if got := aps[0].ExpiresAt.Sub(aps[0].CreatedAt); got != 2*time.Hour {
			t.Errorf("approval expires %s after it was made, want approvals.expiry's 2h", got)
		}

		e.click(channel, ts1, p, "Allow once", alice, "trig-a-alice")
		eph := e.waitCalls("chat.postEphemeral", 1)
		if q := eph[0].Params; q.Get("user") != alice || !strings.Contains(q.Get("text"), "admin") {
			t.Errorf("refusal = %v, want an ephemeral message to %s naming admins", q, alice)
		}
		if ap, _ := e.store.ApprovalGet(ctx, aps[0].ID); ap.Status != store.ApprovalPending {
			t.Errorf("approval is %s after a non-admin's click, want pending", ap.Status)
		}
		e.click(channel, ts1, p, "Allow once", boss, "trig-a-boss")
		e.waitReply(channel, "Listed:")
		e.waitIdle()
		if ap, _ := e.store.ApprovalGet(ctx, aps[0].ID); ap.Status != store.ApprovalApproved {
			t.Errorf("approval is %s after the admin's click, want approved", ap.Status)
		}
		if gs := e.grants(); len(gs) != 0 {
			t.Errorf("Allow once made %d grants, want none", len(gs))
		}

		// Expiry: the clock moves past approvals.expiry; the admin's click
		// then runs nothing.
		e.mustPost(newEvent("EvAdmin2", mention(channel, ts2, "", alice, "list my routines")))
		p2 := e.prompt(channel, ts2)
		e.waitIdle()
		clock.Advance(3 * time.Hour)
		e.click(channel, ts2, p2, "Allow once", boss, "trig-a-late")
		e.waitIdle()
		conv2 := e.conversation(channel, ts2)
		if rs := e.entries(conv2.ID, store.EntryToolResult); len(rs) != 0 {
			t.Errorf("%d tool results after a click past the expiry, want none (the call must not run)", len(rs))
		}
		ap2, err := e.store.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: conv2.ID, CallID: callOf(t, e, conv2.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if ap2.Status == store.ApprovalApproved {
			t.Error("an approval was approved after its expiry")
		}
	})
}

// callOf is the call id of the conversation's one tool call.
func callOf(t *testing.T, e *slackEnv, conv uuid.UUID) string {
	t.Helper()
	calls := e.entries(conv, store.EntryToolCall)
	if len(calls) != 1 {
		t.Fatalf("%d tool calls, want 1", len(calls))
	}
	var c struct {
		CallID string `json:"call_id"`
	}
	if err := json.Unmarshal(calls[0].Content, &c); err != nil {
		t.Fatal(err)
	}
	return c.CallID
}

// TestGuardNotifyLine: a call the policy notifies about runs at once and
// the thread gets a line saying what ran, with its arguments.
func TestGuardNotifyLine(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startGuard(t, db(t), "", nil)
		const channel, ts = "C0NOTIFY", "1700000900.000100"
		e.mustPost(newEvent("EvNotify", mention(channel, ts, "", alice, "remind me to call Ana")))
		line := e.waitReply(channel, "ran `remind` with")
		e.waitReply(channel, "Reminder set.")
		e.waitIdle()
		if line.ThreadTS != ts || !strings.Contains(shown(line), "call Ana") {
			t.Errorf("notify line = %q in thread %q, want the arguments in thread %s", shown(line), line.ThreadTS, ts)
		}
		for _, m := range e.botMessages(channel) {
			if len(m.Blocks) > 0 && len(buttonsOf(t, m.Blocks)) > 0 {
				t.Errorf("a notify call asked for approval: %q", m.Text)
			}
		}
	})
}

// askedIn reports whether a bot message with buttons (an approval prompt)
// is in the thread.
func (e *slackEnv) askedIn(channel, thread string) bool {
	e.tb.Helper()
	for _, m := range e.botMessages(channel) {
		if m.ThreadTS == thread && len(m.Blocks) > 0 && len(buttonsOf(e.tb, m.Blocks)) > 0 {
			return true
		}
	}
	return false
}

// TestGuardAlwaysAllowTheseArguments: "Always allow these arguments" makes
// a grant limited to the call's arguments; the identical call then runs
// without asking, and the same tool with other arguments asks again.
func TestGuardAlwaysAllowTheseArguments(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startGuardPolicy(t, db(t), "{remind: confirm}", "", nil)
		const channel = "C0ARGS"
		const ts1, ts2, ts3 = "1700001000.000100", "1700001001.000100", "1700001002.000100"

		e.mustPost(newEvent("EvArgs1", mention(channel, ts1, "", alice, "remind me to call Ana")))
		p := e.prompt(channel, ts1)
		e.waitIdle()
		e.click(channel, ts1, p, "Always allow these arguments", alice, "trig-args-1")
		e.waitReply(channel, "Reminder set.")
		e.waitIdle()
		gs := e.grants()
		if len(gs) != 1 {
			t.Fatalf("%d grants after Always allow these arguments, want 1", len(gs))
		}
		if want := core.ArgsHash(json.RawMessage(`{"in":"2h","text":"call Ana"}`)); gs[0].Tool != "remind" || gs[0].ArgsHash != want {
			t.Fatalf("grant = %+v, want remind limited to the arguments hash %s", gs[0], want)
		}

		// The identical call runs without asking.
		e.mustPost(newEvent("EvArgs2", mention(channel, ts2, "", alice, "remind me to call Ana")))
		poll(t, "the granted call's reply in "+ts2, func() (bool, string) {
			for _, m := range e.botMessages(channel) {
				if m.ThreadTS == ts2 && strings.Contains(shown(m), "Reminder set.") {
					return true, ""
				}
			}
			return false, "no reply yet"
		})
		e.waitIdle()
		if e.askedIn(channel, ts2) {
			t.Fatal("the call with the granted arguments asked again")
		}

		// Other arguments: asked again, and nothing ran.
		e.mustPost(newEvent("EvArgs3", mention(channel, ts3, "", alice, "remind me to call Bo")))
		e.prompt(channel, ts3)
		e.waitIdle()
		if rs := e.entries(e.conversation(channel, ts3).ID, store.EntryToolResult); len(rs) != 0 {
			t.Errorf("%d tool results for the call with other arguments before anyone decided, want none", len(rs))
		}
		if gs := e.grants(); len(gs) != 1 {
			t.Errorf("%d grants after the second prompt, want still 1", len(gs))
		}
	})
}

// TestGuardGrantHoldsInItsWorkspace: a grant made in a conversation of team
// A's workspace holds in that workspace by its id (in another team bound to
// the same workspace too) and never in team B's; !grants names the
// workspace and lists only its own grants.
func TestGuardGrantHoldsInItsWorkspace(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startGuard(t, db(t), "", nil)
		ctx := context.Background()
		const secondOfA = "T0ASECOND"
		a, err := e.store.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "Acme Ops", Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New()})
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.store.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "Bolt Labs", Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New()})
		if err != nil {
			t.Fatal(err)
		}
		for team, ws := range map[string]uuid.UUID{e2eTeam: a.ID, secondOfA: a.ID, otherTeam: b.ID} {
			if _, err := workspace.BindWorkspace(ctx, e.store, "slack", team, ws); err != nil {
				t.Fatal(err)
			}
		}
		const chA, chA2, chB = "C0WSA", "C0WSA2", "C0WSB"
		const ts1, ts2, ts3, ts4, ts5 = "1700001100.000100", "1700001101.000100", "1700001102.000100", "1700001103.000100", "1700001104.000100"

		e.mustPost(mentionIn(e2eTeam, "EvWsGrant1", chA, ts1, "list my routines"))
		p := e.prompt(chA, ts1)
		e.waitIdle()
		e.click(chA, ts1, p, "Always allow", alice, "trig-ws-1")
		e.waitReply(chA, "Listed:")
		e.waitIdle()
		gs := e.grants()
		if len(gs) != 1 || gs[0].WorkspaceID == nil || *gs[0].WorkspaceID != a.ID {
			t.Fatalf("grants after Always allow in team A = %+v, want one held in workspace A %s", gs, a.ID)
		}

		// Another team bound to A's workspace: the grant holds there.
		e.mustPost(mentionIn(secondOfA, "EvWsGrant2", chA2, ts2, "list my routines"))
		e.waitReply(chA2, "Listed:")
		e.waitIdle()
		if e.askedIn(chA2, ts2) {
			t.Fatal("the grant of workspace A did not hold in another team bound to A")
		}

		// Team B's workspace: asked again, nothing ran.
		e.mustPost(mentionIn(otherTeam, "EvWsGrant3", chB, ts3, "list my routines"))
		e.prompt(chB, ts3)
		e.waitIdle()
		bind, err := e.store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", otherTeam, chB, ts3)})
		if err != nil {
			t.Fatal(err)
		}
		if rs := e.entries(bind.ConversationID, store.EntryToolResult); len(rs) != 0 {
			t.Fatalf("team A's grant let the call run in team B: %d results", len(rs))
		}

		// !grants in A names the workspace and lists the grant; in B, none.
		e.mustPost(mentionIn(e2eTeam, "EvWsGrant4", chA, ts4, "!grants"))
		if r := e.waitReply(chA, "Standing grants"); !strings.Contains(shown(r), "Acme Ops") || !strings.Contains(shown(r), gs[0].ID.String()) {
			t.Errorf("!grants in A = %q, want the workspace's name and the grant", shown(r))
		}
		e.mustPost(mentionIn(otherTeam, "EvWsGrant5", chB, ts5, "!grants"))
		e.waitReply(chB, "No standing grants")
		e.waitIdle()
	})
}

// TestGuardNotifyLineOnceWhenPostingRetries: Slack fails the first posts
// of the turn; the delivery is retried, and the thread ends with the notify
// line exactly once and the reply once.
func TestGuardNotifyLineOnceWhenPostingRetries(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startGuard(t, db(t), "", nil)
		const channel, ts = "C0NOTIFYRETRY", "1700001200.000100"
		e.slack.Fail("chat.postMessage", slacktest.Fault{Status: http.StatusInternalServerError, Error: "internal_error"}, slacktest.RateLimited(1))
		e.mustPost(newEvent("EvNotifyRetry", mention(channel, ts, "", alice, "remind me to call Ana")))
		e.waitReply(channel, "ran `remind` with")
		e.waitReply(channel, "Reminder set.")
		e.waitIdle()
		var lines, replies int
		for _, m := range e.botMessages(channel) {
			switch s := shown(m); {
			case strings.Contains(s, "ran `remind` with"):
				lines++
			case strings.Contains(s, "Reminder set."):
				replies++
			}
		}
		if lines != 1 || replies != 1 {
			t.Fatalf("%d notify lines and %d replies in the thread, want exactly one of each: %+v", lines, replies, e.botMessages(channel))
		}
		var failed, lineTries int
		for _, c := range e.slack.Calls("chat.postMessage") {
			if !c.OK() {
				failed++
			}
			if strings.Contains(c.Params.Get("text"), "ran `remind` with") {
				lineTries++
			}
		}
		if failed != 2 || lineTries < 2 {
			t.Errorf("%d failed chat.postMessage calls, %d tries of the notify line; want the two faults and the line retried", failed, lineTries)
		}
	})
}
