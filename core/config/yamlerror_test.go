package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/config"
)

// TestConfigErrorsSpeakYAML: a mistake in switchboard.yaml is reported
// with the file, the line and the setting's path, never a Go type.
func TestConfigErrorsSpeakYAML(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"unknown field in an agent", "agents:\n  - name: ana\n    persnoa: hi\n",
			[]string{`switchboard.yaml line 3: unknown field "persnoa" in agents[0]`}},
		{"unknown field in the second agent", "agents:\n  - name: ana\n  - name: bo\n    answers:\n      defualt: true\n",
			[]string{`line 5: unknown field "defualt" in agents[1].answers`}},
		{"unknown top-level field", "agnets: []\n",
			[]string{`line 1: unknown field "agnets" in the top level`}},
		{"unknown field in a schedule", "agents: []\nschedules:\n  routines:\n    - name: daily\n      cron: \"0 9 * * *\"\n      promtp: hi\n",
			[]string{`line 6: unknown field "promtp" in schedules.routines[0]`}},
		{"unknown field in the slack section", "slack:\n  streaming:\n    edit_interval: 1s\n",
			[]string{`line 3: unknown field "edit_interval" in slack.streaming`}},
		{"a key given twice", "slack:\n  home_tab: true\n  home_tab: false\n",
			[]string{`line 3: "home_tab" is set twice in slack`}},
		{"a section that is not a mapping", "discord: [1]\n",
			[]string{`line 1: discord: a list must be a mapping`}},
		{"a wrong duration", "memory:\n  budget: soon\n",
			[]string{`line 2: memory.budget: "soon" must be a duration such as 30s or 5m`}},
		{"a long wrong value", "memory:\n  decay:\n    every: once-in-a-while\n",
			[]string{`line 3: memory.decay.every: "once-in..." must be a duration`}},
		{"wrong type", "agents:\n  - name: ana\n    max_tokens: lots\n",
			[]string{`line 3: agents[0].max_tokens: "lots" must be a whole number`}},
		{"a list where text goes", "agents:\n  - name: ana\n    persona: [a, b]\n",
			[]string{`line 3: agents[0].persona: a list must be text`}},
		{"syntax", "agents:\n  - name: ana\n   persona: x: y\n",
			[]string{`switchboard.yaml line `}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "switchboard.yaml")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(path, nil)
			if err == nil {
				t.Fatalf("Load accepted %q", tc.body)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q, want it to contain %q", err, w)
				}
			}
			for _, goWords := range []string{"agent.Agent", "config.", "not found in type", "already defined", "unmarshal", "!!"} {
				if strings.Contains(err.Error(), goWords) {
					t.Fatalf("error %q speaks Go (%q)", err, goWords)
				}
			}
		})
	}
}
