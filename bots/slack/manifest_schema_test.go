package slack

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// slackManifest is the part of Slack's app manifest schema (v1,
// github.com/slackapi/manifest-schema) that our manifest uses. The schema
// allows no property it does not name, so decoding with KnownFields finds
// a misspelt or invented field as Slack's validation would.
type slackManifest struct {
	DisplayInformation *struct {
		Name            string `yaml:"name"`
		Description     string `yaml:"description"`
		BackgroundColor string `yaml:"background_color"`
		LongDescription string `yaml:"long_description"`
	} `yaml:"display_information"`
	Features struct {
		AppHome *struct {
			HomeTab         bool `yaml:"home_tab_enabled"`
			MessagesTab     bool `yaml:"messages_tab_enabled"`
			MessagesTabRead bool `yaml:"messages_tab_read_only_enabled"`
		} `yaml:"app_home"`
		BotUser *struct {
			DisplayName  string `yaml:"display_name"`
			AlwaysOnline bool   `yaml:"always_online"`
		} `yaml:"bot_user"`
		AssistantView *struct {
			Description string `yaml:"assistant_description"`
			Prompts     []struct {
				Title   string `yaml:"title"`
				Message string `yaml:"message"`
			} `yaml:"suggested_prompts"`
		} `yaml:"assistant_view"`
		// AgentView is the agent messaging experience, which new apps get
		// instead of assistant_view.
		AgentView *struct {
			Description string `yaml:"agent_description"`
			Prompts     []struct {
				Title   string `yaml:"title"`
				Message string `yaml:"message"`
			} `yaml:"suggested_prompts"`
		} `yaml:"agent_view"`
		Shortcuts []struct {
			Name        string `yaml:"name"`
			Type        string `yaml:"type"`
			CallbackID  string `yaml:"callback_id"`
			Description string `yaml:"description"`
		} `yaml:"shortcuts"`
		SlashCommands []struct {
			Command      string `yaml:"command"`
			Description  string `yaml:"description"`
			UsageHint    string `yaml:"usage_hint"`
			ShouldEscape bool   `yaml:"should_escape"`
			URL          string `yaml:"url"`
		} `yaml:"slash_commands"`
	} `yaml:"features"`
	OAuthConfig struct {
		RedirectURLs []string `yaml:"redirect_urls"`
		Scopes       struct {
			Bot  []string `yaml:"bot"`
			User []string `yaml:"user"`
		} `yaml:"scopes"`
		TokenManagement bool `yaml:"token_management_enabled"`
		PKCE            bool `yaml:"pkce_enabled"`
	} `yaml:"oauth_config"`
	Settings struct {
		EventSubscriptions struct {
			RequestURL string   `yaml:"request_url"`
			BotEvents  []string `yaml:"bot_events"`
			UserEvents []string `yaml:"user_events"`
		} `yaml:"event_subscriptions"`
		Interactivity *struct {
			IsEnabled  *bool  `yaml:"is_enabled"`
			RequestURL string `yaml:"request_url"`
		} `yaml:"interactivity"`
		OrgDeploy       bool   `yaml:"org_deploy_enabled"`
		FunctionRuntime string `yaml:"function_runtime"`
		SocketMode      bool   `yaml:"socket_mode_enabled"`
		TokenRotation   bool   `yaml:"token_rotation_enabled"`
	} `yaml:"settings"`
	Functions map[string]manifestFunction `yaml:"functions"`
}

// manifestFunction is a custom step (a function) of the manifest.
type manifestFunction struct {
	Title       string             `yaml:"title"`
	Description string             `yaml:"description"`
	Input       manifestParameters `yaml:"input_parameters"`
	Output      manifestParameters `yaml:"output_parameters"`
}

type manifestParameters struct {
	Properties map[string]struct {
		Type        string `yaml:"type"`
		Title       string `yaml:"title"`
		Description string `yaml:"description"`
		Hint        string `yaml:"hint"`
	} `yaml:"properties"`
	Required []string `yaml:"required"`
}

