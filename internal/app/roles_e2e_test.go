package app_test

// End-to-end tests of workspace roles where people notice them: the owners
// and admins of a workspace decide its approvals and let strangers in, a
// person of another team cannot; a pinned-away agent and a sender from
// another Slack team get one polite refusal a day; a workspace admin reads
// their workspace's audit with a personal token.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/access"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/store"
)

// rolesTeams are workspaces A (bound to e2eTeam) and B (bound to
// otherTeam), each with people found from their Slack identities: boss is
// an admin of A, bea the owner of B.
type rolesTeams struct {
	a, b      *store.Workspace
	boss, bea *store.Person
}

const bea = "U0BEA"

func setUpTeams(t *testing.T, e *slackEnv) *rolesTeams {
	t.Helper()
	ctx := context.Background()
	person := func(team, user, name string) *store.Person {
		p, err := e.app.People.Ensure(ctx, "slack", team, user, name)
		if err != nil {
			t.Fatalf("making the person behind %s: %v", user, err)
		}
		return p
	}
	r := &rolesTeams{}
	ann := person(e2eTeam, "U0ANN", "Ann")
	r.boss = person(e2eTeam, boss, "Boss")
	r.bea = person(otherTeam, bea, "Bea")
	var err error
	if r.a, err = e.store.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "A", Kind: store.WorkspaceTeam, OwnerPersonID: ann.ID}); err != nil {
		t.Fatal(err)
	}
	if r.b, err = e.store.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "B", Kind: store.WorkspaceTeam, OwnerPersonID: r.bea.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: r.a.ID, PersonID: r.boss.ID, Role: store.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	for team, ws := range map[string]uuid.UUID{e2eTeam: r.a.ID, otherTeam: r.b.ID} {
		if _, err := workspace.BindWorkspace(ctx, e.store, "slack", team, ws); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// clickAs clicks the prompt's button labelled label as user of team.
func (e *slackEnv) clickAs(team, channel, thread string, m slacktest.Message, label, user, trigger string) {
	e.tb.Helper()
	for _, b := range buttonsOf(e.tb, m.Blocks) {
		if b.Text.Text != label {
			continue
		}
		env := e.slack.SendInteractive(slacktest.BlockActions(slacktest.Click{
			TeamID: team, UserID: user, UserName: strings.ToLower(user), Channel: channel, MessageTS: m.TS, ThreadTS: thread,
			ActionID: b.ActionID, Value: b.Value, Label: b.Text.Text, TriggerID: trigger, Blocks: m.Blocks, Text: m.Text,
		}))
		if _, err := e.slack.WaitAck(env, waitLong); err != nil {
			e.tb.Fatalf("the click on %q by %s was not acknowledged: %v", label, user, err)
		}
		return
	}
	e.tb.Fatalf("the prompt has no button %q: %s", label, m.Blocks)
}

// TestWorkspaceAdminsDecideApprovals: with approvals.deciders admins and no
// approvals.admins listed, the owner of team B's workspace cannot decide an
// approval in team A (an ephemeral refusal, the approval stays pending),
// nor can the starter, who is no admin; an admin of A's workspace decides it.
func TestWorkspaceAdminsDecideApprovals(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startGuard(t, db(t), "approvals: {deciders: admins}\n", nil)
		ctx := context.Background()
		teams := setUpTeams(t, e)
		const channel, ts = "C0ROLES", "1700001000.000100"

		e.mustPost(newEvent("EvRoles1", mention(channel, ts, "", alice, "list my routines")))
		p := e.prompt(channel, ts)
		e.waitIdle()
		conv := e.conversation(channel, ts)
		if ws, err := e.store.ConversationWorkspace(ctx, conv.ID); err != nil || ws == nil || *ws != teams.a.ID {
			t.Fatalf("the conversation in team A: want workspace A, got %v (%v)", ws, err)
		}
		aps, err := e.store.ApprovalListPending(ctx, conv.ID)
		if err != nil || len(aps) != 1 {
			t.Fatalf("pending approvals = %v, %v; want one", aps, err)
		}

		// Bea owns B's workspace; in A she is nobody.
		e.clickAs(otherTeam, channel, ts, p, "Allow once", bea, "trig-r-bea")
		eph := e.waitCalls("chat.postEphemeral", 1)
		if q := eph[0].Params; q.Get("user") != bea || !strings.Contains(q.Get("text"), "admin of this workspace") {
			t.Errorf("refusal = %v, want an ephemeral message to %s saying only an admin of this workspace decides", q, bea)
		}
		e.click(channel, ts, p, "Allow once", alice, "trig-r-alice")
		e.waitCalls("chat.postEphemeral", 2)
		if ap, _ := e.store.ApprovalGet(ctx, aps[0].ID); ap.Status != store.ApprovalPending {
			t.Fatalf("approval is %s after clicks by people who are not A's admins, want pending", ap.Status)
		}

		e.click(channel, ts, p, "Allow once", boss, "trig-r-boss")
		e.waitReply(channel, "Listed:")
		e.waitIdle()
		ap, _ := e.store.ApprovalGet(ctx, aps[0].ID)
		if ap.Status != store.ApprovalApproved {
			t.Errorf("approval is %s after the click of A's admin, want approved", ap.Status)
		}
	})
}

