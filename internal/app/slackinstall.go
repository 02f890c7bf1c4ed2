package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	slackbot "github.com/switchboardhq/switchboard/bots/slack"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/store"
)

// SlackInstall is the configuration of the Slack install flow and of the
// secrets kept at rest.
type SlackInstall struct {
	SlackClientID     string // SLACK_CLIENT_ID: turns the install flow on
	SlackClientSecret string // SLACK_CLIENT_SECRET
	// PublicURL is the address Slack redirects back to
	// (SWITCHBOARD_PUBLIC_URL), without /slack/oauth/callback.
	PublicURL string
	// Keys seal the secrets stored in the database (SWITCHBOARD_SECRET_KEY);
	// empty: nothing secret can be stored.
	Keys *secret.Keyring
	// WorkspaceBinder binds a newly installed Slack team, or a Discord guild
	// the bot joins, to a workspace.
	// Optional.
	WorkspaceBinder slackbot.WorkspaceBinder
	// TokenRefreshMargin is how long before its expiry a rotating bot token
	// is renewed (SLACK_TOKEN_REFRESH_MARGIN, default 2h).
	TokenRefreshMargin time.Duration
}

func (s *SlackInstall) fromEnv(getenv func(string) string) error {
	s.SlackClientID = strings.TrimSpace(getenv("SLACK_CLIENT_ID"))
	s.SlackClientSecret = strings.TrimSpace(getenv("SLACK_CLIENT_SECRET"))
	s.PublicURL = strings.TrimRight(strings.TrimSpace(getenv("SWITCHBOARD_PUBLIC_URL")), "/")
	if v := strings.TrimSpace(getenv("SLACK_TOKEN_REFRESH_MARGIN")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 11*time.Hour {
			return fmt.Errorf("SLACK_TOKEN_REFRESH_MARGIN: %q must be a duration between 1s and 11h (Slack's tokens live 12h), such as 2h", v)
		}
		s.TokenRefreshMargin = d
	}
	keys, err := secret.ParseKeys(getenv(secret.Setting))
	if err != nil {
		return err // names SWITCHBOARD_SECRET_KEY
	}
	s.Keys = keys
	return nil
}

func (s *SlackInstall) validate() error {
	if s.SlackClientID == "" {
		if s.SlackClientSecret != "" {
			return errors.New("SLACK_CLIENT_SECRET is set but SLACK_CLIENT_ID is not")
		}
		return nil
	}
	if s.SlackClientSecret == "" {
		return errors.New("SLACK_CLIENT_ID is set: set SLACK_CLIENT_SECRET too (Basic Information → App Credentials)")
	}
	u, err := url.Parse(s.PublicURL)
	if s.PublicURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("SWITCHBOARD_PUBLIC_URL: %q must be the address Slack reaches this server at, such as https://switchboard.example.com (SLACK_CLIENT_ID is set)", s.PublicURL)
	}
	return nil
}

// stateClaimPlatform is the inbound dedupe namespace the install states are
// spent in: a state replayed within the dedupe window is refused.
const stateClaimPlatform = "slack_oauth_state"

// slackInstallOptions builds what the Slack adapter needs for the install
// flow; nil, nil without SLACK_CLIENT_ID.
func (a *App) slackInstallOptions() (slackbot.Installations, *slackbot.OAuthOptions, error) {
	cfg := a.cfg
	if err := cfg.SlackInstall.validate(); err != nil {
		return nil, nil, err
	}
	if cfg.SlackClientID == "" {
		return nil, nil, nil
	}
	installs := &slackInstallations{st: a.Store, keys: cfg.Keys, now: cfg.Now, holder: uuid.NewString()}
	key := sha256.Sum256([]byte("slack oauth state\x00" + cfg.SlackClientSecret + "\x00" + cfg.SlackSigningSecret))
	oauth := &slackbot.OAuthOptions{
		ClientID:     cfg.SlackClientID,
		ClientSecret: cfg.SlackClientSecret,
		RedirectURL:  cfg.PublicURL + "/slack/oauth/callback",
		StateKey:     key[:],
		ClaimStateFunc: func(ctx context.Context, nonce string, now time.Time) (bool, error) {
			return a.Store.InboundRecord(ctx, &store.InboundRecordParams{Platform: stateClaimPlatform, EventID: nonce, Now: now})
		},
		AuthorizeURL:  cfg.Env("SLACK_AUTHORIZE_URL"), // tests; default Slack's
		RefreshMargin: cfg.TokenRefreshMargin,
	}
	return installs, oauth, nil
}

