package app_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// run_code through the real service on the fake Slack: an agent whose
// tools name it runs a program in the sandbox; what it printed reaches
// the model's next request, the file it wrote is shared in the thread,
// and /readyz shows the sandbox ready.
func TestRunCodeInTheSandbox(t *testing.T) {
	t.Parallel()
	testenv.RequireBwrap(t)
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		cfg := openAccess + "agents:\n  - name: atlas\n    tools: [run_code]\nsandbox: {timeout: 20s}\n"
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake), config: cfg})
		input, _ := json.Marshal(map[string]any{
			"language": "python",
			"code":     "a, b = map(int, open('in.txt').read().split())\nprint('sum', a + b)\nopen('result.txt', 'w').write('product %d\\n' % (a * b))\n",
			"files":    map[string]string{"in.txt": "3 4"},
		})
		fake.Push(
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_run", Name: "run_code", Input: string(input)}}},
			modeltest.Reply{Text: "The sum is 7."},
		)
		const ch, ts = "C0CODE", "1700009100.000001"
		e.mustPost(newEvent("EvRunCode1", mention(ch, ts, "", alice, "add 3 and 4 in python")))
		e.waitReply(ch, "The sum is 7.")
		e.waitIdle()

		reqs := fake.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d model requests; want the call and the answer", len(reqs))
		}
		if !strings.Contains(string(reqs[0].Body), `"name":"run_code"`) {
			t.Errorf("the first request does not offer run_code to an agent naming it")
		}
		got := toolResult(t, reqs[1].JSON(), "toolu_run")
		if got.isError || !strings.Contains(got.text, `sum 7`) || !strings.Contains(got.text, `result.txt`) || strings.Contains(got.text, "product 12") {
			t.Fatalf("the tool result the model got = %+v; want the printed sum and the file's name, not its content", got)
		}
		var shared []slacktest.File
		for _, f := range e.slack.Files() {
			if f.Channel != "" {
				shared = append(shared, f)
			}
		}
		if len(shared) != 1 || shared[0].Name != "result.txt" || string(shared[0].Data) != "product 12\n" || shared[0].ThreadTS != ts {
			t.Fatalf("files shared = %+v; want result.txt with the product, in the thread", shared)
		}
		if body := e.readyz(t); !strings.Contains(body, "sandbox: ready (python") {
			t.Errorf("/readyz = %q; want the sandbox ready", body)
		}
	})
}

// A sandbox the host cannot set up leaves the service running without
// run_code: the agent naming it is not offered it, and /readyz says why.
func TestRunCodeNotOfferedWithoutASandbox(t *testing.T) {
	t.Parallel()
	fake := modeltest.NewAnthropic(t)
	fake.Default(modeltest.Reply{Text: "No sandbox here."})
	cfg := openAccess + "agents:\n  - name: atlas\n    tools: [run_code]\nsandbox: {bwrap: /nonexistent/bwrap}\n"
	e := startSlack(t, sqliteDatabase(t), envOptions{env: anthropicEnv(fake), config: cfg})
	const ch, ts = "C0CODE", "1700009200.000001"
	e.mustPost(newEvent("EvRunCode2", mention(ch, ts, "", alice, "run some code")))
	e.waitReply(ch, "No sandbox here.")
	e.waitIdle()
	for _, r := range fake.Requests() {
		if strings.Contains(string(r.Body), `"run_code"`) {
			t.Fatalf("run_code was offered without a sandbox: %s", r.Body)
		}
	}
	if body := e.readyz(t); !strings.Contains(body, "sandbox: unavailable, run_code not offered: sandbox unavailable: bubblewrap (/nonexistent/bwrap) not found") {
		t.Errorf("/readyz = %q; want the sandbox unavailable and why", body)
	}
}

func (e *slackEnv) readyz(t *testing.T) string {
	t.Helper()
	resp, err := e.http.Get(e.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/readyz answered %d: %s", resp.StatusCode, b)
	}
	return string(b)
}
