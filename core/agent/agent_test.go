package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envOf(m map[string]string) Env { return func(k string) string { return m[k] } }

func TestLoadDefault(t *testing.T) {
	cfg, err := Load("", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Default()
	if a.Name != DefaultName || a.Model != DemoModel || a.StepBudget != 25 {
		t.Fatalf("default agent = %+v, want %s on %s with step budget 25", a, DefaultName, DemoModel)
	}
	cfg, err = Load("", envOf(map[string]string{"SWITCHBOARD_MODEL": "openai:gpt-4.1-mini"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Default().Model; got != "openai:gpt-4.1-mini" {
		t.Fatalf("model = %q, want SWITCHBOARD_MODEL's", got)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"unknown backend", "agents:\n- name: a\n  model: gemini:x\n", `agent "a": unknown model backend "gemini"`},
		{"bad model", "agents:\n- name: a\n  model: claude\n", `agent "a": model "claude" must be provider:model`},
		{"bad name", "agents:\n- name: Bad Name\n", `agents[0].name`},
		{"duplicate", "agents:\n- name: a\n- name: a\n", `agent "a": declared twice`},
		{"unknown field", "agents:\n- name: a\n  modle: x\n", "modle"},
		{"two defaults", "agents:\n- name: a\n  answers: {default: true}\n- name: b\n  answers: {default: true}\n", "at most one"},
		{"thinking", "agents:\n- name: a\n  thinking: extreme\n", `thinking "extreme"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "switchboard.yaml")
			if err := os.WriteFile(p, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p, envOf(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "switchboard.yaml")
	body := `agents:
- name: atlas
  persona: You plan trips.
  model: anthropic:claude-sonnet-4-5
  tools: [ask_user]
  answers: {channels: [C1]}
- name: scout
`
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p, envOf(map[string]string{"SWITCHBOARD_MODEL": "openai:gpt-4.1"}))
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := cfg.ForChannel("C1"); !ok || a.Name != "atlas" {
		t.Fatalf("ForChannel(C1) = %v, %v; want atlas", a, ok)
	}
	if s, _ := cfg.Find("scout"); s.Model != "openai:gpt-4.1" || s.KeyEnv() != "OPENAI_API_KEY" {
		t.Fatalf("scout = %+v, want SWITCHBOARD_MODEL and OPENAI_API_KEY", s)
	}
	if cfg.Default().Name != "atlas" {
		t.Fatalf("default = %s, want the first agent when none is marked", cfg.Default().Name)
	}
}

func TestEmptyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(p, envOf(nil))
	if err != nil || cfg.Default().Name != DefaultName {
		t.Fatalf("empty file: %v, %v; want the default agent", cfg, err)
	}
}
