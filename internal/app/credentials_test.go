package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
)

// TestCredentials: keys and endpoints come from the settings the agent
// names, the agent's base_url wins over the provider's, and a missing key
// names the variable to set.
func TestCredentials(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ANTHROPIC_API_KEY": "ak", "ANTHROPIC_BASE_URL": "http://a",
		"OPENAI_API_KEY": "ok", "OPENAI_BASE_URL": "http://o/v1",
		"TEAM_KEY": "team",
	}
	full := func(k string) string { return env[k] }
	empty := func(string) string { return "" }
	tests := []struct {
		name    string
		env     config.Env
		agent   config.Agent
		want    model.Credentials
		wantErr string
	}{
		{"anthropic from its variables", full, config.Agent{Model: "anthropic:claude-sonnet-4-5"}, model.Credentials{APIKey: "ak", BaseURL: "http://a"}, ""},
		{"openai from its variables", full, config.Agent{Model: "openai:gpt-4.1"}, model.Credentials{APIKey: "ok", BaseURL: "http://o/v1"}, ""},
		{"the agent's key variable and base_url", full, config.Agent{Model: "openai:gpt-4.1", APIKeyEnv: "TEAM_KEY", BaseURL: "http://team/v1"}, model.Credentials{APIKey: "team", BaseURL: "http://team/v1"}, ""},
		{"a compatible server needs no key", empty, config.Agent{Model: "openai:llama3", BaseURL: "http://localhost:11434/v1"}, model.Credentials{BaseURL: "http://localhost:11434/v1"}, ""},
		{"scripted needs nothing", empty, config.Agent{Model: "scripted:demo"}, model.Credentials{}, ""},
		{"anthropic without a key", empty, config.Agent{Model: "anthropic:claude-sonnet-4-5"}, model.Credentials{}, "model anthropic:claude-sonnet-4-5 needs a key: set ANTHROPIC_API_KEY"},
		{"openai without a key", empty, config.Agent{Model: "openai:gpt-4.1", APIKeyEnv: "TEAM_KEY"}, model.Credentials{}, "model openai:gpt-4.1 needs a key: set TEAM_KEY (or OPENAI_BASE_URL for a compatible server)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := credentials(tc.env)(&tc.agent)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("credentials = %+v, %v; want the error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("credentials = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestOpenNamesAMissingKey: an agent whose key variable is unset stops Open
// with an error naming the agent and the variable; set in the settings the
// app reads (Config.Env, not the process environment), it starts.
func TestOpenNamesAMissingKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(path, []byte("agents:\n  - name: scout\n    model: anthropic:claude-sonnet-4-5\n    api_key_env: SCOUT_KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Addr: "-", DatabaseURL: "sqlite:" + filepath.Join(dir, "sb.db"), ConfigPath: path, Env: func(string) string { return "" }}
	if a, err := Open(context.Background(), cfg); err == nil {
		_ = a.Stop(context.Background())
		t.Fatal("Open succeeded without the agent's key; want an error naming SCOUT_KEY")
	} else if !strings.Contains(err.Error(), `agent "scout"`) || !strings.Contains(err.Error(), "set SCOUT_KEY") {
		t.Fatalf("Open error = %q; want it to name agent \"scout\" and SCOUT_KEY", err)
	}
	cfg.Env = func(k string) string { return map[string]string{"SCOUT_KEY": "scout-test-key"}[k] }
	a, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open with SCOUT_KEY in Config.Env: %v", err)
	}
	_ = a.Stop(context.Background())
}
