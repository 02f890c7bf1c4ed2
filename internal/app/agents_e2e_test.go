package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
)

// Several agents in one conversation, through the real app on the fake
// Slack and Discord, on both stores.

const (
	teamChannel  = "C0TEAM"
	loopChannel  = "C0LOOP"
	directChanel = "C0DIRECT"
)

// agentsConfig writes one scripted model per agent (name → script YAML)
// and returns a switchboard.yaml declaring them with extra settings.
func agentsConfig(tb testing.TB, scripts map[string]string, agents, extra string) string {
	tb.Helper()
	dir := tb.TempDir()
	for name, body := range scripts {
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
		agents = strings.ReplaceAll(agents, "{{"+name+"}}", "scripted:"+path)
	}
	return openAccess + "agents:\n" + agents + extra
}

// replyAgents lists the agents of a conversation's replies, in log order
// (commands' answers left out).
func replyAgents(tb testing.TB, st store.Store, conv uuid.UUID) []string {
	tb.Helper()
	var out []string
	for _, e := range logEntries(tb, st, conv, store.EntryAssistant) {
		if e.Author != store.SystemAuthor { // a command's answer
			out = append(out, decode[core.AssistantContent](tb, e).Agent)
		}
	}
	return out
}

// teamScripts are three agents that say who they are: a generalist and two
// specialists.
var teamScripts = map[string]string{
	"atlas":  "fallback:\n  text: \"atlas (generalist) here.\"\n",
	"ledger": "fallback:\n  text: \"ledger (billing) here.\"\n",
	"forge":  "fallback:\n  text: \"forge (infra) here.\"\n",
}

const teamAgents = `  - name: atlas
    model: {{atlas}}
    role: generalist
    answers: {default: true, channels: [C0TEAM]}
  - name: ledger
    model: {{ledger}}
    role: specialist
    domains:
      - name: billing
        keywords: [invoice, refund, payment, "credit card"]
        description: Subscriptions, charges and receipts.
    answers: {channels: [C0TEAM]}
  - name: forge
    model: {{forge}}
    role: specialist
    domains:
      - name: infra
        keywords: [deploy, server, database, outage]
    answers: {channels: [C0TEAM]}
`

const teamExtra = `channels:
  C0TEAM:
    fallback: [forge]
`

// TestAgentsWhoSpeaksNextSlack: in a channel three agents answer, the
// server picks who speaks: named agents first in the order named; for a
// one-domain question the specialist, then the generalist; for a question
// across domains the generalist first; nothing matching: the channel's
// fallback. Each reply is posted in the thread in that order.
func TestAgentsWhoSpeaksNextSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, teamScripts, teamAgents, teamExtra)})
		tests := []struct {
			ts, text string
			want     []string
		}{
			{"1700000001.000100", "forge, then @ledger: is the card on file still valid?", []string{"forge", "ledger"}},
			{"1700000002.000100", "Why was my invoice refunded twice?", []string{"ledger", "atlas"}},
			{"1700000003.000100", "The deploy broke the invoice page", []string{"atlas", "ledger", "forge"}},
			{"1700000004.000100", "What a lovely day", []string{"forge"}},
		}
		for i, tc := range tests {
			e.mustPost(newEvent(fmt.Sprintf("EvTeam%d", i), mention(teamChannel, tc.ts, "", alice, tc.text)))
		}
		e.waitIdle()
		for _, tc := range tests {
			conv := e.conversation(teamChannel, tc.ts)
			if got := replyAgents(t, e.store, conv.ID); !slices.Equal(got, tc.want) {
				t.Errorf("%q was answered by %v, want %v in that order", tc.text, got, tc.want)
			}
			var shownOrder []string
			for _, m := range e.botMessages(teamChannel) {
				if m.ThreadTS == tc.ts {
					shownOrder = append(shownOrder, strings.Fields(shown(m))[0])
				}
			}
			if !slices.Equal(shownOrder, tc.want) {
				t.Errorf("%q: the thread shows replies from %v, want %v", tc.text, shownOrder, tc.want)
			}
		}
	})
}

