package doctor_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/doctor"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestDoctorChecksSingleSignOn: with SWITCHBOARD_OIDC_ISSUER set, doctor
// says whether the settings are whole and whether the issuer's discovery
// document answers; without it, nothing.
func TestDoctorChecksSingleSignOn(t *testing.T) {
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	var issuer string
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
			"jwks_uri": issuer + "/keys", "end_session_endpoint": issuer + "/logout",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	}))
	t.Cleanup(idp.Close)
	issuer = idp.URL
	cfg := s.cfg
	base := cfg.Env
	env := map[string]string{}
	cfg.Env = func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return base(k)
	}
	rs, _ := run(t, cfg, "")
	if r := find(rs, "single sign-on"); r != nil {
		t.Fatalf("single sign-on checked with no issuer: %+v", r)
	}
	for _, c := range []struct {
		env    map[string]string
		status doctor.Status
		want   string
	}{
		{map[string]string{"SWITCHBOARD_OIDC_ISSUER": issuer}, doctor.StatusFail, "SWITCHBOARD_OIDC_CLIENT_ID is empty"},
		{map[string]string{"SWITCHBOARD_OIDC_ISSUER": issuer, "SWITCHBOARD_OIDC_CLIENT_ID": "sb", "SWITCHBOARD_PUBLIC_URL": ""}, doctor.StatusFail, "SWITCHBOARD_PUBLIC_URL is empty"},
		{map[string]string{"SWITCHBOARD_OIDC_ISSUER": issuer + "/nowhere", "SWITCHBOARD_OIDC_CLIENT_ID": "sb", "SWITCHBOARD_PUBLIC_URL": "http://127.0.0.1:8080"}, doctor.StatusFail, "reading the discovery document"},
		{map[string]string{"SWITCHBOARD_OIDC_ISSUER": issuer, "SWITCHBOARD_OIDC_CLIENT_ID": "sb", "SWITCHBOARD_PUBLIC_URL": "http://127.0.0.1:8080"}, doctor.StatusOK, "answers discovery (authorization at " + issuer + "/authorize; RP-initiated logout at " + issuer + "/logout)"},
	} {
		env = c.env
		rs, out := run(t, cfg, "")
		r := find(rs, "single sign-on")
		if r == nil || r.Status != c.status || !strings.Contains(r.Detail, c.want) {
			t.Errorf("env %v: single sign-on = %+v; want %s saying %q:\n%s", c.env, r, c.status, c.want, out)
		}
	}
}
