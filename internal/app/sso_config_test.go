package app

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestSSOSettingsErrors: single sign-on's settings that cannot work stop
// the start with an error naming the variable or the YAML field.
func TestSSOSettingsErrors(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	for _, c := range []struct {
		env     map[string]string
		require bool
		want    string
	}{
		{map[string]string{"SWITCHBOARD_OIDC_ISSUER": "https://idp.example.test"}, false, "SWITCHBOARD_OIDC_CLIENT_ID is empty"},
		{map[string]string{"SWITCHBOARD_OIDC_CLIENT_ID": "sb"}, false, "SWITCHBOARD_OIDC_CLIENT_ID is set but SWITCHBOARD_OIDC_ISSUER is empty"},
		{map[string]string{}, true, "sso.require: single sign-on is required but SWITCHBOARD_OIDC_ISSUER is not set"},
		{map[string]string{"SWITCHBOARD_OIDC_ISSUER": "idp.example.test", "SWITCHBOARD_OIDC_CLIENT_ID": "sb", "SWITCHBOARD_PUBLIC_URL": "https://sb.example.test"}, false, `SWITCHBOARD_OIDC_ISSUER: "idp.example.test" is not an issuer URL`},
		{map[string]string{"SWITCHBOARD_OIDC_ISSUER": "https://idp.example.test", "SWITCHBOARD_OIDC_CLIENT_ID": "sb"}, false, "SWITCHBOARD_PUBLIC_URL is empty"},
	} {
		cfg := Config{Env: func(k string) string { return c.env[k] }}
		s, err := NewSSO(cfg, st, config.SSO{Require: c.require})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v (require %v): %v, %v; want an error naming %q", c.env, c.require, s, err, c.want)
		}
	}
	cfg := Config{Env: func(string) string { return "" }}
	if s, err := NewSSO(cfg, st, config.SSO{}); s != nil || err != nil {
		t.Errorf("no settings: %v, %v; want SSO off, no error", s, err)
	}
}