// TestAgentsInviteSlack: !invite brings an agent into a conversation, and a
// person's next message is routed among the agents taking part; !remove
// takes it out again.
func TestAgentsInviteSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		// Only atlas answers in this channel; ledger is invited.
		agents := strings.ReplaceAll(teamAgents, "answers: {channels: [C0TEAM]}", "answers: {}")
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, teamScripts, agents, "")})
		const ts = "1700000100.000100"
		e.mustPost(newEvent("EvInv1", mention(teamChannel, ts, "", alice, "hello")))
		e.waitIdle()
		conv := e.conversation(teamChannel, ts).ID
		e.mustPost(newEvent("EvInv2", mention(teamChannel, "1700000101.000100", ts, alice, "!invite ledger")))
		e.waitReply(teamChannel, "ledger joined this conversation")
		e.mustPost(newEvent("EvInv3", mention(teamChannel, "1700000102.000100", ts, alice, "my invoice is wrong")))
		e.waitIdle()
		if got, want := replyAgents(t, e.store, conv), []string{"atlas", "ledger", "atlas"}; !slices.Equal(got, want) {
			t.Fatalf("replies after the invitation by %v, want %v", got, want)
		}
		e.mustPost(newEvent("EvInv4", mention(teamChannel, "1700000103.000100", ts, alice, "!remove ledger")))
		e.waitReply(teamChannel, "ledger left this conversation")
		e.mustPost(newEvent("EvInv5", mention(teamChannel, "1700000104.000100", ts, alice, "another invoice question")))
		e.waitIdle()
		if got, want := replyAgents(t, e.store, conv), []string{"atlas", "ledger", "atlas", "atlas"}; !slices.Equal(got, want) {
			t.Fatalf("replies after the removal by %v, want %v", got, want)
		}
	})
}

// pairScripts are an adversarial pair: each always addresses the other.
var pairScripts = map[string]string{
	"ping": "fallback:\n  text: \"@pong over to you\"\n",
	"pong": "fallback:\n  text: \"@ping no, over to you\"\n",
}

const pairAgents = `  - name: ping
    model: {{ping}}
    answers: {default: true}
  - name: pong
    model: {{pong}}
`

// agentReplies counts a conversation's agent replies and loop notices.
func agentReplies(tb testing.TB, st store.Store, conv uuid.UUID) (replies, notices int) {
	tb.Helper()
	for _, e := range logEntries(tb, st, conv, "") {
		switch e.Kind {
		case store.EntryAssistant:
			replies++
		case store.EntrySystem:
			if strings.Contains(decode[core.SystemContent](tb, e).Text, "stop answering each other") {
				notices++
			}
		}
	}
	return replies, notices
}

// TestAgentsLoopGuardSlack: two agents that always address each other stop
// after exactly 6 messages in a group thread, with one notice shown there;
// a person's message opens it again for 6 more. Between the two agents
// alone they stop after 3.
func TestAgentsLoopGuardSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, pairScripts, pairAgents, "")})
		const ts = "1700000200.000100"
		e.mustPost(newEvent("EvLoop1", mention(loopChannel, ts, "", alice, "@ping start")))
		e.waitIdle()
		conv := e.conversation(loopChannel, ts).ID
		if r, n := agentReplies(t, e.store, conv); r != 6 || n != 1 {
			t.Fatalf("group: %d agent messages and %d notices, want exactly 6 and 1", r, n)
		}
		e.waitReply(loopChannel, "stop answering each other until someone writes")

		e.mustPost(newEvent("EvLoop2", mention(loopChannel, "1700000201.000100", ts, alice, "@pong once more")))
		e.waitIdle()
		if r, n := agentReplies(t, e.store, conv); r != 12 || n != 2 {
			t.Fatalf("after a person wrote: %d agent messages and %d notices, want 12 and 2", r, n)
		}

		direct, err := e.app.Service.OpenAgentTalk(context.Background(), core.AgentTalk{
			From: "ping", To: "pong", Text: "@pong let us talk",
			Place: &store.Place{Platform: "slack", Workspace: e2eTeam, Channel: directChanel},
		})
		if err != nil {
			t.Fatal(err)
		}
		e.waitIdle()
		if r, n := agentReplies(t, e.store, direct); r != 3 || n != 1 {
			t.Fatalf("one-to-one: %d agent messages and %d notices, want exactly 3 and 1", r, n)
		}
		e.waitReply(directChanel, "3 messages in a row")
	})
}

// TestAgentsNoRunawayLoop: the adversarial pair in 100 group threads on the
// fake Slack, one per channel (a person mentions ping, the two agents
// answer each other):
// every one stops at exactly 6 agent messages with one notice, and each
// thread shows that notice, so 0 runaway loops.
func TestAgentsNoRunawayLoop(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) { noRunawayLoop(t, db(t)) })
}

