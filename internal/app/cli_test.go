package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
)

func TestFromEnvCLISettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		check   func(t *testing.T, c CLISettings)
		wantErr string
	}{
		{name: "defaults", env: nil, check: func(t *testing.T, c CLISettings) {
			if c.ClaudeCodeArgs != nil || c.CodexArgs != nil || c.IdleTimeout != 0 || c.MCPURL != "" {
				t.Errorf("settings = %+v, want the defaults", c)
			}
		}},
		{name: "all set", env: map[string]string{
			"SWITCHBOARD_DATA_DIR": "/srv/sb", "SWITCHBOARD_CLAUDE_CODE_PATH": "/opt/claude", "SWITCHBOARD_CODEX_PATH": "/opt/codex",
			"SWITCHBOARD_CLAUDE_CODE_ARGS": "--permission-mode plan", "SWITCHBOARD_CODEX_ARGS": "none",
			"SWITCHBOARD_CLI_ENV": "GITHUB_TOKEN, NPM_TOKEN", "SWITCHBOARD_CLI_IDLE_TIMEOUT": "2m",
			"SWITCHBOARD_CLI_MCP_URL": "https://sb.example.com/mcp", "SWITCHBOARD_CLI_MCP_TOKEN": "sbp_x_y",
		}, check: func(t *testing.T, c CLISettings) {
			if c.DataDir != "/srv/sb" || c.ClaudeCodePath != "/opt/claude" || c.CodexPath != "/opt/codex" {
				t.Errorf("paths = %+v", c)
			}
			if !slices.Equal(c.ClaudeCodeArgs, []string{"--permission-mode", "plan"}) || c.CodexArgs == nil || len(c.CodexArgs) != 0 {
				t.Errorf("args = %q, %q; want the split setting and none", c.ClaudeCodeArgs, c.CodexArgs)
			}
			if !slices.Equal(c.PassEnv, []string{"GITHUB_TOKEN", "NPM_TOKEN"}) || c.IdleTimeout.Minutes() != 2 || c.MCPURL != "https://sb.example.com/mcp" || c.MCPToken != "sbp_x_y" {
				t.Errorf("settings = %+v", c)
			}
		}},
		{name: "bad variable name", env: map[string]string{"SWITCHBOARD_CLI_ENV": "GOOD,BAD-NAME"}, wantErr: "SWITCHBOARD_CLI_ENV"},
		{name: "bad idle timeout", env: map[string]string{"SWITCHBOARD_CLI_IDLE_TIMEOUT": "10"}, wantErr: "SWITCHBOARD_CLI_IDLE_TIMEOUT"},
		{name: "bad MCP URL", env: map[string]string{"SWITCHBOARD_CLI_MCP_URL": "localhost:8080/mcp"}, wantErr: "SWITCHBOARD_CLI_MCP_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c.CLI)
		})
	}
}

func TestCLIOptions(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"PATH": "/usr/bin", "HOME": "/home/sb", "SLACK_BOT_TOKEN": "xoxb-secret", "SWITCHBOARD_SECRET_KEY": "k1:abc",
		"ANTHROPIC_API_KEY": "sk-ant-service", "GITHUB_TOKEN": "ghp_x", "CODER_KEY": "sk-ant-coder",
	}
	data := t.TempDir()
	cfg := Config{Addr: ":8080", APIToken: "operator-token", Env: func(k string) string { return env[k] },
		CLI: CLISettings{DataDir: data, PassEnv: []string{"GITHUB_TOKEN"}}}

	a := &config.Agent{Name: "coder", Model: "claude-code:sonnet"}
	o, err := cfg.cliOptions(a, model.Spec{Provider: model.ProviderClaudeCode, Model: "sonnet"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Abs(filepath.Join(data, "agents", "coder", "work"))
	if o.Dir != want {
		t.Errorf("dir = %q, want %q", o.Dir, want)
	}
	if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Errorf("the working directory was not made private: %v %v", st, err)
	}
	for _, kv := range o.Env {
		for _, secret := range []string{"SLACK_BOT_TOKEN", "SWITCHBOARD_SECRET_KEY", "ANTHROPIC_API_KEY"} {
			if strings.HasPrefix(kv, secret+"=") {
				t.Errorf("the CLI gets %s, which it must not", secret)
			}
		}
	}
	if !slices.Contains(o.Env, "PATH=/usr/bin") || !slices.Contains(o.Env, "GITHUB_TOKEN=ghp_x") {
		t.Errorf("env = %q, want PATH and the variable SWITCHBOARD_CLI_ENV names", o.Env)
	}
	if !slices.Equal(o.Args, defaultClaudeCodeArgs) {
		t.Errorf("args = %q, want the defaults", o.Args)
	}
	if o.MCP == nil || o.MCP.URL != "http://127.0.0.1:8080/mcp" || o.MCP.Token != "operator-token" || !slices.Equal(o.MCP.Exclude, []string{"coder"}) {
		t.Errorf("MCP = %+v, want the loopback /mcp with the API token, the agent itself left out", o.MCP)
	}

	// An agent's own key reaches Claude Code as ANTHROPIC_API_KEY.
	a.APIKeyEnv = "CODER_KEY"
	if o, err = cfg.cliOptions(a, model.Spec{Provider: model.ProviderClaudeCode, Model: "sonnet"}); err != nil || !slices.Contains(o.Env, "ANTHROPIC_API_KEY=sk-ant-coder") {
		t.Errorf("env = %q (%v), want the agent's key as ANTHROPIC_API_KEY", o.Env, err)
	}

	// No fixed port, or the setting off: native tools only.
	for _, c := range []Config{{Addr: "127.0.0.1:0"}, {Addr: "-"}, {Addr: ":8080", CLI: CLISettings{MCPURL: "off"}}} {
		c.Env, c.CLI.DataDir = cfg.Env, data
		o, err := c.cliOptions(&config.Agent{Name: "x", Model: "codex:default"}, model.Spec{Provider: model.ProviderCodex, Model: "default"})
		if err != nil {
			t.Fatal(err)
		}
		if o.MCP != nil {
			t.Errorf("addr %q, MCP %q: the CLI was given %+v", c.Addr, c.CLI.MCPURL, o.MCP)
		}
		if !slices.Equal(o.Args, defaultCodexArgs) {
			t.Errorf("codex args = %q, want the defaults", o.Args)
		}
	}
}