// slackInstallations keeps Slack installations in the store with their
// tokens sealed under SWITCHBOARD_SECRET_KEY, bound to the team's row.
type slackInstallations struct {
	st   store.Store
	keys *secret.Keyring
	now  func() time.Time
	// holder names this process in the renewals it claims.
	holder string
}

func (s *slackInstallations) seal(what, token, aad, key string) (string, error) {
	sealed, err := s.keys.Seal([]byte(token), aad)
	if err != nil {
		return "", fmt.Errorf("refusing to store the %s of slack install %s: %w", what, key, err)
	}
	redact.AddSecrets(token)
	return string(sealed), nil
}

func (s *slackInstallations) InstallationSave(ctx context.Context, in *slackbot.Installation) error {
	bot, err := s.seal("bot token", in.BotToken, store.SlackInstallationAAD(in.TeamID), in.TeamID)
	if err != nil {
		return err
	}
	p := &store.SlackInstallationSaveParams{
		TeamID: in.TeamID, TeamName: in.TeamName, BotUserID: in.BotUserID, AppID: in.AppID, Scope: in.Scope,
		BotToken: bot, InstalledBy: in.InstalledBy, EnterpriseID: in.EnterpriseID, EnterpriseName: in.EnterpriseName,
		EnterpriseInstall: in.EnterpriseInstall, Now: s.now(),
	}
	if in.RefreshToken != "" {
		if p.RefreshToken, err = s.seal("refresh token", in.RefreshToken, store.SlackRefreshTokenAAD(in.TeamID), in.TeamID); err != nil {
			return err
		}
		exp := in.TokenExpiresAt
		p.TokenExpiresAt = &exp
	}
	_, err = s.st.SlackInstallationSave(ctx, p)
	return err
}

// open opens a stored installation's tokens.
func (s *slackInstallations) open(row *store.SlackInstallation) (*slackbot.Installation, error) {
	token, err := s.keys.Open(secret.Sealed(row.BotToken), store.SlackInstallationAAD(row.TeamID))
	if err != nil {
		return nil, fmt.Errorf("opening the bot token of slack install %s: %w", row.TeamID, err)
	}
	redact.AddSecrets(string(token))
	in := &slackbot.Installation{
		TeamID: row.TeamID, TeamName: row.TeamName, BotUserID: row.BotUserID, AppID: row.AppID,
		Scope: row.Scope, InstalledBy: row.InstalledBy, BotToken: string(token),
		EnterpriseID: row.EnterpriseID, EnterpriseName: row.EnterpriseName, EnterpriseInstall: row.EnterpriseInstall,
		Rev: row.RefreshToken,
	}
	if row.RefreshToken != "" {
		refresh, err := s.keys.Open(secret.Sealed(row.RefreshToken), store.SlackRefreshTokenAAD(row.TeamID))
		if err != nil {
			return nil, fmt.Errorf("opening the refresh token of slack install %s: %w", row.TeamID, err)
		}
		redact.AddSecrets(string(refresh))
		in.RefreshToken = string(refresh)
	}
	if row.TokenExpiresAt != nil {
		in.TokenExpiresAt = *row.TokenExpiresAt
	}
	return in, nil
}

func (s *slackInstallations) InstallationGet(ctx context.Context, team, enterprise string) (*slackbot.Installation, error) {
	row, err := s.st.SlackInstallationFind(ctx, &store.SlackInstallationFindParams{TeamID: team, EnterpriseID: enterprise})
	if errors.Is(err, store.ErrNotFound) {
		return nil, slackbot.ErrNotInstalled
	}
	if err != nil {
		return nil, err
	}
	return s.open(row)
}