// TestWorkspaceAdminApprovesPairing: under the pairing policy, with no
// access.admins listed, an admin of the workspace team A is bound to may
// DM agents and approves a stranger of team A with !approve; the owner of
// B's workspace may not approve A's stranger.
func TestWorkspaceAdminApprovesPairing(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{config: "access:\n  dm_policy: pairing\n"})
		setUpTeams(t, e)

		e.mustPost(newEvent("EvStrangerR1", directMessage("D0MAL", "1700001100.000001", mallory, "hello")))
		code := pairingCode(t, shown(e.waitReply("D0MAL", "pairing code is")))

		// Bea, owner of B's workspace, DMs from team B: she is let in (an
		// admin of where she is) but A's stranger is not hers to approve.
		beaDM := directMessage("D0BEA", "1700001100.000002", bea, "!approve "+code)
		beaDM["team"] = otherTeam
		e.mustPost(signedEvent{body: slacktest.MustJSON(slacktest.EventCallback(otherTeam, "EvBeaApprove", beaDM)), secret: e2eSecret, signedAt: time.Now()})
		e.waitReply("D0BEA", "outside this workspace")

		e.mustPost(newEvent("EvBossApprove", directMessage("D0BOSS", "1700001100.000003", boss, "!approve "+code)))
		e.waitReply("D0BOSS", "Approved")
		e.mustPost(newEvent("EvStrangerR2", directMessage("D0MAL", "1700001100.000004", mallory, "now?")))
		e.waitReply("D0MAL", scriptedReply("User "+mallory, "now?"))
		e.waitIdle()
	})
}

// TestPinnedAwayAgentRefusesPolitely: a mention in team B of the agent
// pinned to A's workspace gets one ephemeral refusal a day and stores
// nothing.
func TestPinnedAwayAgentRefusesPolitely(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		ctx := context.Background()
		teams := setUpTeams(t, e)
		ag, err := e.store.AgentGetByName(ctx, e.app.Service.Agents().Default().Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.AgentPin(ctx, &store.AgentPinParams{AgentID: ag.ID, WorkspaceIDs: []uuid.UUID{teams.a.ID}}); err != nil {
			t.Fatal(err)
		}
		const chB = "C0BPIN"
		e.mustPost(mentionIn(otherTeam, "EvPinB1", chB, "1700001200.000001", "hello from B"))
		eph := e.waitCalls("chat.postEphemeral", 1)
		if q := eph[0].Params; q.Get("user") != alice || q.Get("channel") != chB || q.Get("text") != access.NoticePinned {
			t.Errorf("refusal = %v, want %q to %s in %s", q, access.NoticePinned, alice, chB)
		}
		e.mustPost(mentionIn(otherTeam, "EvPinB2", chB, "1700001200.000002", "anyone?"))
		// A mention in A is answered: the sign that B's second one was handled.
		e.mustPost(mentionIn(e2eTeam, "EvPinA", "C0APIN", "1700001200.000003", "hello from A"))
		e.waitReply("C0APIN", fallbackReply("hello from A"))
		e.waitIdle()
		if n := len(e.slack.Calls("chat.postEphemeral")); n != 1 {
			t.Errorf("%d ephemeral refusals for two mentions the same day, want 1", n)
		}
		if msgs := e.botMessages(chB); len(msgs) != 0 {
			t.Errorf("the agent pinned to A posted in team B: %+v", msgs)
		}
		for _, ts := range []string{"1700001200.000001", "1700001200.000002"} {
			if _, err := e.store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", otherTeam, chB, ts)}); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the refused mention at %s: want no conversation stored, got %v", ts, err)
			}
		}
	})
}

// TestSlackConnectSenderRefused: in a channel of team A shared with team B
// (Slack Connect), a mention by a user of team B (user_team B) is refused
// with one ephemeral reply and stores nothing; the same channel answers a
// user of team A.
func TestSlackConnectSenderRefused(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		e := startSlack(t, url, envOptions{})
		ctx := context.Background()
		setUpTeams(t, e)
		before := countRows(t, url)
		const shared = "C0SHARED"

		e.mustPost(newEvent("EvConnect1", slacktest.FromTeam(mention(shared, "1700001300.000001", "", bea, "hi from B"), otherTeam)))
		eph := e.waitCalls("chat.postEphemeral", 1)
		if q := eph[0].Params; q.Get("user") != bea || q.Get("text") != access.NoticeForeign {
			t.Errorf("refusal = %v, want %q to %s", q, access.NoticeForeign, bea)
		}
		if got := countRows(t, url); got != before {
			t.Fatalf("a mention from another team left rows behind: %+v, before %+v", got, before)
		}
		if _, err := e.store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", e2eTeam, shared, "1700001300.000001")}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the refused mention: want no conversation, got %v", err)
		}

		// A's own user in the same shared channel (Slack names her team too).
		e.mustPost(newEvent("EvConnect2", slacktest.FromTeam(mention(shared, "1700001300.000002", "", alice, "hi from A"), e2eTeam)))
		e.waitReply(shared, fallbackReply("hi from A"))
		e.waitIdle()
		if n := len(e.slack.Calls("chat.postEphemeral")); n != 1 {
			t.Errorf("%d ephemeral messages, want only the one refusal", n)
		}
	})
}

