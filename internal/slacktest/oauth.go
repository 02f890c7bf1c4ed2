package slacktest

import (
	"strconv"
	"strings"
)

// Team is a Slack workspace the app is installed in through OAuth, with its
// own bot user and bot token. The fake answers auth.test for the token with
// the team's ids, posts as its bot user, and refuses the token once revoked.
type Team struct {
	ID        string
	Name      string
	BotUserID string
	BotID     string
	Token     string // xoxb-
	// Scope is what oauth.v2.access says was granted; default the scopes
	// the authorize URL asked for is not known to the fake, so it answers
	// "chat:write" unless set.
	Scope string
}

// OAuthCheck configures oauth.v2.access: when ClientID is set, only that
// client id and secret are accepted.
type OAuthCheck struct {
	ClientID     string
	ClientSecret string
}

type oauthState struct {
	check   OAuthCheck
	teams   map[string]*Team // by token
	codes   map[string]codeGrant
	revoked map[string]bool
	codeSeq int
}

type codeGrant struct {
	team        *Team
	redirectURI string
}

// SetOAuth sets the client credentials oauth.v2.access accepts.
func (s *Server) SetOAuth(c OAuthCheck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.check = c
}

// Authorize plays the person who clicks "Allow" on Slack's authorize page
// for team: it returns a code that oauth.v2.access exchanges, once, for the
// team's bot token, when redirectURI is the one the exchange names (as
// Slack checks). The team's token is valid from then on.
func (s *Server) Authorize(t Team, redirectURI string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initOAuthLocked()
	s.oauth.codeSeq++
	code := "code-" + t.ID + "-" + strconv.Itoa(s.oauth.codeSeq)
	tt := t
	s.oauth.codes[code] = codeGrant{team: &tt, redirectURI: redirectURI}
	return code
}

// Revoke makes token invalid, as uninstalling the app does: every later
// call with it is answered token_revoked.
func (s *Server) Revoke(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initOAuthLocked()
	s.oauth.revoked[token] = true
	s.notifyLocked()
}

func (s *Server) initOAuthLocked() {
	if s.oauth.teams == nil {
		s.oauth.teams = map[string]*Team{}
		s.oauth.codes = map[string]codeGrant{}
		s.oauth.revoked = map[string]bool{}
	}
}

// teamLocked is the OAuth team whose token this is, nil for the server's
// own single token.
func (s *Server) teamLocked(token string) *Team {
	return s.oauth.teams[token]
}

// botUserLocked is who a message posted with token is from.
func (s *Server) botUserLocked(token string) string {
	if t := s.teamLocked(token); t != nil {
		return t.BotUserID
	}
	return s.opts.BotUserID
}

// oauthV2Access answers oauth.v2.access in Slack's documented shape
// (https://docs.slack.dev/reference/methods/oauth.v2.access): the bot
// token, its scopes, the bot user, the app and the team. A code is good
// once; errors are invalid_code, invalid_client_id, bad_client_secret and
// bad_redirect_uri as Slack names them.
func (s *Server) oauthV2Access(req request) (map[string]any, string) {
	s.initOAuthLocked()
	p := req.params
	if s.oauth.check.ClientID != "" {
		if p.Get("client_id") != s.oauth.check.ClientID {
			return nil, "invalid_client_id"
		}
		if p.Get("client_secret") != s.oauth.check.ClientSecret {
			return nil, "bad_client_secret"
		}
	}
	g, ok := s.oauth.codes[p.Get("code")]
	if !ok {
		return nil, "invalid_code"
	}
	delete(s.oauth.codes, p.Get("code"))
	if g.redirectURI != "" && p.Get("redirect_uri") != g.redirectURI {
		return nil, "bad_redirect_uri"
	}
	t := g.team
	if t.Scope == "" {
		t.Scope = "chat:write"
	}
	s.oauth.teams[t.Token] = t
	delete(s.oauth.revoked, t.Token)
	return map[string]any{
		"access_token":          t.Token,
		"token_type":            "bot",
		"scope":                 t.Scope,
		"bot_user_id":           t.BotUserID,
		"app_id":                s.opts.AppID,
		"team":                  map[string]any{"id": t.ID, "name": t.Name},
		"enterprise":            nil,
		"authed_user":           map[string]any{"id": "U0INSTALLER"},
		"is_enterprise_install": false,
	}, ""
}

// checkOAuthTokenLocked checks a token the OAuth flow handed out: "" and
// true when it is one and valid, an error and true when it is one and
// revoked, false when the OAuth flow does not know it.
func (s *Server) checkOAuthTokenLocked(token string) (string, bool) {
	if s.oauth.revoked[token] {
		return "token_revoked", true
	}
	if s.teamLocked(token) != nil && strings.HasPrefix(token, "xoxb-") {
		return "", true
	}
	return "", false
}