func noRunawayLoop(t *testing.T, db string) {
	e := startSlack(t, db, envOptions{config: agentsConfig(t, pairScripts, pairAgents, "")})
	const runs = 100
	const ts = "1700001000.000100"
	channel := func(i int) string { return fmt.Sprintf("C0RUN%03d", i) }
	start := time.Now()
	for i := range runs {
		e.mustPost(newEvent(fmt.Sprintf("EvRunaway%d", i), mention(channel(i), ts, "", alice, "@ping start")))
	}
	e.waitIdleFor(10*waitLong, 50*time.Millisecond)
	t.Logf("%d runs in %s", runs, time.Since(start))
	runaway := 0
	for i := range runs {
		notices := 0
		for _, m := range e.botMessages(channel(i)) {
			if m.ThreadTS == ts && strings.Contains(m.Text+shown(m), "stop answering each other") {
				notices++
			}
		}
		conv := e.conversation(channel(i), ts).ID
		if r, n := agentReplies(t, e.store, conv); r != 6 || n != 1 || notices != 1 {
			runaway++
			t.Logf("run %d: %d agent messages, %d notices in the log, %d shown in the thread", i, r, n, notices)
		}
	}
	if runaway != 0 {
		t.Fatalf("%d of %d runs did not stop at exactly 6 agent messages with one notice", runaway, runs)
	}
}

// TestAgentsDoneSlack: an agent that called done is not woken by the reply
// to its own message, although that reply names it.
func TestAgentsDoneSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		scripts := map[string]string{
			"finisher": "turns:\n  - tool_calls: [{name: done, input: {summary: finished}}]\n  - text: \"@echoer over to you\"\n" +
				"fallback:\n  text: \"@echoer still here\"\n",
			"echoer": "fallback:\n  text: \"@finisher got it, thanks\"\n",
		}
		agents := "  - name: finisher\n    model: {{finisher}}\n    answers: {default: true}\n  - name: echoer\n    model: {{echoer}}\n"
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, scripts, agents, "")})
		const ts = "1700000300.000100"
		e.mustPost(newEvent("EvDone1", mention(loopChannel, ts, "", alice, "@finisher wrap this up")))
		e.waitIdle()
		conv := e.conversation(loopChannel, ts).ID
		if got, want := replyAgents(t, e.store, conv), []string{"finisher", "echoer"}; !slices.Equal(got, want) {
			t.Fatalf("replies by %v, want %v: the done agent must not answer the reply to its own message", got, want)
		}
		parts, err := e.app.Service.Participants(context.Background(), conv)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			if p.Author == store.AgentAuthor("finisher") && p.DoneSeq == nil {
				t.Errorf("finisher is not marked done")
			}
		}
	})
}

// TestAgentsRepeatedFailureStoppedSlack: a call failing three times with
// the same arguments in one turn is stopped the fourth time with a tool
// error, without running, and the turn ends there: one line in the thread
// says so, and the model is not called again.
func TestAgentsRepeatedFailureStoppedSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		bad := "  - tool_calls: [{name: done, input: {summary: 5}}]\n"
		scripts := map[string]string{"stubborn": "turns:\n" + strings.Repeat(bad, 5) + "  - text: \"I give up.\"\n"}
		agents := "  - name: stubborn\n    model: {{stubborn}}\n"
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, scripts, agents, "")})
		const ts = "1700000400.000100"
		e.mustPost(newEvent("EvFail1", mention(loopChannel, ts, "", alice, "try it")))
		e.waitReply(loopChannel, "Stopped: the tool done failed 3 times")
		e.waitIdle()
		conv := e.conversation(loopChannel, ts).ID
		results := logEntries(t, e.store, conv, store.EntryToolResult)
		if len(results) != 4 {
			t.Fatalf("%d tool results, want 4", len(results))
		}
		for i, r := range results {
			c := decode[core.ToolResultContent](t, r)
			stopped := strings.Contains(string(c.Output), "Stopped: done failed 3 times")
			if !c.IsError || stopped != (i == 3) {
				t.Errorf("result %d: error %v, stopped %v (%s); want an error, stopped the 4th", i+1, c.IsError, stopped, c.Output)
			}
		}
		usage, err := e.store.UsageList(context.Background(), conv)
		if err != nil || len(usage) != 4 {
			t.Fatalf("%d model calls (%v); want 4: none after the stop", len(usage), err)
		}
		if replies := logEntries(t, e.store, conv, store.EntryAssistant); len(replies) != 0 {
			t.Fatalf("%d replies after the stop; want none", len(replies))
		}
		var lines int
		for _, m := range e.botMessages(loopChannel) {
			if strings.Contains(shown(m), "Stopped: the tool done failed 3 times") {
				lines++
			}
		}
		if lines != 1 {
			t.Fatalf("%d lines about the stop in the thread; want one", lines)
		}
	})
}