func (s *slackInstallations) InstallationDelete(ctx context.Context, key string) error {
	if err := s.st.SlackInstallationDelete(ctx, key); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

func (s *slackInstallations) InstallationSeen(ctx context.Context, key, team string) error {
	return s.st.SlackInstallationTouch(ctx, &store.SlackInstallationTouchParams{Installation: key, TeamID: team, Now: s.now()})
}

func (s *slackInstallations) InstallationsExpiring(ctx context.Context, before time.Time) ([]*slackbot.Installation, error) {
	rows, err := s.st.SlackInstallationExpiring(ctx, &store.SlackInstallationExpiringParams{Before: before, Now: s.now()})
	if err != nil {
		return nil, err
	}
	out := make([]*slackbot.Installation, 0, len(rows))
	for _, row := range rows {
		in, err := s.open(row)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

func (s *slackInstallations) InstallationClaimRenewal(ctx context.Context, in *slackbot.Installation, until time.Time) (bool, error) {
	_, err := s.st.SlackInstallationClaimRefresh(ctx, &store.SlackInstallationClaimRefreshParams{
		TeamID: in.TeamID, Expect: in.Rev, Holder: s.holder, Until: until, Now: s.now(),
	})
	switch {
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

func (s *slackInstallations) InstallationRenewed(ctx context.Context, from, in *slackbot.Installation) error {
	bot, err := s.seal("bot token", in.BotToken, store.SlackInstallationAAD(in.TeamID), in.TeamID)
	if err != nil {
		return err
	}
	refresh, err := s.seal("refresh token", in.RefreshToken, store.SlackRefreshTokenAAD(in.TeamID), in.TeamID)
	if err != nil {
		return err
	}
	_, err = s.st.SlackInstallationRefreshed(ctx, &store.SlackInstallationRefreshedParams{
		TeamID: in.TeamID, Expect: from.Rev, BotToken: bot, RefreshToken: refresh, TokenExpiresAt: in.TokenExpiresAt, Now: s.now(),
	})
	return err
}

func (s *slackInstallations) InstallationRenewFailed(ctx context.Context, from *slackbot.Installation, why string, stop bool, retryAt time.Time) error {
	p := &store.SlackInstallationRefreshFailedParams{TeamID: from.TeamID, Holder: s.holder, Error: redact.String(why), Stop: stop, Now: s.now()}
	if !stop {
		p.RetryAt = &retryAt
	}
	_, err := s.st.SlackInstallationRefreshFailed(ctx, p)
	return err
}

// RotateResult is what RotateKey did.
type RotateResult struct {
	Resealed int // sealed again under the current key
	Current  int // already under the current key
	// Unopened names the secrets that open under no listed key: reported,
	// left as they are.
	Unopened []string
}

// RotateKey seals every stored secret again under the current (first) key
// of SWITCHBOARD_SECRET_KEY. A secret that opens under no listed key is
// reported in Unopened and left untouched; one that changed meanwhile (a
// reinstall) is skipped, as it was sealed under the current key.
func RotateKey(ctx context.Context, st store.Store, keys *secret.Keyring, now func() time.Time) (*RotateResult, error) {
	if !keys.Configured() {
		return nil, secret.ErrNoKey
	}
	res := &RotateResult{}
	after := ""
	for {
		page, err := st.SlackInstallationList(ctx, &store.SlackInstallationListParams{AfterTeamID: after})
		if err != nil {
			return res, err
		}
		for _, in := range page {
			after = in.TeamID
			sealed := secret.Sealed(in.BotToken)
			if !keys.NeedsRotation(sealed) && (in.RefreshToken == "" || !keys.NeedsRotation(secret.Sealed(in.RefreshToken))) {
				res.Current++
				continue
			}
			aad := store.SlackInstallationAAD(in.TeamID)
			plain, err := keys.Open(sealed, aad)
			if err != nil {
				res.Unopened = append(res.Unopened, fmt.Sprintf("slack bot token of team %s: %v", in.TeamID, err))
				continue
			}
			again, err := keys.Seal(plain, aad)
			if err != nil {
				return res, err
			}
			var refreshAgain secret.Sealed
			if in.RefreshToken != "" {
				raad := store.SlackRefreshTokenAAD(in.TeamID)
				plain, err := keys.Open(secret.Sealed(in.RefreshToken), raad)
				if err != nil {
					res.Unopened = append(res.Unopened, fmt.Sprintf("slack refresh token of team %s: %v", in.TeamID, err))
					continue
				}
				if refreshAgain, err = keys.Seal(plain, raad); err != nil {
					return res, err
				}
			}
			_, err = st.SlackInstallationReseal(ctx, &store.SlackInstallationResealParams{TeamID: in.TeamID, Expect: in.BotToken, BotToken: string(again), RefreshToken: string(refreshAgain), Now: now()})
			switch {
			case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
				continue // reinstalled (under the current key) or removed meanwhile
			case err != nil:
				return res, err
			}
			res.Resealed++
		}
		if len(page) < store.DefaultListLimit {
			break
		}
	}
	if err := rotateConnections(ctx, st, keys, now, res); err != nil {
		return res, err
	}
	return res, rotateMCPGrants(ctx, st, keys, now, res)
}

// rotateMCPGrants seals the MCP servers' OAuth grants again under the
// current key; one refreshed meanwhile was sealed under it already.
func rotateMCPGrants(ctx context.Context, st store.Store, keys *secret.Keyring, now func() time.Time, res *RotateResult) error {
	grants, err := st.MCPGrantList(ctx)
	if err != nil {
		return err
	}
	for _, g := range grants {
		sealed := secret.Sealed(g.SealedGrant)
		if !keys.NeedsRotation(sealed) {
			res.Current++
			continue
		}
		aad := store.MCPGrantAAD(g.MCPGrantKey)
		plain, err := keys.Open(sealed, aad)
		if err != nil {
			res.Unopened = append(res.Unopened, fmt.Sprintf("OAuth grant of MCP server %s: %v", g.MCPGrantKey, err))
			continue
		}
		again, err := keys.Seal(plain, aad)
		if err != nil {
			return err
		}
		_, err = st.MCPGrantSwap(ctx, &store.MCPGrantSwapParams{MCPGrantKey: g.MCPGrantKey, Expect: g.Version, SealedGrant: string(again), Now: now()})
		switch {
		case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
			continue // refreshed (under the current key) or removed meanwhile
		case err != nil:
			return err
		}
		res.Resealed++
	}
	return nil
}

// rotateConnections seals the GitHub and Google tokens again under the
// current key; one refreshed meanwhile was sealed under it already.
func rotateConnections(ctx context.Context, st store.Store, keys *secret.Keyring, now func() time.Time, res *RotateResult) error {
	after := uuid.Nil
	for {
		page, err := st.ConnectionList(ctx, &store.ConnectionListParams{AfterID: after})
		if err != nil {
			return err
		}
		for _, c := range page {
			after = c.ID
			sealed := []string{c.AccessToken, c.RefreshToken}
			if !keys.NeedsRotation(secret.Sealed(c.AccessToken)) && (c.RefreshToken == "" || !keys.NeedsRotation(secret.Sealed(c.RefreshToken))) {
				res.Current++
				continue
			}
			again := make([]string, 2)
			failed := false
			for i, which := range []string{"access", "refresh"} {
				if sealed[i] == "" {
					continue
				}
				aad := store.ConnectionAAD(c.Provider, c.Owner, which)
				plain, err := keys.Open(secret.Sealed(sealed[i]), aad)
				if err != nil {
					res.Unopened = append(res.Unopened, fmt.Sprintf("%s %s token of connection %s (%s): %v", c.Provider, which, c.ID, c.Account, err))
					failed = true
					break
				}
				s, err := keys.Seal(plain, aad)
				if err != nil {
					return err
				}
				again[i] = string(s)
			}
			if failed {
				continue
			}
			_, err := st.ConnectionSetTokens(ctx, &store.ConnectionTokenParams{
				ID: c.ID, Expect: c.AccessToken, AccessToken: again[0], RefreshToken: again[1], Expiry: c.Expiry, Now: now(),
			})
			switch {
			case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
				continue // refreshed (under the current key) or disconnected meanwhile
			case err != nil:
				return err
			}
			res.Resealed++
		}
		if len(page) < store.DefaultListLimit {
			return nil
		}
	}
}

// slackRenewalsReadyz reports on /readyz the installs whose token renewal
// Slack refused for good: ready (the other teams are served), but their
// tokens run out and an operator must reinstall the app there.
func (a *App) slackRenewalsReadyz(ctx context.Context, w io.Writer) {
	if a.cfg.SlackClientID == "" {
		return
	}
	stopped, err := a.Store.SlackInstallationRefreshStopped(ctx, 10)
	if err != nil {
		_, _ = fmt.Fprintf(w, "slack: reading the token renewals: %s\n", redact.String(err.Error()))
		return
	}
	for _, in := range stopped {
		_, _ = fmt.Fprintf(w, "slack: token renewal of %s stopped (%s): %s; reinstall the app there\n",
			cmp.Or(in.TeamName, in.TeamID), in.TeamID, in.RefreshError)
	}
}
