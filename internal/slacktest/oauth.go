package slacktest

import (
	"strconv"
	"strings"
	"time"
)

// Team is a Slack workspace the app is installed in through OAuth, with its
// own bot user and bot token. The fake answers auth.test for the token with
// the team's ids, posts as its bot user, and refuses the token once revoked.
//
// With Rotate, the app has token rotation on, as Slack documents it
// (https://docs.slack.dev/authentication/using-token-rotation): the code
// buys an expiring bot token (xoxe.xoxb-…) and a refresh token (xoxe-1-…);
// oauth.v2.access with grant_type=refresh_token spends the refresh token
// (a second use is refused invalid_refresh_token) for a new pair; a call
// with an expired token is refused token_expired.
//
// With EnterpriseID and OrgWide, the install is organisation-wide on
// Enterprise Grid: oauth.v2.access names the enterprise and no team
// (is_enterprise_install), and the token serves every team of it.
type Team struct {
	ID        string
	Name      string
	BotUserID string
	BotID     string
	Token     string // xoxb-; with Rotate, the stem of the expiring tokens
	// Scope is what oauth.v2.access says was granted; default the scopes
	// the authorize URL asked for is not known to the fake, so it answers
	// "chat:write" unless set.
	Scope string
	// Rotate turns token rotation on for this install.
	Rotate bool
	// EnterpriseID and EnterpriseName are the Enterprise Grid organisation;
	// OrgWide makes the install organisation-wide (ID is then ignored).
	EnterpriseID   string
	EnterpriseName string
	OrgWide        bool
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
	// expires is when each rotating token expires; refresh maps each live
	// refresh token to its install; spent holds the used ones.
	expires  map[string]time.Time
	refresh  map[string]*Team
	spent    map[string]bool
	lifetime time.Duration
	rotSeq   int
	// refreshes counts the refreshes granted per install (installKey).
	refreshes map[string]int
}

type codeGrant struct {
	team        *Team
	redirectURI string
}

// DefaultTokenLifetime is how long a rotating token lives: Slack's 12
// hours (expires_in 43200).
const DefaultTokenLifetime = 12 * time.Hour

// SetOAuth sets the client credentials oauth.v2.access accepts.
func (s *Server) SetOAuth(c OAuthCheck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.check = c
}

// SetTokenLifetime sets how long the rotating tokens handed out from now
// on live (expires_in); default DefaultTokenLifetime. Whole seconds, as
// Slack counts.
func (s *Server) SetTokenLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.lifetime = d
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
	code := "code-" + t.ID + t.EnterpriseID + "-" + strconv.Itoa(s.oauth.codeSeq)
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

// Refreshes counts the token refreshes Slack granted for the install of
// team (its ID, or its EnterpriseID for an org-wide install).
func (s *Server) Refreshes(team string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauth.refreshes[team]
}

// CurrentToken is the newest bot token handed out for the install of team
// (its ID, or its EnterpriseID for an org-wide install), "" when none.
func (s *Server) CurrentToken(team string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	best, bestExp := "", time.Time{}
	for tok, t := range s.oauth.teams {
		if installKey(t) != team || s.oauth.revoked[tok] {
			continue
		}
		exp, rotating := s.oauth.expires[tok]
		if !rotating {
			return tok
		}
		if exp.After(bestExp) {
			best, bestExp = tok, exp
		}
	}
	return best
}

func installKey(t *Team) string {
	if t.OrgWide {
		return t.EnterpriseID
	}
	return t.ID
}