// TestAgentsMessageRowsLikePersonSlack: a message an agent hands on and the
// same message from a person leave the same log and work rows, apart from
// the author.
func TestAgentsMessageRowsLikePersonSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		scripts := map[string]string{
			"relay":  "fallback:\n  text: \"@target hi\"\n",
			"target": "fallback:\n  text: \"target here.\"\n",
		}
		agents := "  - name: relay\n    model: {{relay}}\n    answers: {default: true}\n  - name: target\n    model: {{target}}\n"
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, scripts, agents, "")})
		e.mustPost(newEvent("EvRow1", mention(loopChannel, "1700000500.000100", "", alice, "@target hi")))
		e.mustPost(newEvent("EvRow2", mention(loopChannel, "1700000501.000100", "", alice, "relay, greet target")))
		e.waitIdle()
		fromPerson := e.conversation(loopChannel, "1700000500.000100").ID
		fromAgent := e.conversation(loopChannel, "1700000501.000100").ID

		row := func(conv uuid.UUID, author store.Author) (*store.Entry, *store.WorkItem) {
			t.Helper()
			for _, en := range logEntries(t, e.store, conv, store.EntryUser) {
				if en.Author != author {
					continue
				}
				items, err := e.store.WorkList(context.Background(), &store.WorkListParams{Kind: core.WorkTurn, ConversationID: &conv})
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range items {
					var args core.TurnArgs
					if err := json.Unmarshal(it.Payload, &args); err != nil {
						t.Fatal(err)
					}
					if args.TriggerSeq == en.SeqValue() {
						return en, it
					}
				}
				t.Fatalf("no turn answers the entry of %s", author)
			}
			t.Fatalf("no user entry by %s", author)
			return nil, nil
		}
		pe, pw := row(fromPerson, store.UserAuthor(alice))
		ae, aw := row(fromAgent, store.AgentAuthor("relay"))
		pc, ac := decode[core.UserContent](t, pe), decode[core.UserContent](t, ae)
		if pe.Kind != ae.Kind || pc.Text != ac.Text || (pe.TurnID == nil) != (ae.TurnID == nil) {
			t.Errorf("entries differ: person %s %q turn %v, agent %s %q turn %v", pe.Kind, pc.Text, pe.TurnID, ae.Kind, ac.Text, ae.TurnID)
		}
		var pa, aa core.TurnArgs
		_ = json.Unmarshal(pw.Payload, &pa)
		_ = json.Unmarshal(aw.Payload, &aa)
		pa.TriggerSeq, aa.TriggerSeq = 0, 0 // where the entry landed in its log
		if pw.Kind != aw.Kind || pw.MaxAttempts != aw.MaxAttempts || pw.Priority != aw.Priority || pw.State != aw.State ||
			fmt.Sprint(pa) != fmt.Sprint(aa) {
			t.Errorf("work differs: person %s %+v (max %d, %s), agent %s %+v (max %d, %s)", pw.Kind, pa, pw.MaxAttempts, pw.State, aw.Kind, aa, aw.MaxAttempts, aw.State)
		}
		if aa.Agent != "target" {
			t.Errorf("the agent's message woke %q, want target", aa.Agent)
		}
		if got := replyAgents(t, e.store, fromAgent); !slices.Equal(got, []string{"relay", "target"}) {
			t.Errorf("replies by %v, want relay then target", got)
		}
	})
}

