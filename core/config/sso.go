package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// SSO maps the identity provider's groups to workspace roles (sso: in
// switchboard.yaml). Single sign-on itself is on when
// SWITCHBOARD_OIDC_ISSUER is set; this section says what a sign-in gives.
//
//	sso:
//	  groups_claim: groups
//	  scopes: [openid, email, profile, groups]
//	  require: false
//	  groups:
//	    eng-admins: {workspace: T0TEAM, role: admin}
//	    eng: {workspace: T0TEAM, role: member}
//
// At each sign-in a person's roles in the workspaces the groups name
// follow their groups: a group they left takes back the role it gave.
// Changes take effect at the next start.
type SSO struct {
	// GroupsClaim is the ID token (or userinfo) claim that lists the
	// person's groups (default groups). Entra ID sends group object ids
	// in groups; Okta and Keycloak send names.
	GroupsClaim string `yaml:"groups_claim,omitempty" json:"groups_claim,omitempty" default:"groups"`
	// Scopes are asked of the provider (default openid, email, profile).
	// openid is always asked. Add the scope your provider needs for the
	// groups claim (Okta and Keycloak: groups).
	Scopes []string `yaml:"scopes,omitempty" json:"scopes,omitempty" default:"[openid, email, profile]"`
	// Require makes single sign-on the only way into the console: the
	// one-time link and the operator token no longer open it (the token
	// still authenticates API calls as a bearer).
	Require bool `yaml:"require,omitempty" json:"require,omitempty" default:"false"`
	// Groups maps a group (as the claim names it) to a workspace and a
	// role there.
	Groups map[string]SSOGroup `yaml:"groups,omitempty" json:"groups,omitempty"`
}

// SSOGroup is the workspace role one group gives.
type SSOGroup struct {
	// Workspace is a Slack team id, a Discord guild id or a Switchboard
	// workspace id. A team or guild bound to no workspace gets one, made
	// at the first sign-in that needs it and bound to it.
	Workspace string `yaml:"workspace" json:"workspace"`
	// Platform says what Workspace is when it is a team or guild: slack or
	// discord (default: discord for an id of digits only, else slack).
	Platform string `yaml:"platform,omitempty" json:"platform,omitempty"`
	// Role is owner, admin or member. An owner is set only when the
	// workspace is made: in a workspace that has one, owner gives admin.
	Role string `yaml:"role" json:"role"`
}

// SSORoles are the roles sso.groups may give.
var SSORoles = []string{"owner", "admin", "member"}

// DefaultSSOScopes are asked when sso.scopes is empty.
var DefaultSSOScopes = []string{"openid", "email", "profile"}

// GroupsClaimOrDefault is the claim holding the groups.
func (s SSO) GroupsClaimOrDefault() string {
	if s.GroupsClaim == "" {
		return "groups"
	}
	return s.GroupsClaim
}

// ScopesOrDefault are the scopes asked, openid first.
func (s SSO) ScopesOrDefault() []string {
	scopes := s.Scopes
	if len(scopes) == 0 {
		scopes = DefaultSSOScopes
	}
	out := []string{"openid"}
	for _, sc := range scopes {
		if sc != "openid" && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// GroupPlatform is what g.Workspace names: "" for a workspace id (a
// UUID), else slack or discord.
func (g SSOGroup) GroupPlatform() string {
	if g.Platform != "" {
		return g.Platform
	}
	if isUUID(g.Workspace) {
		return ""
	}
	if strings.Trim(g.Workspace, "0123456789") == "" {
		return "discord"
	}
	return "slack"
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !strings.ContainsRune("0123456789abcdefABCDEF", c):
			return false
		}
	}
	return true
}

func (s SSO) validate() error {
	if s.GroupsClaim != "" && strings.TrimSpace(s.GroupsClaim) != s.GroupsClaim {
		return fmt.Errorf("sso.groups_claim: %q has spaces around it", s.GroupsClaim)
	}
	for i, sc := range s.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t") {
			return fmt.Errorf("sso.scopes[%d]: %q is not a scope (one word each)", i, sc)
		}
	}
	names := make([]string, 0, len(s.Groups))
	for name := range s.Groups {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		g := s.Groups[name]
		where := fmt.Sprintf("sso.groups[%q]", name)
		switch {
		case strings.TrimSpace(name) == "":
			return fmt.Errorf("sso.groups: a group name is empty")
		case strings.TrimSpace(g.Workspace) == "":
			return fmt.Errorf("%s.workspace: required (a Slack team id, a Discord guild id or a workspace id)", where)
		case !slices.Contains(SSORoles, g.Role):
			return fmt.Errorf("%s.role: %q is not a role; want one of %s", where, g.Role, strings.Join(SSORoles, ", "))
		case g.Platform != "" && g.Platform != "slack" && g.Platform != "discord":
			return fmt.Errorf("%s.platform: %q; want slack or discord", where, g.Platform)
		case g.Platform != "" && isUUID(g.Workspace):
			return fmt.Errorf("%s.platform: %q names a workspace id, which has no platform; leave platform out", where, g.Workspace)
		}
	}
	return nil
}