// TestManifestFollowsSlacksSchema checks slack-app-manifest.yaml against
// the limits of Slack's manifest schema for the fields it uses, so that
// "Create New App → From an app manifest" takes it as it is.
func TestManifestFollowsSlacksSchema(t *testing.T) {
	raw, err := os.ReadFile("../../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var m slackManifest
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("the manifest has a field Slack's schema does not allow, or a wrong type: %v", err)
	}
	length := func(field, v string, lo, hi int) {
		if n := utf8.RuneCountInString(v); n < lo || n > hi {
			t.Errorf("%s is %d characters (%q); Slack takes %d to %d", field, n, v, lo, hi)
		}
	}
	unique := func(field string, vs []string, maxLen, maxItems int) {
		seen := map[string]bool{}
		if len(vs) > maxItems {
			t.Errorf("%s has %d items; Slack takes at most %d", field, len(vs), maxItems)
		}
		for _, v := range vs {
			if seen[v] {
				t.Errorf("%s lists %q twice; Slack wants each once", field, v)
			}
			seen[v] = true
			length(field+" item", v, 1, maxLen)
		}
	}
	httpURL := regexp.MustCompile(`^https?://`)

	if m.DisplayInformation == nil {
		t.Fatal("display_information is required")
	}
	di := m.DisplayInformation
	length("display_information.name", di.Name, 1, 35)
	if di.Description != "" {
		length("display_information.description", di.Description, 1, 140)
	}
	if di.LongDescription != "" {
		length("display_information.long_description", di.LongDescription, 175, 4000)
	}
	if c := di.BackgroundColor; c != "" && !regexp.MustCompile(`^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$`).MatchString(c) {
		t.Errorf("display_information.background_color %q is not #RGB or #RRGGBB", c)
	}
	if bu := m.Features.BotUser; bu == nil {
		t.Error("features.bot_user is missing: the app needs a bot user for its bot token")
	} else {
		length("features.bot_user.display_name", bu.DisplayName, 1, 80)
	}
	if av := m.Features.AssistantView; av != nil && av.Description == "" {
		t.Error("features.assistant_view needs assistant_description")
	}
	if av := m.Features.AgentView; av != nil {
		length("features.agent_view.agent_description", av.Description, 1, 300)
		if len(av.Prompts) > 4 {
			t.Errorf("features.agent_view.suggested_prompts has %d prompts; Slack takes at most 4", len(av.Prompts))
		}
		for _, p := range av.Prompts {
			length("features.agent_view.suggested_prompts title", p.Title, 1, 75)
			length("features.agent_view.suggested_prompts message", p.Message, 1, 2000)
		}
	}
	if m.Features.AgentView != nil && m.Features.AssistantView != nil {
		t.Error("features has both agent_view and assistant_view; an app has one")
	}
	if len(m.Features.SlashCommands) > 50 {
		t.Errorf("features.slash_commands has %d commands; Slack takes at most 50", len(m.Features.SlashCommands))
	}
	for _, c := range m.Features.SlashCommands {
		if !regexp.MustCompile(`^/[a-z0-9_-]{1,31}$`).MatchString(c.Command) {
			t.Errorf("slash command %q is not /name (lowercase, at most 32 characters)", c.Command)
		}
		length("features.slash_commands description", c.Description, 1, 2000)
		if c.UsageHint != "" {
			length("features.slash_commands usage_hint", c.UsageHint, 1, 1000)
		}
		if c.URL != "" && !httpURL.MatchString(c.URL) {
			t.Errorf("slash command url %q must start with http(s)://", c.URL)
		}
	}

	callbackIDs := map[string]bool{}
	for _, sc := range m.Features.Shortcuts {
		length("features.shortcuts name", sc.Name, 1, 24)
		length("features.shortcuts description", sc.Description, 1, 150)
		length("features.shortcuts callback_id", sc.CallbackID, 1, 255)
		if sc.Type != "message" && sc.Type != "global" {
			t.Errorf("shortcut %q has type %q; Slack takes message or global", sc.Name, sc.Type)
		}
		if callbackIDs[sc.CallbackID] {
			t.Errorf("shortcut callback_id %q is used twice", sc.CallbackID)
		}
		callbackIDs[sc.CallbackID] = true
	}
	if len(m.Functions) > 0 && (!m.Settings.OrgDeploy || m.Settings.FunctionRuntime != "remote") {
		t.Errorf("the manifest has functions but org_deploy_enabled %v, function_runtime %q: a Bolt-style custom step needs an org-ready app with function_runtime remote",
			m.Settings.OrgDeploy, m.Settings.FunctionRuntime)
	}
	for id, f := range m.Functions {
		if !regexp.MustCompile(`^[a-z0-9_]{1,100}$`).MatchString(id) {
			t.Errorf("function callback_id %q: want lowercase letters, digits and _", id)
		}
		length("functions."+id+".title", f.Title, 1, 255)
		for which, ps := range map[string]manifestParameters{"input_parameters": f.Input, "output_parameters": f.Output} {
			for _, r := range ps.Required {
				if _, ok := ps.Properties[r]; !ok {
					t.Errorf("functions.%s.%s requires %q, which is not among its properties", id, which, r)
				}
			}
			for name, p := range ps.Properties {
				if p.Type == "" || p.Title == "" {
					t.Errorf("functions.%s.%s.%s needs a type and a title", id, which, name)
				}
			}
		}
	}

	unique("oauth_config.redirect_urls", m.OAuthConfig.RedirectURLs, 2500, 1000)
	for _, u := range m.OAuthConfig.RedirectURLs {
		// Slack's schema takes any string; Slack itself redirects only to
		// https (or localhost), and the install flow names this one.
		if !strings.HasPrefix(u, "https://") || !strings.HasSuffix(u, "/slack/oauth/callback") {
			t.Errorf("oauth_config.redirect_urls has %q; want https://…/slack/oauth/callback", u)
		}
	}
	unique("oauth_config.scopes.bot", m.OAuthConfig.Scopes.Bot, 50, 255)
	// resource:action, or one of Slack's single-word scopes (commands,
	// incoming-webhook).
	scope := regexp.MustCompile(`^([a-z_]+(:[a-z_]+(\.[a-z_]+)*)+|commands|incoming-webhook)$`)
	for _, s := range m.OAuthConfig.Scopes.Bot {
		if !scope.MatchString(s) {
			t.Errorf("oauth_config.scopes.bot has %q, which is not shaped like a Slack scope (resource:action, or commands)", s)
		}
	}
	ev := m.Settings.EventSubscriptions
	unique("settings.event_subscriptions.bot_events", ev.BotEvents, 50, 100)
	if ev.RequestURL != "" && !httpURL.MatchString(ev.RequestURL) {
		t.Errorf("settings.event_subscriptions.request_url %q must start with http(s)://", ev.RequestURL)
	}
	if it := m.Settings.Interactivity; it != nil {
		if it.IsEnabled == nil {
			t.Error("settings.interactivity needs is_enabled")
		}
		if it.RequestURL != "" && !httpURL.MatchString(it.RequestURL) {
			t.Errorf("settings.interactivity.request_url %q must start with http(s)://", it.RequestURL)
		}
	}
	if m.Settings.TokenRotation {
		t.Error("settings.token_rotation_enabled: the install flow stores a bot token that does not expire; rotation would need refresh tokens")
	}
}