// TestAgentsDiscord: on Discord too, the specialist answers a one-domain
// question before the generalist, a named agent goes first, and the
// adversarial pair stops after exactly 6 messages with one notice posted;
// a person's message opens the channel again.
func TestAgentsDiscord(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		scripts := map[string]string{}
		for k, v := range teamScripts {
			scripts[k] = v
		}
		for k, v := range pairScripts {
			scripts[k] = v
		}
		const domain, named, loop = "3100000000000000001", "3100000000000000002", "3100000000000000003"
		team := strings.ReplaceAll(teamAgents, teamChannel, domain)
		cfg := agentsConfig(t, scripts, team+strings.ReplaceAll(pairAgents, "answers: {default: true}", "answers: {}"), "")
		e := discordStartWith(t, db, 0, cfg)

		e.mention(domain, discordAlice, "my refund never arrived")
		conv := e.settle(domain)
		if got, want := replyAgents(t, e.store, conv), []string{"ledger", "atlas"}; !slices.Equal(got, want) {
			t.Errorf("one-domain question answered by %v, want %v", got, want)
		}
		// With several agents each posts under its own name, through the
		// channel's webhook.
		var msgs []*discordtest.Message
		for _, m := range e.fake.Messages(domain, "") {
			if m.WebhookID != "" {
				msgs = append(msgs, m)
			}
		}
		if len(msgs) != 2 || !strings.HasPrefix(msgs[0].Content, "ledger") || !strings.HasPrefix(msgs[1].Content, "atlas") ||
			!strings.EqualFold(msgs[0].Author.Username, "ledger") || !strings.EqualFold(msgs[1].Author.Username, "atlas") {
			t.Errorf("the channel shows %d agent messages (%+v); want ledger's then atlas's, each under its name", len(msgs), msgs)
		}

		e.mention(named, discordAlice, "forge, is the database up?")
		if got, want := replyAgents(t, e.store, e.settle(named)), []string{"forge"}; !slices.Equal(got, want) {
			t.Errorf("a question naming forge answered by %v, want %v", got, want)
		}

		e.mention(loop, discordAlice, "@ping start")
		conv = e.settle(loop)
		if r, n := agentReplies(t, e.store, conv); r != 6 || n != 1 {
			t.Fatalf("group: %d agent messages and %d notices, want exactly 6 and 1", r, n)
		}
		e.waitBotMessage(loop, "stop answering each other until someone writes")
		e.mention(loop, discordAlice, "@pong again")
		// The gateway hands the message over on its own time: wait for it.
		discordPoll(t, "the person's second message in the log", func() (bool, string) {
			n := len(logEntries(t, e.store, conv, store.EntryUser))
			return n > 6, fmt.Sprintf("%d user entries", n)
		})
		e.settle(loop)
		if r, n := agentReplies(t, e.store, conv); r != 12 || n != 2 {
			t.Fatalf("after a person wrote: %d agent messages and %d notices, want 12 and 2", r, n)
		}
	})
}

// TestAgentsQueueSurvivesPauseAndFailureSlack: agents queued after the one
// answering (forge, then ledger) still get their turns when forge's turn
// pauses for an approval (after a person allows the call) and when the
// first agent's turn fails.
func TestAgentsQueueSurvivesPauseAndFailureSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		scripts := map[string]string{
			"forge": `turns:
  - after_tool: routine_list
    text: "forge listed them."
  - when_last_user_contains: "check the routines"
    tool_calls: [{name: routine_list, input: {}}]
fallback:
  text: "forge here."
`,
			"ledger":  "fallback:\n  text: \"ledger here.\"\n",
			"breaker": "fallback:\n  failure: {status: 400, message: \"breaker is broken\"}\n",
		}
		agents := "  - name: forge\n    model: {{forge}}\n    answers: {default: true}\n  - name: ledger\n    model: {{ledger}}\n" +
			"  - name: breaker\n    model: {{breaker}}\n"
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, scripts, agents, "policy:\n  tools: {routine_list: confirm}\n")})
		const paused, failed = "1700000600.000100", "1700000601.000100"

		e.mustPost(newEvent("EvQueue1", mention(loopChannel, paused, "", alice, "forge, then @ledger: check the routines")))
		p := e.prompt(loopChannel, paused)
		e.waitIdle()
		conv := e.conversation(loopChannel, paused).ID
		if got := replyAgents(t, e.store, conv); len(got) != 0 {
			t.Fatalf("replies %v while forge waits for the approval, want none", got)
		}
		e.click(loopChannel, paused, p, "Allow once", alice, "trig-queue-alice")
		e.waitReply(loopChannel, "ledger here.")
		e.waitIdle()
		if got, want := replyAgents(t, e.store, conv), []string{"forge", "ledger"}; !slices.Equal(got, want) {
			t.Errorf("after the approval, replies by %v, want %v: ledger's queued turn must survive forge's pause", got, want)
		}

		// Denied: the call's result is the person's, and the queue still
		// goes on after forge's answer to it.
		const denied = "1700000602.000100"
		e.mustPost(newEvent("EvQueue3", mention(loopChannel, denied, "", alice, "forge, then @ledger: check the routines")))
		p = e.prompt(loopChannel, denied)
		e.waitIdle()
		e.click(loopChannel, denied, p, "Deny", alice, "trig-queue-deny")
		e.waitIdle()
		if got, want := replyAgents(t, e.store, e.conversation(loopChannel, denied).ID), []string{"forge", "ledger"}; !slices.Equal(got, want) {
			t.Errorf("after a denial, replies by %v, want %v", got, want)
		}

		e.mustPost(newEvent("EvQueue2", mention(loopChannel, failed, "", alice, "breaker, then @ledger: hello")))
		e.waitIdle()
		conv = e.conversation(loopChannel, failed).ID
		if got, want := replyAgents(t, e.store, conv), []string{"ledger"}; !slices.Equal(got, want) {
			t.Errorf("after breaker failed, replies by %v, want %v", got, want)
		}
		if errs := logEntries(t, e.store, conv, store.EntryError); len(errs) != 1 {
			t.Errorf("%d error entries, want breaker's one", len(errs))
		}
	})
}

