package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContextSettings: the file's context block is every agent's default,
// an agent's own block overrides it field by field, and bad values are
// refused naming the setting.
func TestContextSettings(t *testing.T) {
	tests := []struct {
		name       string
		yaml       string
		wantAt     int // per agent a, b; -1: summarising off
		wantKeep   int
		wantModel  string
		wantBAt    int
		wantBModel string
		wantErr    string
	}{
		{name: "defaults", yaml: "agents:\n- name: a\n- name: b\n",
			wantAt: DefaultSummarizeAt, wantKeep: DefaultSummarizeAt / 4, wantBAt: DefaultSummarizeAt},
		{name: "file default, agent override", yaml: "context: {summarize_at: 8000, summary_model: 'anthropic:claude-haiku-4-5'}\n" +
			"agents:\n- name: a\n  context: {keep_recent: 1000}\n- name: b\n  context: {summarize_at: -1}\n",
			wantAt: 8000, wantKeep: 1000, wantModel: "anthropic:claude-haiku-4-5", wantBAt: -1, wantBModel: "anthropic:claude-haiku-4-5"},
		{name: "too small", yaml: "agents:\n- name: a\n  context: {summarize_at: 500}\n", wantErr: `agent "a": context.summarize_at 500 must be at least 1000`},
		{name: "negative", yaml: "context: {summarize_at: -5}\nagents:\n- name: a\n", wantErr: "context.summarize_at -5"},
		{name: "tail too long", yaml: "agents:\n- name: a\n  context: {summarize_at: 4000, keep_recent: 3000}\n", wantErr: "context.keep_recent 3000 must be under half"},
		{name: "bad model", yaml: "agents:\n- name: a\n  context: {summary_model: haiku}\n", wantErr: `context.summary_model "haiku" must be provider:model`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "switchboard.yaml")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(p, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load error = %v; want it to say %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, b := cfg.Agents[0].Context, cfg.Agents[1].Context
			at, keep, ok := a.Budget()
			if !ok || at != tc.wantAt || keep != tc.wantKeep || a.SummaryModel != tc.wantModel {
				t.Errorf("agent a: budget %d, keep %d, on %v, model %q; want %d, %d, on, %q", at, keep, ok, a.SummaryModel, tc.wantAt, tc.wantKeep, tc.wantModel)
			}
			bAt, _, bOK := b.Budget()
			if tc.wantBAt < 0 {
				if bOK {
					t.Errorf("agent b: summarising on at %d; want it off (summarize_at: -1)", bAt)
				}
			} else if !bOK || bAt != tc.wantBAt {
				t.Errorf("agent b: budget %d (on %v); want %d", bAt, bOK, tc.wantBAt)
			}
			if b.SummaryModel != tc.wantBModel {
				t.Errorf("agent b: summary model %q; want %q", b.SummaryModel, tc.wantBModel)
			}
		})
	}
}