// TestWorkspaceAdminReadsItsAudit: a person's token reads the audit of a
// workspace they are an admin of, named by its id (the team id still works
// for the operator), and only that: not the whole audit, not another
// workspace's, and not as a plain member.
func TestWorkspaceAdminReadsItsAudit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		ctx := context.Background()
		teams := setUpTeams(t, e)
		// alice is a member of A: she uses it but may not read its audit.
		alicePerson, err := e.app.People.Ensure(ctx, "slack", e2eTeam, alice, "Alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: teams.a.ID, PersonID: alicePerson.ID, Role: store.RoleMember}); err != nil {
			t.Fatal(err)
		}
		rowIn := func(team, channel, call string) uuid.UUID {
			res, err := e.store.BindingEnsure(ctx, &store.BindingEnsureParams{
				Place:        store.Place{Platform: "slack", Workspace: team, Channel: channel},
				Conversation: store.ConversationCreateParams{Title: "t", Now: time.Now()}, Now: time.Now(),
			})
			if err != nil {
				t.Fatal(err)
			}
			conv := res.Binding.ConversationID
			id := uuid.New()
			if err := e.store.AuditRecord(ctx, &store.AuditRecord{ID: id, ConversationID: &conv, CallID: call, Agent: "atlas", Actor: "agent:atlas",
				Action: "deploy", Risk: "high", Decision: "confirm", Outcome: store.AuditOK, Detail: json.RawMessage(`{}`), CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			return id
		}
		inA, inB := rowIn(e2eTeam, "C0AUDA", "call-a"), rowIn(otherTeam, "C0AUDB", "call-b")

		token := func(person uuid.UUID, ws ...uuid.UUID) string {
			var out struct {
				Token string `json:"token"`
			}
			body := map[string]any{"person": person.String(), "workspaces": ws}
			if st := apiJSON(t, e, "POST", "/api/tokens", "", body, &out); st != http.StatusCreated && st != http.StatusOK {
				t.Fatalf("POST /api/tokens answered %d, want a token", st)
			}
			return out.Token
		}
		bossTok := token(teams.boss.ID, teams.a.ID, teams.b.ID)
		aliceTok := token(alicePerson.ID, teams.a.ID)
		ids := func(page *web.AuditPage) []uuid.UUID {
			out := []uuid.UUID{}
			for _, r := range page.Records {
				out = append(out, r.ID)
			}
			return out
		}

		var page web.AuditPage
		if st := apiJSON(t, e, "GET", "/api/audit?workspace="+teams.a.ID.String(), bossTok, nil, &page); st != http.StatusOK {
			t.Fatalf("A's admin reading A's audit answered %d, want 200", st)
		}
		if got := ids(&page); len(got) != 1 || got[0] != inA {
			t.Errorf("A's audit as A's admin = %v, want only the row in A %s", got, inA)
		}
		for _, c := range []struct{ what, query, token string }{
			{"the whole audit as A's admin", "", bossTok},
			{"B's audit as A's admin (not B's admin, though the token names B)", "?workspace=" + teams.b.ID.String(), bossTok},
			{"A's audit by team id as A's admin", "?workspace=" + e2eTeam, bossTok},
			{"A's audit as a member of A", "?workspace=" + teams.a.ID.String(), aliceTok},
		} {
			if st := apiJSON(t, e, "GET", "/api/audit"+c.query, c.token, nil, nil); st != http.StatusForbidden {
				t.Errorf("%s answered %d, want 403", c.what, st)
			}
		}
		// The operator reads by workspace id and by team id alike.
		for _, ws := range []string{teams.b.ID.String(), otherTeam} {
			got := ids(e.auditPage(t, url.Values{"workspace": {ws}}))
			if len(got) != 1 || got[0] != inB {
				t.Errorf("the operator's audit of workspace=%s = %v, want only the row in B %s", ws, got, inB)
			}
		}
	})
}

// apiJSON calls the service's API with a bearer token ("" for the loopback
// operator) and decodes the answer into out when it is not nil.
func apiJSON(t *testing.T, e *slackEnv, method, path, token string, body, out any) int {
	t.Helper()
	var rd *strings.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	} else {
		rd = strings.NewReader("")
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decoding: %v", method, path, err)
		}
	}
	return resp.StatusCode
}
