package app

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/redact"
)

func TestConfigSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ANTHROPIC_API_KEY": "anthropic-env-key",
		"OPENAI_API_KEY":    "openai-env-key",
		"TEAM_KEY":          "team-key-from-agent",
	}
	cfg := Config{
		DatabaseURL:        "postgres://app:db%2Fpass@db.internal:5432/sb?sslmode=require",
		APIToken:           "api-token-1",
		SlackBotToken:      "xoxb-bot",
		SlackAppToken:      "xapp-app",
		SlackSigningSecret: "signing-secret",
		DiscordBotToken:    "discord-token",
		DiscordPublicKey:   "discord-public-key",
		Env:                func(k string) string { return env[k] },
	}
	agents := &config.Config{Agents: []config.Agent{
		{Name: "a", Model: "openai:gpt-4.1", APIKeyEnv: "TEAM_KEY"},
		{Name: "b", Model: "scripted:demo"},
	}}
	got := cfg.secrets(agents)
	for _, want := range []string{
		"api-token-1", "xoxb-bot", "xapp-app", "signing-secret", "discord-token", "db/pass",
		"anthropic-env-key", "openai-env-key", "team-key-from-agent",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("secrets() = %q, want it to include %q", got, want)
		}
	}
	if slices.Contains(got, "discord-public-key") {
		t.Errorf("secrets() = %q includes the Discord public key, which is not secret", got)
	}
}

func TestOpenRegistersSecrets(t *testing.T) {
	t.Parallel()
	const token = "open-registers-this-api-token"
	cfg := Config{
		Addr:        "-",
		DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "sb.db"),
		APIToken:    token,
		Env:         func(string) string { return "" },
	}
	a, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = a.Stop(context.Background()) }()
	if got := redact.String("token " + token); strings.Contains(got, token) {
		t.Errorf("after Open, redact.String(%q) = %q, want the configured API token redacted", "token "+token, got)
	}
}
