package config

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
		{"runs_on", "agents:\n- name: a\n  runs_on: laptop\n", `runs_on "laptop" must be service or bridge`},
		{"bridge lease", "bridge:\n  lease: 10ms\n", `bridge.lease 10ms must be at least 1s`},
		{"bridge wait", "bridge:\n  wait: -1s\n", `bridge.wait -1s must not be negative`},
		{"role", "agents:\n- name: a\n  role: boss\n", `agents[0] (a).role: "boss"`},
		{"specialist without domains", "agents:\n- name: a\n  role: specialist\n", `agents[0] (a).domains: a specialist`},
		{"domain name", "agents:\n- name: a\n  domains: [{keywords: [x]}]\n", `agents[0] (a).domains[0].name`},
		{"empty domain", "agents:\n- name: a\n  domains: [{name: d}]\n", `agents[0] (a).domains[0] (d): needs keywords`},
		{"fallback", "agents:\n- name: a\nchannels:\n  C1: {fallback: [b]}\n", `channels.C1.fallback[0]: no agent named "b"`},
		{"loop", "agents:\n- name: a\nloop: {max_agent_messages_group: -1}\n", `loop.max_agent_messages_group`},
		{"routing", "agents:\n- name: a\nrouting: {margin: 0.5}\n", `routing: margin`},
		{"browser timeout", "agents:\n- name: a\nbrowser: {timeout: 10ms}\n", `browser.timeout: 10ms must be between 1s and 30m`},
		{"browser pages", "agents:\n- name: a\nbrowser: {max_pages: -1}\n", `browser.max_pages`},
		{"browser unknown field", "agents:\n- name: a\nbrowser: {max_tabs: 3}\n", "max_tabs"},
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

func TestPersonalityGuard(t *testing.T) {
	long := strings.Repeat("a", 400)
	cases := []struct {
		name        string
		guard       PersonalityGuard
		current     string
		replacement string
		refused     string // a part of the refusal; "" when allowed
	}{
		{"same length", PersonalityGuard{}, long, strings.Repeat("b", 400), ""},
		{"exactly half", PersonalityGuard{}, long, strings.Repeat("b", 200), ""},
		{"under half", PersonalityGuard{}, strings.Repeat("a", 1000), strings.Repeat("b", 499), "under 50% of the current 1000"},
		{"under the minimum", PersonalityGuard{}, strings.Repeat("a", 250), strings.Repeat("b", 199), "fewer than the 200"},
		{"short seed grows", PersonalityGuard{}, "You plan trips.", strings.Repeat("b", 200), ""},
		{"characters, not bytes", PersonalityGuard{}, long, strings.Repeat("é", 200), ""},
		{"own ratio", PersonalityGuard{MinRatio: 0.9}, strings.Repeat("a", 1000), strings.Repeat("b", 899), "under 90%"},
		{"own minimum", PersonalityGuard{MinChars: 10}, "0123456789ab", "0123456789", ""},
		{"own minimum refuses", PersonalityGuard{MinChars: 10}, "0123456789", "012345678", "fewer than the 10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.guard.Check(tc.current, tc.replacement)
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("Check: want the replacement allowed, got %v", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Fatalf("Check: want a refusal saying %q, got %v", tc.refused, err)
			}
		})
	}
}

func TestPersonalityGuardSettings(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		yaml    string
		wantErr string
	}{
		{"personality: {min_ratio: 0.7, min_chars: 50}", ""},
		{"personality: {min_ratio: 1.5}", "personality.min_ratio 1.5 must be between 0 and 1"},
		{"personality: {min_chars: -1}", "personality.min_chars -1 must not be negative"},
	} {
		path := filepath.Join(dir, "switchboard.yaml")
		if err := os.WriteFile(path, []byte("agents:\n  - name: atlas\n    model: scripted:x\n    "+tc.yaml+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, nil)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("loading %q: want an error saying %q, got %v", tc.yaml, tc.wantErr, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("loading %q: %v", tc.yaml, err)
		}
		if g := cfg.Agents[0].Personality; g.MinRatio != 0.7 || g.MinChars != 50 {
			t.Fatalf("loading %q: got %+v", tc.yaml, g)
		}
	}
}

// The browser: section's presence is what turns the browse tool on: an
// empty one takes the defaults, none leaves it off.
func TestBrowserSectionPresence(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		on   bool
	}{
		{"agents:\n- name: a\n", false},
		{"agents:\n- name: a\nbrowser:\n", false},
		{"agents:\n- name: a\nbrowser: {}\n", true},
		{"agents:\n- name: a\nbrowser: {max_pages: 3}\n", true},
	} {
		cfg, err := Parse("", []byte(tt.yaml), envOf(nil))
		if err != nil {
			t.Fatalf("%q: %v", tt.yaml, err)
		}
		if on := cfg.Browser != nil; on != tt.on {
			t.Errorf("%q: browser section present = %v, want %v", tt.yaml, on, tt.on)
		}
	}
}
