package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// TestPersonalityEndToEnd: the agent is offered read_personality and
// update_personality on the fake Anthropic; its sharp cut is refused with a
// tool error saying why, its fuller replacement is stored and is the system
// prompt of the next turn. The operator reads the versions through the API,
// replaces the document there and with the binary's personality command
// without the guard, and each replacement is what the model is sent next.
func TestPersonalityEndToEnd(t *testing.T) {
	t.Parallel()
	bin := buildSwitchboard(t)
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		env := anthropicEnv(fake)
		dbURL := db(t)
		seed := "You are Atlas, a travel planner. You answer plainly, check the facts twice and say when you do not know."
		config := fmt.Sprintf("agents:\n  - name: atlas\n    persona: %q\n    personality: {min_chars: 100}\n%s", seed, openAccess)
		e := startSlack(t, dbURL, envOptions{env: env, config: config})

		grown := seed + "\n\nYou keep a travel log of every trip you plan."
		input, _ := json.Marshal(map[string]string{"text": grown})
		fake.Push(
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_cut", Name: "update_personality", Input: `{"text": "I am nobody."}`}}},
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_grow", Name: "update_personality", Input: string(input)}}},
			modeltest.Reply{Text: "Updated myself."},
		)
		e.mustPost(newEvent("EvPers1", mention("C0PERS", "1700002000.000001", "", alice, "rewrite yourself")))
		e.waitReply("C0PERS", "Updated myself.")
		e.waitIdle()

		reqs := fake.Requests()
		if len(reqs) != 3 {
			t.Fatalf("the fake model got %d requests; want 3 (the cut, the replacement, the answer)", len(reqs))
		}
		first := reqs[0].JSON()
		if tools := toolNames(first); !strings.Contains(tools, "update_personality") || !strings.Contains(tools, "read_personality") {
			t.Fatalf("tools offered = %s; want read_personality and update_personality", tools)
		}
		if sys := systemOf(t, first); !strings.Contains(sys, seed) {
			t.Fatalf("the first system prompt lacks the seeded personality:\n%s", sys)
		}
		if refusal := toolResult(t, reqs[1].JSON(), "toolu_cut"); !refusal.isError || !strings.Contains(refusal.text, "fewer than the 100") {
			t.Fatalf("the cut's tool result = %+v; want an error saying it is under the 100 characters it must keep", refusal)
		}
		if ok := toolResult(t, reqs[2].JSON(), "toolu_grow"); ok.isError || !strings.Contains(ok.text, `\"version\":2`) {
			t.Fatalf("the replacement's tool result = %+v; want version 2", ok)
		}

		cur := e.personality(t, http.MethodGet, "/api/agents/atlas/personality", nil, http.StatusOK)
		if cur.Version != 2 || cur.Text != grown || cur.Author != "agent:atlas" {
			t.Fatalf("GET personality = %+v; want the agent's version 2", cur)
		}
		// The next turn is sent the agent's own replacement.
		fake.Push(modeltest.Reply{Text: "Hello again."})
		e.mustPost(newEvent("EvPers2", mention("C0PERS", "1700002000.000002", "", alice, "hello")))
		e.waitReply("C0PERS", "Hello again.")
		if sys := systemOf(t, lastRequest(fake)); !strings.Contains(sys, "travel log of every trip") {
			t.Fatalf("the next turn's system prompt lacks the replacement:\n%s", sys)
		}

		// The operator is not held to the guard.
		put := e.personality(t, http.MethodPut, "/api/agents/atlas/personality", map[string]string{"text": "Terse."}, http.StatusOK)
		if put.Version != 3 || put.Author != "operator" {
			t.Fatalf("PUT personality = %+v; want version 3 by the operator", put)
		}
		var versions struct{ Versions []web.PersonalityJSON }
		e.apiJSON(t, http.MethodGet, "/api/agents/atlas/personality/versions", nil, http.StatusOK, &versions)
		var authors []string
		for _, v := range versions.Versions {
			authors = append(authors, fmt.Sprintf("%d:%s", v.Version, v.Author))
		}
		if got := strings.Join(authors, " "); got != "3:operator 2:agent:atlas 1:config" {
			t.Fatalf("versions = %s; want every version, newest first", got)
		}
		if v1 := e.personality(t, http.MethodGet, "/api/agents/atlas/personality?version=1", nil, http.StatusOK); v1.Text != seed {
			t.Fatalf("version 1 = %+v; want the seed still readable", v1)
		}
		e.apiJSON(t, http.MethodGet, "/api/agents/nobody/personality", nil, http.StatusNotFound, nil)
		e.apiJSON(t, http.MethodPut, "/api/agents/atlas/personality", map[string]string{"text": "  "}, http.StatusBadRequest, nil)

		// The binary's command, straight on the store.
		file := filepath.Join(t.TempDir(), "atlas.md")
		cliDoc := "# Atlas\n\nSet from the command line."
		if err := os.WriteFile(file, []byte(cliDoc+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := runCLI(t, bin, "personality", "set", "atlas", "-file", file, "-database-url", dbURL); !strings.Contains(out, "version 4") {
			t.Fatalf("personality set printed %q; want version 4", out)
		}
		if out := runCLI(t, bin, "personality", "show", "atlas", "-database-url", dbURL); strings.TrimSpace(out) != cliDoc {
			t.Fatalf("personality show printed %q; want %q", out, cliDoc)
		}
		if out := runCLI(t, bin, "personality", "show", "atlas", "-version", "2", "-database-url", dbURL); strings.TrimSpace(out) != grown {
			t.Fatalf("personality show -version 2 printed %q; want the agent's version", out)
		}
		hist := runCLI(t, bin, "personality", "history", "atlas", "-database-url", dbURL)
		for _, want := range []string{"4 ", "operator", "agent:atlas", "config", "# Atlas"} {
			if !strings.Contains(hist, want) {
				t.Fatalf("personality history printed\n%s\nwant %q in it", hist, want)
			}
		}
		fake.Push(modeltest.Reply{Text: "Third hello."})
		e.mustPost(newEvent("EvPers3", mention("C0PERS", "1700002000.000003", "", alice, "hello once more")))
		e.waitReply("C0PERS", "Third hello.")
		if sys := systemOf(t, lastRequest(fake)); !strings.Contains(sys, "Set from the command line.") {
			t.Fatalf("the system prompt after the CLI's replacement lacks it:\n%s", sys)
		}
	})
}

