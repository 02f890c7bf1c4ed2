package app_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/app"
)

// TestPlatformSettingErrorsNameTheSetting: a start refused for a platform
// setting names the environment variable at fault and the one that turned
// the platform on, never another (SLACK_CLIENT_ID without a signing secret
// used to be blamed on SLACK_BOT_TOKEN) nor an option of the adapter's Go
// API (AppToken, Options.PublicKey).
func TestPlatformSettingErrorsNameTheSetting(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs(filepath.Join("testdata", "slack_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes, base64
	install := map[string]string{"SLACK_CLIENT_ID": "123.456", "SLACK_CLIENT_SECRET": "cs", "SWITCHBOARD_PUBLIC_URL": "https://sb.example.com", "SWITCHBOARD_SECRET_KEY": key}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name    string
		env     map[string]string
		want    []string
		wantNot []string
	}{
		{"install flow without a way to receive events", install,
			[]string{"SLACK_CLIENT_ID", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"}, []string{"SLACK_BOT_TOKEN", "AppToken", "SigningSecret"}},
		{"bot token without a way to receive events", map[string]string{"SLACK_BOT_TOKEN": "xoxb-1"},
			[]string{"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"}, []string{"AppToken", "SigningSecret"}},
		{"an app token that is not one", map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-2"},
			[]string{"SLACK_APP_TOKEN", "xapp-"}, []string{"AppToken must"}},
		{"install flow with a bad app token", with(install, "SLACK_APP_TOKEN", "nope"),
			[]string{"SLACK_APP_TOKEN"}, []string{"SLACK_BOT_TOKEN", "AppToken must"}},
		{"a signing secret alone", map[string]string{"SLACK_SIGNING_SECRET": "s"},
			[]string{"SLACK_SIGNING_SECRET is set", "SLACK_BOT_TOKEN", "SLACK_CLIENT_ID"}, []string{"SLACK_APP_TOKEN"}},
		{"a discord public key that is not one", map[string]string{"DISCORD_BOT_TOKEN": "d-1", "DISCORD_PUBLIC_KEY": "zz"},
			[]string{"DISCORD_PUBLIC_KEY"}, []string{"Options."}},
		{"a discord API URL that is not one", map[string]string{"DISCORD_BOT_TOKEN": "d-1", "DISCORD_API_URL": "not a url"},
			[]string{"DISCORD_API_URL"}, []string{"Options."}},
		{"a discord command guild that is not an id", map[string]string{"DISCORD_BOT_TOKEN": "d-1", "DISCORD_COMMAND_GUILD_ID": "my-guild"},
			[]string{"DISCORD_COMMAND_GUILD_ID"}, []string{"Options."}},
		{"a matrix token without the rest", map[string]string{"MATRIX_ACCESS_TOKEN": "syt_1"},
			[]string{"MATRIX_HOMESERVER_URL is not set", "MATRIX_USER_ID is not set"}, []string{"MATRIX_ACCESS_TOKEN is not set", "Options."}},
		{"a matrix user id that is not one", map[string]string{"MATRIX_HOMESERVER_URL": "https://matrix.example.org", "MATRIX_USER_ID": "switchboard", "MATRIX_ACCESS_TOKEN": "syt_1"},
			[]string{"MATRIX_USER_ID"}, []string{"MATRIX_HOMESERVER_URL", "Options."}},
		{"a matrix homeserver that is not a URL", map[string]string{"MATRIX_HOMESERVER_URL": "matrix.example.org", "MATRIX_USER_ID": "@sb:example.org", "MATRIX_ACCESS_TOKEN": "syt_1"},
			[]string{"MATRIX_HOMESERVER_URL"}, []string{"MATRIX_USER_ID", "Options."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := with(tc.env, "SWITCHBOARD_MODEL", "scripted:"+script, "DATABASE_URL", "sqlite:"+filepath.Join(t.TempDir(), "sb.db"))
			getenv := func(k string) string { return env[k] }
			cfg, err := app.FromEnv(getenv)
			if err == nil {
				cfg.Addr, cfg.Logger = "-", slog.New(slog.DiscardHandler)
				var a *app.App
				a, err = app.Open(context.Background(), cfg)
				if err == nil {
					_ = a.Stop(context.Background())
				}
			}
			if err == nil {
				t.Fatalf("the start was not refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q names %s, which is not at fault", err, w)
				}
			}
		})
	}
}
