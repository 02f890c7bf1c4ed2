package app_test

// End-to-end tests of skills through the real service, the fake Slack and
// the fake Anthropic server: a skill imported over the API for one agent is
// in the stable block's index at once, grants the tool it lists (which its
// own requires-tools then finds), and load_skill and read_skill_file hand
// the model its instructions and files; removed, it is gone from the next
// turn.

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

const standupMD = `---
name: standup
description: Run the team's daily standup and note blockers.
allowed-tools: [remind]
requires-tools: [remind]
---
Ask each person for yesterday, today and blockers. Use agenda.md.
`

func skillZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, body := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write([]byte(body))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func (e *slackEnv) skillsAPI(method, path, contentType string, body []byte) (int, string) {
	e.tb.Helper()
	req, err := http.NewRequest(method, e.base+path, bytes.NewReader(body))
	if err != nil {
		e.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := e.http.Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// anthropicRequest is what the tests read of a request to the fake.
type anthropicRequest struct {
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func decodeRequest(t *testing.T, r modeltest.Request) (system string, tools []string, last string) {
	t.Helper()
	var req anthropicRequest
	if err := r.Decode(&req); err != nil {
		t.Fatal(err)
	}
	for _, s := range req.System {
		system += s.Text
	}
	for _, tl := range req.Tools {
		tools = append(tools, tl.Name)
	}
	if n := len(req.Messages); n > 0 {
		last = string(req.Messages[n-1].Content)
	}
	return system, tools, last
}

func TestSkillsImportedOfferedAndLoaded(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		env := anthropicEnv(fake)
		config := openAccess + "agents:\n  - name: scout\n    model: anthropic:claude-sonnet-4-5\n    tools: [routine_list]\n"
		e := startSlack(t, db(t), envOptions{env: env, config: config})

		// A bad archive is refused with the file named, and stores nothing.
		bad := skillZip(t, map[string]string{"standup/SKILL.md": standupMD, "../evil.txt": "x"})
		if code, body := e.skillsAPI("POST", "/api/skills?agent=scout", "application/zip", bad); code != http.StatusBadRequest || !strings.Contains(body, "../evil.txt") {
			t.Fatalf("POST /api/skills with a path escape: %d %s, want 400 naming ../evil.txt", code, body)
		}
		good := skillZip(t, map[string]string{"standup/SKILL.md": standupMD, "standup/agenda.md": "1. Yesterday 2. Today 3. Blockers"})
		if code, body := e.skillsAPI("POST", "/api/skills?agent=scout", "application/zip", good); code != http.StatusCreated || !strings.Contains(body, `"standup"`) {
			t.Fatalf("POST /api/skills: %d %s, want 201 with standup", code, body)
		}
		code, body := e.skillsAPI("GET", "/api/skills", "application/json", nil)
		if code != http.StatusOK || !strings.Contains(body, `"name":"standup","description":"Run the team's daily standup and note blockers.","layer":"agent","scope":"scout"`) ||
			!strings.Contains(body, `"name":"meeting-notes"`) {
			t.Fatalf("GET /api/skills: %d %s, want standup (scout's) and the shipped meeting-notes", code, body)
		}

		fake.Push(
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "load_skill", Input: `{"name":"standup"}`}}},
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_skill_file", Input: `{"name":"standup","path":"../standup/agenda.md"}`}}},
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "read_skill_file", Input: `{"name":"standup","path":"agenda.md"}`}}},
			modeltest.Reply{Text: "Standup time: yesterday, today, blockers?"},
		)
		e.mustPost(newEvent("EvSkill1", directMessage("D0ALICE", "1700000900.000001", alice, "run standup")))
		e.waitIdle()
		reqs := fake.Requests()
		if len(reqs) != 4 {
			t.Fatalf("the fake model got %d requests, want 4", len(reqs))
		}
		system, tools, _ := decodeRequest(t, reqs[0])
		for _, want := range []string{"- standup: Run the team's daily standup and note blockers.", "- meeting-notes: "} {
			if !strings.Contains(system, want) {
				t.Errorf("the stable block lacks the index line %q:\n%s", want, system)
			}
		}
		for _, want := range []string{"remind", "routine_list", "load_skill", "read_skill_file"} {
			if !slices.Contains(tools, want) {
				t.Errorf("tools offered %v lack %s (remind is granted by the skill)", tools, want)
			}
		}
		if _, _, last := decodeRequest(t, reqs[1]); !strings.Contains(last, "Ask each person for yesterday") || !strings.Contains(last, "agenda.md") {
			t.Errorf("load_skill's result should carry the instructions and file list: %s", last)
		}
		if _, _, last := decodeRequest(t, reqs[2]); !strings.Contains(last, `"is_error":true`) || !strings.Contains(last, "refused") {
			t.Errorf("read_skill_file with ../ should be a tool error: %s", last)
		}
		if _, _, last := decodeRequest(t, reqs[3]); !strings.Contains(last, "1. Yesterday 2. Today 3. Blockers") {
			t.Errorf("read_skill_file should return agenda.md: %s", last)
		}

		// Removed: the next turn has neither the skill nor the tool it granted.
		if code, body := e.skillsAPI("DELETE", "/api/skills/standup?agent=scout", "application/json", nil); code != http.StatusNoContent {
			t.Fatalf("DELETE /api/skills/standup: %d %s", code, body)
		}
		if code, _ := e.skillsAPI("DELETE", "/api/skills/standup?agent=scout", "application/json", nil); code != http.StatusNotFound {
			t.Errorf("removing it twice: %d, want 404", code)
		}
		fake.Push(modeltest.Reply{Text: "ok"})
		e.mustPost(newEvent("EvSkill2", directMessage("D0ALICE", "1700000901.000001", alice, "again")))
		e.waitIdle()
		reqs = fake.Requests()
		system, tools, _ = decodeRequest(t, reqs[len(reqs)-1])
		if strings.Contains(system, "standup") || slices.Contains(tools, "remind") {
			t.Errorf("after removal the turn still offers standup or remind: tools %v", tools)
		}
		if !strings.Contains(system, "- meeting-notes: ") {
			t.Errorf("the shipped skill should stay in the index")
		}
	})
}
