package app_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/clitest"
	"github.com/switchboardhq/switchboard/store"
)

// An agent on the Claude Code CLI, through the real service: a Slack
// mention is answered by the CLI (the fake of internal/clitest, which
// prints what the real one prints), and a second mention in the thread
// resumes the CLI's session, found again in the log.

const cliAgents = `  - name: coder
    model: claude-code:sonnet
    persona: You write and fix code.
`

// startCLI starts the service with the agent coder on the fake Claude Code
// CLI running scenario; data is where the agents' directories go.
func startCLI(t *testing.T, db databaseFunc, scenario, data string) (*slackEnv, *clitest.Fake) {
	t.Helper()
	return startCLIWith(t, db, scenario, data, envOptions{config: openAccess + "agents:\n" + cliAgents})
}

func startCLIWith(t *testing.T, db databaseFunc, scenario, data string, opts envOptions) (*slackEnv, *clitest.Fake) {
	t.Helper()
	fake := clitest.Build(t)
	opts.env = map[string]string{}
	for _, kv := range fake.Env(scenario) {
		k, v, _ := strings.Cut(kv, "=")
		opts.env[k] = v
	}
	opts.cli.DataDir, opts.cli.ClaudeCodePath = data, fake.Claude
	opts.cli.PassEnv = []string{"FAKECLI_SCENARIO", "FAKECLI_STATE", "FAKECLI_LOG"}
	return startSlack(t, db(t), opts), fake
}

func TestSlackClaudeCodeAgentResumesItsSession(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		data := t.TempDir()
		e, fake := startCLI(t, db, "text", data)
		const channel, thread = "C0CODE", "1700000900.000100"

		e.mustPost(newEvent("EvCLI1", mention(channel, thread, "", alice, "write a test")))
		first := e.waitReply(channel, "Echo: [User "+alice+"] write a test")
		e.waitIdle()
		if !first.Streamed {
			t.Errorf("the CLI's answer was not streamed: %+v", first)
		}
		e.mustPost(newEvent("EvCLI2", mention(channel, "1700000900.000200", thread, alice, "now make it pass")))
		e.waitReply(channel, "Echo: [User "+alice+"] now make it pass")
		e.waitIdle()

		calls := fake.Calls(t)
		if len(calls) != 2 {
			t.Fatalf("the CLI ran %d times, want 2", len(calls))
		}
		conv := e.conversation(channel, thread)
		answers := e.entries(conv.ID, store.EntryAssistant)
		if len(answers) != 2 {
			t.Fatalf("%d assistant entries, want 2", len(answers))
		}
		s1 := decode[core.AssistantContent](t, answers[0]).Session
		s2 := decode[core.AssistantContent](t, answers[1]).Session
		if s1 == nil || s1.Provider != "claude-code" || s1.ID == "" {
			t.Fatalf("the first answer recorded session %+v, want the CLI's", s1)
		}
		if calls[0].Resume != "" {
			t.Errorf("the first turn resumed %q", calls[0].Resume)
		}
		if calls[1].Resume != s1.ID {
			t.Errorf("the second turn resumed %q, want the first turn's session %q", calls[1].Resume, s1.ID)
		}
		if s2 == nil || s2.ID != s1.ID {
			t.Errorf("the second answer recorded session %+v, want %q again", s2, s1.ID)
		}
		if strings.Contains(calls[1].Stdin, "write a test") || !strings.Contains(calls[1].Stdin, "now make it pass") {
			t.Errorf("the resumed call sent %q: want only the new message", calls[1].Stdin)
		}
		wantDir, _ := filepath.Abs(filepath.Join(data, "agents", "coder", "work"))
		for i, c := range calls {
			if got, _ := filepath.EvalSymlinks(c.Dir); got != mustEval(t, wantDir) {
				t.Errorf("call %d ran in %q, want the agent's working directory %q", i, c.Dir, wantDir)
			}
			if !strings.Contains(strings.Join(c.Args, " "), "--append-system-prompt") || !strings.Contains(strings.Join(c.Args, " "), "You write and fix code.") {
				t.Errorf("call %d did not carry the agent's persona: %q", i, c.Args)
			}
		}
		usage, err := e.store.UsageList(context.Background(), conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(usage) != 2 {
			t.Fatalf("%d usage rows, want one per CLI call", len(usage))
		}
		for _, u := range usage {
			if u.Provider != "claude-code" || u.CostMicroUSD != 1235 || u.InputTokens != 100 || u.CachedTokens != 20 || u.OutputTokens != 12 {
				t.Errorf("usage row %+v, want claude-code with the CLI's tokens and its reported cost (1235 micro-USD)", u)
			}
		}
	})
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	got, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A CLI that is not logged in: the person who asked is told so, with how to
// fix it, and /readyz shows the probe's needs_auth.
func TestSlackClaudeCodeNotLoggedIn(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e, fake := startCLI(t, db, "noauth", t.TempDir())
		const channel, thread = "C0NOAUTH", "1700000950.000100"
		e.mustPost(newEvent("EvCLINoAuth", mention(channel, thread, "", alice, "write a test")))
		got := e.waitReply(channel, "not logged in")
		e.waitIdle()
		if !strings.Contains(shown(got), "claude auth login") {
			t.Errorf("the reply %q does not say how to log the CLI in", shown(got))
		}
		if n := len(fake.Calls(t)); n != 1 {
			t.Errorf("the CLI ran %d times; a login problem is not retried", n)
		}

		var body string
		poll(t, "/readyz to show the CLI probe", func() (bool, string) {
			resp, err := e.http.Get(e.base + "/readyz")
			if err != nil {
				return false, err.Error()
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			body = string(raw)
			return resp.StatusCode == 200 && strings.Contains(body, "cli coder (claude-code): needs_auth"), body
		})
		if !strings.Contains(body, "claude auth login") || !strings.Contains(body, "2.1.197") {
			t.Errorf("/readyz = %q, want the version and how to log in", body)
		}
	})
}