// TestAgentsDoneMarkerSlack: the configured done marker works as the done
// tool does: removed from the reply people see, and its writer is not
// woken by the reply to its own message.
func TestAgentsDoneMarkerSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		scripts := map[string]string{
			"finisher": "fallback:\n  text: \"@echoer over to you [done]\"\n",
			"echoer":   "fallback:\n  text: \"@finisher got it, thanks\"\n",
		}
		agents := "  - name: finisher\n    model: {{finisher}}\n    done_marker: \"[done]\"\n    answers: {default: true}\n" +
			"  - name: echoer\n    model: {{echoer}}\n"
		e := startSlack(t, db(t), envOptions{config: agentsConfig(t, scripts, agents, "")})
		const ts = "1700000310.000100"
		e.mustPost(newEvent("EvMarker1", mention(loopChannel, ts, "", alice, "@finisher wrap this up")))
		e.waitIdle()
		conv := e.conversation(loopChannel, ts).ID
		if got, want := replyAgents(t, e.store, conv), []string{"finisher", "echoer"}; !slices.Equal(got, want) {
			t.Fatalf("replies by %v, want %v: the agent that wrote its marker must not answer the reply to its own message", got, want)
		}
		for _, m := range e.botMessages(loopChannel) {
			if strings.Contains(m.Text+shown(m), "[done]") {
				t.Errorf("a message shows the done marker: %q", m.Text+shown(m))
			}
		}
	})
}

// TestSideThreadsToldPerChannelSlack: agents are told about side threads
// in the words of side_threads.prompt, with the agents they can reach, in
// the stable block of the prompt; a channel with side_threads.tell false
// tells them nothing.
func TestSideThreadsToldPerChannelSlack(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		env := anthropicEnv(fake)
		config := openAccess + "agents:\n  - name: atlas\n    model: anthropic:claude-sonnet-4-5\n    answers: {default: true}\n" +
			"  - name: nova\n    model: anthropic:claude-sonnet-4-5\n" +
			"side_threads:\n  prompt: \"Consult privately with a dm tag.\"\nchannels:\n  C0QUIET:\n    side_threads: {tell: false}\n"
		e := startSlack(t, db(t), envOptions{env: env, config: config})
		fake.Push(modeltest.Reply{Text: "Told."})
		e.mustPost(newEvent("EvTell1", mention("C0TOLD", "1700002100.000001", "", alice, "hello")))
		e.waitReply("C0TOLD", "Told.")
		fake.Push(modeltest.Reply{Text: "Not told."})
		e.mustPost(newEvent("EvTell2", mention("C0QUIET", "1700002100.000002", "", alice, "hello")))
		e.waitReply("C0QUIET", "Not told.")
		reqs := fake.Requests()
		if len(reqs) != 2 {
			t.Fatalf("the fake model got %d requests, want 2", len(reqs))
		}
		if sys := systemOf(t, reqs[0].JSON()); !strings.Contains(sys, "Consult privately with a dm tag.") || !strings.Contains(sys, "Agents you can reach: nova.") {
			t.Errorf("in C0TOLD the system prompt lacks the side-thread words or the agents:\n%s", sys)
		}
		if sys := systemOf(t, reqs[1].JSON()); strings.Contains(sys, "Consult privately") || strings.Contains(sys, "Agents you can reach") {
			t.Errorf("in C0QUIET (tell: false) the system prompt tells of side threads:\n%s", sys)
		}
	})
}
