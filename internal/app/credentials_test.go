package app

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/model"
)

// TestCredentials: keys and endpoints come from the settings the agent
// names, the agent's base_url wins over the provider's, and a missing key
// names the variable to set.
func TestCredentials(t *testing.T) {
	env := map[string]string{
		"ANTHROPIC_API_KEY": "ak", "ANTHROPIC_BASE_URL": "http://a",
		"OPENAI_API_KEY": "ok", "OPENAI_BASE_URL": "http://o/v1",
		"TEAM_KEY": "team",
	}
	full := func(k string) string { return env[k] }
	empty := func(string) string { return "" }
	tests := []struct {
		name    string
		env     agent.Env
		agent   agent.Agent
		want    model.Credentials
		wantErr string
	}{
		{"anthropic from its variables", full, agent.Agent{Model: "anthropic:claude-sonnet-4-5"}, model.Credentials{APIKey: "ak", BaseURL: "http://a"}, ""},
		{"openai from its variables", full, agent.Agent{Model: "openai:gpt-4.1"}, model.Credentials{APIKey: "ok", BaseURL: "http://o/v1"}, ""},
		{"the agent's key variable and base_url", full, agent.Agent{Model: "openai:gpt-4.1", APIKeyEnv: "TEAM_KEY", BaseURL: "http://team/v1"}, model.Credentials{APIKey: "team", BaseURL: "http://team/v1"}, ""},
		{"a compatible server needs no key", empty, agent.Agent{Model: "openai:llama3", BaseURL: "http://localhost:11434/v1"}, model.Credentials{BaseURL: "http://localhost:11434/v1"}, ""},
		{"scripted needs nothing", empty, agent.Agent{Model: "scripted:demo"}, model.Credentials{}, ""},
		{"anthropic without a key", empty, agent.Agent{Model: "anthropic:claude-sonnet-4-5"}, model.Credentials{}, "model anthropic:claude-sonnet-4-5 needs a key: set ANTHROPIC_API_KEY"},
		{"openai without a key", empty, agent.Agent{Model: "openai:gpt-4.1", APIKeyEnv: "TEAM_KEY"}, model.Credentials{}, "model openai:gpt-4.1 needs a key: set TEAM_KEY (or OPENAI_BASE_URL for a compatible server)"},
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