// A CLI that crashes mid-answer is run again: the person sees one answer,
// not the cut one, and the log has no error.
func TestSlackClaudeCodeCrashIsRetried(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e, fake := startCLI(t, db, "crash_once", t.TempDir())
		const channel, thread = "C0CRASH", "1700000980.000100"
		e.mustPost(newEvent("EvCLICrash", mention(channel, thread, "", alice, "write a test")))
		want := "Echo: [User " + alice + "] write a test"
		got := e.waitReply(channel, want)
		e.waitIdle()
		if shown(got) != want {
			t.Errorf("the reply shows %q, want exactly %q (nothing of the crashed attempt)", shown(got), want)
		}
		if msgs := e.botMessages(channel); len(msgs) != 1 {
			t.Errorf("%d bot messages, want 1: %+v", len(msgs), msgs)
		}
		if n := len(fake.Calls(t)); n != 2 {
			t.Errorf("the CLI ran %d times, want 2 (the crash and the retry)", n)
		}
		e.checkOneReply(e.conversation(channel, thread).ID, "write a test", want)
	})
}

// The CLI reaches Switchboard's other agents through /mcp: the fake calls
// the tool helper there with the operator token (as Claude Code does with
// its --mcp-config), the helper agent runs a real turn, and its answer is
// in the CLI agent's reply.
func TestSlackClaudeCodeCallsAnotherAgentThroughMCP(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		script := filepath.Join(t.TempDir(), "helper.yaml")
		if err := os.WriteFile(script, []byte("name: helper\nchunk_delay: 0s\nfallback:\n  text: \"Six times seven is 42\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		agents := cliAgents + "  - name: helper\n    model: scripted:" + script + "\n    persona: You do arithmetic.\n"
		e, fake := startCLIWith(t, db, "tool", t.TempDir(), envOptions{
			config:   openAccess + "agents:\n" + agents,
			addr:     freeAddr(t),
			apiToken: "e2e-operator-token-123",
		})
		const channel, thread = "C0MCP", "1700000990.000100"
		e.mustPost(newEvent("EvCLIMCP", mention(channel, thread, "", alice, "<@coder> ask the helper")))
		got := e.waitReply(channel, "The helper says Six times seven is 42.")
		e.waitIdle()
		if !strings.HasPrefix(shown(got), "Let me ask the helper.") {
			t.Errorf("the reply shows %q, want the CLI's text before and after the call", shown(got))
		}
		call := fake.Calls(t)[0]
		args := strings.Join(call.Args, " ")
		if !strings.Contains(args, "/mcp") || !strings.Contains(args, "--disallowedTools mcp__switchboard__coder") || strings.Contains(args, "e2e-operator-token-123") || !call.MCPTokenSet {
			t.Errorf("the CLI was started with %q (token variable set: %v); want /mcp, itself left out, the token only in its environment", args, call.MCPTokenSet)
		}
		// Only the helper's scripted model says "Six times seven is 42";
		// the fake without an MCP server would have said "42".
	})
}

// freeAddr is a loopback address with a port free now, for a service whose
// address must be known before it starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// An agent on the Codex CLI: the second mention resumes the thread, and
// since Codex reports the thread's running totals, the usage of each call
// is what that call added (the totals travel in the log with the session).
func TestSlackCodexAgentResumesItsThread(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := clitest.Build(t)
		opts := envOptions{config: openAccess + "agents:\n  - name: coder\n    model: codex:default\n", env: map[string]string{}}
		for _, kv := range fake.Env("text") {
			k, v, _ := strings.Cut(kv, "=")
			opts.env[k] = v
		}
		opts.cli.DataDir, opts.cli.CodexPath = t.TempDir(), fake.Codex
		opts.cli.PassEnv = []string{"FAKECLI_SCENARIO", "FAKECLI_STATE", "FAKECLI_LOG"}
		e := startSlack(t, db(t), opts)
		const channel, thread = "C0CODEX", "1700000995.000100"
		e.mustPost(newEvent("EvCodex1", mention(channel, thread, "", alice, "write a test")))
		e.waitReply(channel, "Echo: [User "+alice+"] write a test")
		e.waitIdle()
		e.mustPost(newEvent("EvCodex2", mention(channel, "1700000995.000200", thread, alice, "now make it pass")))
		e.waitReply(channel, "Echo: [User "+alice+"] now make it pass")
		e.waitIdle()

		calls := fake.Calls(t)
		if len(calls) != 2 {
			t.Fatalf("the CLI ran %d times, want 2", len(calls))
		}
		if calls[0].Resume != "" || calls[1].Resume == "" || calls[1].Args[1] != "resume" {
			t.Errorf("the calls ran %q then %q, want a new thread then codex exec resume of it", calls[0].Args, calls[1].Args)
		}
		conv := e.conversation(channel, thread)
		usage, err := e.store.UsageList(context.Background(), conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(usage) != 2 {
			t.Fatalf("%d usage rows, want 2", len(usage))
		}
		for i, u := range usage {
			if u.Provider != "codex" || u.InputTokens != 200 || u.CachedTokens != 1000 || u.OutputTokens != 40 {
				t.Errorf("usage row %d = %+v, want one call's tokens (200 input, 1000 cached, 40 output), not the thread's totals", i, u)
			}
		}
	})
}