func (s *Server) initOAuthLocked() {
	if s.oauth.teams == nil {
		s.oauth.teams = map[string]*Team{}
		s.oauth.codes = map[string]codeGrant{}
		s.oauth.revoked = map[string]bool{}
		s.oauth.expires = map[string]time.Time{}
		s.oauth.refresh = map[string]*Team{}
		s.oauth.spent = map[string]bool{}
		s.oauth.refreshes = map[string]int{}
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

// issueLocked hands out the install's bot token: its fixed Token, or with
// rotation a new expiring token and refresh token. It answers the token
// fields of oauth.v2.access.
func (s *Server) issueLocked(t *Team, resp map[string]any) {
	if !t.Rotate {
		s.oauth.teams[t.Token] = t
		delete(s.oauth.revoked, t.Token)
		resp["access_token"] = t.Token
		return
	}
	lifetime := s.oauth.lifetime
	if lifetime <= 0 {
		lifetime = DefaultTokenLifetime
	}
	secs := max(int(lifetime/time.Second), 1)
	s.oauth.rotSeq++
	n := strconv.Itoa(s.oauth.rotSeq)
	stem := strings.TrimPrefix(t.Token, "xoxb-")
	access, refresh := "xoxe.xoxb-1-"+stem+"-"+n, "xoxe-1-"+stem+"-"+n
	s.oauth.teams[access] = t
	s.oauth.expires[access] = time.Now().Add(time.Duration(secs) * time.Second)
	s.oauth.refresh[refresh] = t
	resp["access_token"] = access
	resp["refresh_token"] = refresh
	resp["expires_in"] = secs
}

// grantLocked is oauth.v2.access's answer for an install, without the
// token fields, in Slack's documented shape.
func (s *Server) grantLocked(t *Team) map[string]any {
	resp := map[string]any{
		"token_type":            "bot",
		"scope":                 t.Scope,
		"bot_user_id":           t.BotUserID,
		"app_id":                s.opts.AppID,
		"team":                  map[string]any{"id": t.ID, "name": t.Name},
		"enterprise":            nil,
		"authed_user":           map[string]any{"id": "U0INSTALLER"},
		"is_enterprise_install": false,
	}
	if t.EnterpriseID != "" {
		resp["enterprise"] = map[string]any{"id": t.EnterpriseID, "name": t.EnterpriseName}
	}
	if t.OrgWide {
		resp["team"] = nil
		resp["is_enterprise_install"] = true
	}
	return resp
}

// oauthV2Access answers oauth.v2.access in Slack's documented shape
// (https://docs.slack.dev/reference/methods/oauth.v2.access): the bot
// token, its scopes, the bot user, the app and the team (or for an
// organisation-wide install the enterprise and is_enterprise_install). A
// code is good once; errors are invalid_code, invalid_client_id,
// bad_client_secret and bad_redirect_uri as Slack names them. With
// grant_type=refresh_token it spends a refresh token for a new pair
// (invalid_refresh_token when unknown or spent).
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
	switch p.Get("grant_type") {
	case "refresh_token":
		rt := p.Get("refresh_token")
		t, ok := s.oauth.refresh[rt]
		if !ok || s.oauth.spent[rt] {
			return nil, "invalid_refresh_token"
		}
		delete(s.oauth.refresh, rt)
		s.oauth.spent[rt] = true
		s.oauth.refreshes[installKey(t)]++
		resp := s.grantLocked(t)
		s.issueLocked(t, resp)
		return resp, ""
	case "", "authorization_code":
	default:
		return nil, "invalid_grant_type"
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
	resp := s.grantLocked(t)
	s.issueLocked(t, resp)
	return resp, ""
}

// checkOAuthTokenLocked checks a token the OAuth flow handed out: "" and
// true when it is one and valid, an error and true when it is one and
// revoked or expired, false when the OAuth flow does not know it.
func (s *Server) checkOAuthTokenLocked(token string) (string, bool) {
	if s.oauth.revoked[token] {
		return "token_revoked", true
	}
	if exp, ok := s.oauth.expires[token]; ok && !time.Now().Before(exp) {
		return "token_expired", true
	}
	if s.teamLocked(token) != nil && (strings.HasPrefix(token, "xoxb-") || strings.HasPrefix(token, "xoxe.xoxb-")) {
		return "", true
	}
	return "", false
}
