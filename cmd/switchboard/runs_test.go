package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/app"
)

// TestRunsCommand: `switchboard runs` lists a running service's runs,
// shows one with its steps and events, and cancels it by id, through the
// API with the operator token.
func TestRunsCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lead := write("lead.yaml", `turns:
  - after_tool: plan_run
    text: "Run started."
fallback:
  tool_calls: [{name: plan_run, input: {goal: "Port the tests", steps: [{id: port, title: "Port them", agent: coder}]}}]
`)
	coder := write("coder.yaml", "fallback:\n  delay: 60s\n  text: late\n")
	config := write("switchboard.yaml", "agents:\n  - name: lead\n    model: scripted:"+lead+"\n    answers: {default: true}\n  - name: coder\n    model: scripted:"+coder+"\n")
	const token = "op-token-runs"
	getenv := env(map[string]string{
		"DATABASE_URL": "sqlite:" + filepath.Join(dir, "sb.db"), "SWITCHBOARD_CONFIG": config,
		"SWITCHBOARD_API_TOKEN": token, "SWITCHBOARD_ADDR": "127.0.0.1:0",
	})
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	url := "http://" + a.Addr()

	post := func(path, body string) map[string]any {
		req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	conv := post("/api/conversations", `{"agent": "lead"}`)
	post("/api/conversations/"+conv["id"].(string)+"/messages", `{"text": "port the tests"}`)

	runs := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(ctx, append([]string{"runs"}, append(args, "-url", url)...), getenv, nil, &out, &errOut); err != nil {
			t.Fatalf("runs %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	var id string
	deadline := time.Now().Add(30 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		var list struct {
			Runs []struct {
				ID string `json:"id"`
			} `json:"runs"`
		}
		_ = json.Unmarshal([]byte(runs("list", "-json")), &list)
		if len(list.Runs) == 1 {
			id = list.Runs[0].ID
		}
		time.Sleep(20 * time.Millisecond)
	}
	if id == "" {
		t.Fatal("no run listed")
	}
	if out := runs("list"); !strings.Contains(out, id) || !strings.Contains(out, "Port the tests") {
		t.Errorf("runs list:\n%s", out)
	}
	for time.Now().Before(deadline) && !strings.Contains(runs("show", id), "working") {
		time.Sleep(20 * time.Millisecond)
	}
	if out := runs("show", id); !strings.Contains(out, "port") || !strings.Contains(out, "coder") || !strings.Contains(out, "step_started") {
		t.Errorf("runs show:\n%s", out)
	}
	// The flags may come before the run's id too.
	var before bytes.Buffer
	if err := run(ctx, []string{"runs", "show", "-url", url, "-json", id}, getenv, nil, &before, io.Discard); err != nil {
		t.Errorf("runs show -url URL -json ID: %v", err)
	} else if !strings.Contains(before.String(), `"step_started"`) {
		t.Errorf("runs show -url URL -json ID:\n%s", before.String())
	}
	if err := run(ctx, []string{"runs", "show", "-url", url}, getenv, nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "say which run") {
		t.Errorf("runs show with flags and no id: %v, want it to ask which run", err)
	}
	if out := runs("cancel", id); !strings.Contains(out, "cancelled") {
		t.Errorf("runs cancel:\n%s", out)
	}
	var out, errOut bytes.Buffer
	err = run(ctx, []string{"runs", "cancel", id, "-url", url}, getenv, nil, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("a second cancel: %v, want it refused (409)", err)
	}
}

// TestRunsStartCommand: `switchboard runs start` starts a plan from a file
// or stdin without a chat, prints the run's id, and the run is then
// shown and finishes; bad input is refused naming the flag or the field,
// before or by the service.
func TestRunsStartCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lead := write("lead.yaml", "fallback:\n  text: lead here\n")
	coder := write("coder.yaml", "fallback:\n  text: ported\n")
	config := write("switchboard.yaml", "agents:\n  - name: lead\n    model: scripted:"+lead+"\n    answers: {default: true}\n  - name: coder\n    model: scripted:"+coder+"\n")
	const token = "op-token-runs-start"
	getenv := env(map[string]string{
		"DATABASE_URL": "sqlite:" + filepath.Join(dir, "sb.db"), "SWITCHBOARD_CONFIG": config,
		"SWITCHBOARD_API_TOKEN": token, "SWITCHBOARD_ADDR": "127.0.0.1:0",
	})
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // more than the two 30 s waits below, under load
	defer cancel()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	url := "http://" + a.Addr()
	const plan = `{"goal": "Port the tests", "steps": [{"id": "port", "title": "Port them", "agent": "coder"}]}`
	planFile := write("plan.json", plan)

	runs := func(stdin string, args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"runs"}, append(args, "-url", url)...), getenv, strings.NewReader(stdin), &out, &errOut)
		return out.String(), errOut.String(), err
	}
	for _, from := range []struct{ name, stdin, file string }{{"a file", "", planFile}, {"stdin", plan, "-"}} {
		out, errOut, err := runs(from.stdin, "start", "-lead", "lead", "-f", from.file)
		if err != nil {
			t.Fatalf("runs start -f %s: %v\n%s", from.file, err, errOut)
		}
		id := strings.TrimSpace(out)
		if _, err := uuid.Parse(id); err != nil || !strings.Contains(errOut, "led by lead: Port the tests") {
			t.Fatalf("runs start from %s printed %q and %q; want the run's id, and what started on stderr", from.name, out, errOut)
		}
		deadline := time.Now().Add(30 * time.Second)
		var shown string
		for time.Now().Before(deadline) && !strings.Contains(shown, "run "+id+"  done  ") {
			if shown, errOut, err = runs("", "show", id); err != nil {
				t.Fatalf("runs show %s: %v\n%s", id, err, errOut)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(shown, "run "+id+"  done  lead lead") || !strings.Contains(shown, "ported") {
			t.Errorf("runs show after a start from %s:\n%s\nwant the run done with coder's output", from.name, shown)
		}
	}

	for _, c := range []struct {
		name, stdin string
		args        []string
		says        string
	}{
		{"no lead", "", []string{"-f", planFile}, "-lead is required"},
		{"no plan", "", []string{"-lead", "lead"}, "-f is required"},
		{"unreadable file", "", []string{"-lead", "lead", "-f", filepath.Join(dir, "missing.json")}, "missing.json: open"},
		{"not JSON", "{steps: [", []string{"-lead", "lead", "-f", "-"}, "-f -: invalid plan: plan: does not match the schema"},
		{"empty stdin", "", []string{"-lead", "lead", "-f", "-"}, "-f - is empty"},
		{"unknown field", `{"steps": [], "owner": "me"}`, []string{"-lead", "lead", "-f", "-"}, `unknown field "owner"`},
		{"unknown lead", plan, []string{"-lead", "ghost", "-f", "-"}, `lead: no agent named "ghost"`},
		{"unknown step agent", `{"steps": [{"id": "a", "title": "A", "agent": "ghost"}]}`, []string{"-lead", "lead", "-f", "-"}, `steps[0].agent: no agent named "ghost"`},
	} {
		out, _, err := runs(c.stdin, append([]string{"start"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.says) || out != "" {
			t.Errorf("%s: runs start %v: %v, printed %q; want an error saying %s", c.name, c.args, err, out, c.says)
		}
	}
}
