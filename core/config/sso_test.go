package config

import (
	"slices"
	"strings"
	"testing"
)

func TestSSOSettings(t *testing.T) {
	cfg, err := Parse("", []byte(`
sso:
  groups:
    eng-admins: {workspace: T0TEAM, role: admin}
    eng: {workspace: T0TEAM, role: member}
    guild-owners: {workspace: "123456789012345678", role: owner}
    ops: {workspace: 0195f2a4-7c1e-7000-8000-000000000001, role: member}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.SSO
	if s.GroupsClaimOrDefault() != "groups" || !slices.Equal(s.ScopesOrDefault(), []string{"openid", "email", "profile"}) || s.Require {
		t.Errorf("defaults: claim %q scopes %v require %v; want groups, openid email profile, false", s.GroupsClaimOrDefault(), s.ScopesOrDefault(), s.Require)
	}
	for group, want := range map[string]string{"eng": "slack", "guild-owners": "discord", "ops": ""} {
		if got := s.Groups[group].GroupPlatform(); got != want {
			t.Errorf("sso.groups[%q] platform = %q; want %q", group, got, want)
		}
	}
	cfg, err = Parse("", []byte("sso:\n  scopes: [email, openid, groups]\n  groups_claim: roles\n  require: true\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.SSO.ScopesOrDefault(); !slices.Equal(got, []string{"openid", "email", "groups"}) || cfg.SSO.GroupsClaimOrDefault() != "roles" {
		t.Errorf("scopes %v claim %q; want openid first, once, and roles", got, cfg.SSO.GroupsClaimOrDefault())
	}
}

func TestSSOSettingsErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"sso:\n  groups:\n    eng: {workspace: T0TEAM, role: boss}\n", `sso.groups["eng"].role: "boss" is not a role; want one of owner, admin, member`},
		{"sso:\n  groups:\n    eng: {role: admin}\n", `sso.groups["eng"].workspace: required`},
		{"sso:\n  groups:\n    eng: {workspace: T0TEAM, role: admin, platform: teams}\n", `sso.groups["eng"].platform: "teams"; want slack or discord`},
		{"sso:\n  groups:\n    eng: {workspace: 0195f2a4-7c1e-7000-8000-000000000001, role: admin, platform: slack}\n", `names a workspace id, which has no platform`},
		{"sso:\n  groups:\n    eng: {workspace: T0TEAM, rol: admin}\n", "rol"},
		{"sso:\n  scopes: [\"open id\"]\n", `sso.scopes[0]: "open id" is not a scope`},
	} {
		_, err := Parse("", []byte(c.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want an error naming %q", c.yaml, err, c.want)
		}
	}
}