func (e *slackEnv) apiJSON(tb testing.TB, method, path string, body any, wantStatus int, out any) {
	tb.Helper()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			tb.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, e.base+path, &buf)
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.http.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		tb.Fatalf("%s %s: decoding the answer: %v", method, path, err)
	}
	if resp.StatusCode != wantStatus {
		tb.Fatalf("%s %s answered %d %s; want %d", method, path, resp.StatusCode, raw, wantStatus)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.Fatalf("%s %s answered %s: %v", method, path, raw, err)
		}
	}
}

func (e *slackEnv) personality(tb testing.TB, method, path string, body any, wantStatus int) web.PersonalityJSON {
	tb.Helper()
	var p web.PersonalityJSON
	e.apiJSON(tb, method, path, body, wantStatus, &p)
	return p
}

func lastRequest(f *modeltest.Fake) map[string]any {
	reqs := f.Requests()
	return reqs[len(reqs)-1].JSON()
}

func toolNames(body map[string]any) string {
	var names []string
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		if m, ok := t.(map[string]any); ok {
			names = append(names, fmt.Sprint(m["name"]))
		}
	}
	return strings.Join(names, ",")
}

func systemOf(tb testing.TB, body map[string]any) string {
	tb.Helper()
	b, err := json.Marshal(body["system"])
	if err != nil {
		tb.Fatal(err)
	}
	var blocks []struct{ Text string }
	if err := json.Unmarshal(b, &blocks); err != nil {
		tb.Fatalf("the system prompt %s is not a list of blocks: %v", b, err)
	}
	var parts []string
	for _, bl := range blocks {
		parts = append(parts, bl.Text)
	}
	return strings.Join(parts, "\n")
}

type sentResult struct {
	isError bool
	text    string
}

// toolResult finds the tool_result block answering call in a request.
func toolResult(tb testing.TB, body map[string]any, call string) sentResult {
	tb.Helper()
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		content, _ := m.(map[string]any)["content"].([]any)
		for _, c := range content {
			block, _ := c.(map[string]any)
			if block["type"] != "tool_result" || block["tool_use_id"] != call {
				continue
			}
			raw, _ := json.Marshal(block["content"])
			isErr, _ := block["is_error"].(bool)
			return sentResult{isError: isErr, text: string(raw)}
		}
	}
	tb.Fatalf("no tool_result for %s in the request", call)
	return sentResult{}
}
