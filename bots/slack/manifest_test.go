package slack

import (
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestManifest keeps the shipped app manifest in step with what the adapter
// uses: every scope a call needs and every event it handles.
func TestManifest(t *testing.T) {
	raw, err := os.ReadFile("../../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Features struct {
			AgentView *struct {
				Description string `yaml:"agent_description"`
			} `yaml:"agent_view"`
			AppHome struct {
				HomeTab bool `yaml:"home_tab_enabled"`
			} `yaml:"app_home"`
			SlashCommands []struct {
				Command string `yaml:"command"`
			} `yaml:"slash_commands"`
			Shortcuts []struct {
				Type       string `yaml:"type"`
				CallbackID string `yaml:"callback_id"`
			} `yaml:"shortcuts"`
		} `yaml:"features"`
		Functions map[string]struct {
			Input struct {
				Properties map[string]any `yaml:"properties"`
				Required   []string       `yaml:"required"`
			} `yaml:"input_parameters"`
			Output struct {
				Properties map[string]any `yaml:"properties"`
			} `yaml:"output_parameters"`
		} `yaml:"functions"`
		OAuth struct {
			RedirectURLs []string `yaml:"redirect_urls"`
			Scopes       struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
		Settings struct {
			Events struct {
				Bot []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
			Interactivity struct {
				Enabled bool `yaml:"is_enabled"`
			} `yaml:"interactivity"`
			SocketMode bool `yaml:"socket_mode_enabled"`
		} `yaml:"settings"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatalf("manifest is not valid YAML: %v", err)
	}
	for _, s := range []string{"app_mentions:read", "chat:write", "chat:write.customize", "im:history", "im:write",
		"channels:history", "groups:history", "files:read", "files:write", "assistant:write", "users:read",
		"commands", "mpim:history", "reactions:write"} {
		if !slices.Contains(m.OAuth.Scopes.Bot, s) {
			t.Errorf("manifest lacks bot scope %s", s)
		}
	}
	if !slices.Equal(m.OAuth.Scopes.Bot, BotScopes) {
		t.Errorf("the install requests %v, the manifest lists %v: keep BotScopes and the manifest the same", BotScopes, m.OAuth.Scopes.Bot)
	}
	if len(m.OAuth.RedirectURLs) != 1 || !strings.HasSuffix(m.OAuth.RedirectURLs[0], "/slack/oauth/callback") {
		t.Errorf("manifest redirect_urls %v: want one URL ending in /slack/oauth/callback", m.OAuth.RedirectURLs)
	}
	for _, e := range []string{"app_mention", "message.im", "message.channels", "message.groups", "message.mpim",
		"assistant_thread_started", "assistant_thread_context_changed", "app_home_opened", "app_context_changed", "agent_session_stopped",
		"app_uninstalled", "tokens_revoked", "function_executed"} {
		if !slices.Contains(m.Settings.Events.Bot, e) {
			t.Errorf("manifest lacks bot event %s", e)
		}
	}
	// Scopes nothing calls are not asked for: a reviewer of the install
	// screen sees only what the adapter uses.
	for _, s := range []string{"im:read"} {
		if slices.Contains(m.OAuth.Scopes.Bot, s) {
			t.Errorf("manifest asks for bot scope %s, which no call uses", s)
		}
	}
	if !m.Settings.SocketMode || !m.Settings.Interactivity.Enabled || m.Features.AgentView == nil || !m.Features.AppHome.HomeTab {
		t.Errorf("manifest: socket mode %v, interactivity %v, agent view %v, home tab %v; want all on",
			m.Settings.SocketMode, m.Settings.Interactivity.Enabled, m.Features.AgentView != nil, m.Features.AppHome.HomeTab)
	}
	// The shortcuts and the step the adapter answers, under the ids it
	// dispatches on.
	shortcuts := map[string]string{}
	for _, sc := range m.Features.Shortcuts {
		shortcuts[sc.CallbackID] = sc.Type
	}
	if shortcuts[ShortcutAskMessage] != "message" || shortcuts[ShortcutAsk] != "global" || len(shortcuts) != 2 {
		t.Errorf("manifest shortcuts %v; want %s (message) and %s (global)", shortcuts, ShortcutAskMessage, ShortcutAsk)
	}
	step, ok := m.Functions[StepAskAgent]
	if !ok || len(m.Functions) != 1 {
		t.Fatalf("manifest functions %v; want exactly %s", m.Functions, StepAskAgent)
	}
	for _, in := range []string{StepInputAgent, StepInputPrompt, StepInputContext, StepInputUser} {
		if _, ok := step.Input.Properties[in]; !ok {
			t.Errorf("step %s lacks the input %s the adapter reads", StepAskAgent, in)
		}
	}
	if !slices.Equal(step.Input.Required, []string{StepInputPrompt}) {
		t.Errorf("step %s requires %v; want only %s (the agent defaults)", StepAskAgent, step.Input.Required, StepInputPrompt)
	}
	if _, ok := step.Output.Properties[StepOutputAnswer]; !ok || len(step.Output.Properties) != 1 {
		t.Errorf("step %s outputs %v; want %s, what completeSuccess sends", StepAskAgent, step.Output.Properties, StepOutputAnswer)
	}
	if len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != SlashCommand {
		t.Errorf("manifest slash commands %+v, want %s", m.Features.SlashCommands, SlashCommand)
	}
}
