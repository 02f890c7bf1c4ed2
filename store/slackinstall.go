package store

import (
	"context"
	"time"
)

// Slack installations: the app installed in a Slack team through the OAuth
// v2 flow (bots/slack), one row per team, with that team's bot token. The
// token is stored sealed (package secret, "v1:<key id>:<ciphertext>"); the
// rules refuse a token that is not, so no clear-text token reaches a
// database.
//
// An organisation-wide install on Enterprise Grid has no team of its own:
// its row is keyed by the enterprise id (E…) in TeamID, with
// EnterpriseInstall set, and it serves every team of the organisation
// (SlackInstallationFind). With token rotation on, the bot token expires at
// TokenExpiresAt and RefreshToken buys the next one, once; exactly one
// holder renews it (SlackInstallationClaimRefresh, then
// SlackInstallationRefreshed or SlackInstallationRefreshFailed).

// SlackInstallation is the app installed in one Slack team, or in a whole
// Enterprise Grid organisation.
type SlackInstallation struct {
	// TeamID is the team; for an organisation-wide install, the enterprise
	// id (E…), which no team id equals.
	TeamID    string
	TeamName  string
	BotUserID string
	AppID     string
	Scope     string // the scopes granted, comma-separated as Slack sends them
	// BotToken is the team's bot token, sealed. Open it with the additional
	// data SlackInstallationAAD(TeamID).
	BotToken    string
	InstalledBy string // the Slack user who installed the app
	// EnterpriseID and EnterpriseName are the Enterprise Grid organisation
	// the team is in ("" outside one); EnterpriseInstall marks an
	// organisation-wide install.
	EnterpriseID      string
	EnterpriseName    string
	EnterpriseInstall bool
	// RefreshToken is the sealed refresh token of a rotating bot token
	// (SlackRefreshTokenAAD), "" without token rotation; TokenExpiresAt is
	// when the bot token expires, nil when it does not.
	RefreshToken   string
	TokenExpiresAt *time.Time
	// RefreshHolder holds the renewal until RefreshUntil (a claim); after a
	// failed renewal RefreshHolder is "" and RefreshUntil is when it may be
	// tried again.
	RefreshHolder string
	RefreshUntil  *time.Time
	// RefreshError is why the last renewal failed ("" when it did not),
	// at RefreshFailedAt; RefreshStopped: Slack refused it for good, and
	// it is not tried again until the app is reinstalled.
	RefreshError    string
	RefreshFailedAt *time.Time
	RefreshStopped  bool
	// LastEventAt is when an event of the install last arrived (kept to
	// about a minute), nil before the first.
	LastEventAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// SlackInstallationAAD is the additional data a team's bot token is sealed
// with: the row it belongs to, so a sealed token copied onto another team's
// row does not open.
func SlackInstallationAAD(teamID string) string { return "slack_installation:" + teamID }

// SlackRefreshTokenAAD is the additional data a refresh token is sealed
// with: its row, and that it is the refresh token, so it cannot stand in
// for the bot token.
func SlackRefreshTokenAAD(teamID string) string { return "slack_installation:" + teamID + ":refresh" }

// SlackInstallationSaveParams installs the app in a team, or replaces the
// team's installation (a reinstall brings a new token).
type SlackInstallationSaveParams struct {
	TeamID            string // the enterprise id for an organisation-wide install
	TeamName          string
	BotUserID         string
	AppID             string
	Scope             string
	BotToken          string // sealed
	InstalledBy       string
	EnterpriseID      string
	EnterpriseName    string
	EnterpriseInstall bool
	RefreshToken      string     // sealed; "" without token rotation
	TokenExpiresAt    *time.Time // with RefreshToken
	Now               time.Time
}

// SlackInstallationFindParams names a team an event came from or a post
// goes to, and its enterprise when known.
type SlackInstallationFindParams struct {
	TeamID       string
	EnterpriseID string
}

// SlackInstallationListParams pages through the installations in team id
// order.
type SlackInstallationListParams struct {
	AfterTeamID string
	Limit       int // 0 means DefaultListLimit
}

// SlackInstallationResealParams replaces a team's sealed token with the same
// token sealed again (under another key), only if the row still holds
// Expect: ErrConflict when the token changed meanwhile (a reinstall), so a
// rotation never overwrites a newer token with an older one.
type SlackInstallationResealParams struct {
	TeamID   string
	Expect   string
	BotToken string // sealed
	// RefreshToken is the refresh token sealed again; "" leaves it.
	RefreshToken string
	Now          time.Time
}

// SlackInstallationExpiringParams lists the rotating tokens that expire
// before Before and that no one renews now.
type SlackInstallationExpiringParams struct {
	Before time.Time
	Now    time.Time
	Limit  int // 0 means DefaultListLimit
}

// SlackInstallationClaimRefreshParams claims the renewal of a team's token
// for Holder until Until, if the row still holds the refresh token Expect,
// renewal has not stopped and no other claim is live.
type SlackInstallationClaimRefreshParams struct {
	TeamID string
	Expect string // the sealed refresh token read
	Holder string
	Until  time.Time
	Now    time.Time
}

// SlackInstallationRefreshedParams stores a renewed token pair in place of
// the refresh token Expect, and ends the claim.
type SlackInstallationRefreshedParams struct {
	TeamID         string
	Expect         string // the sealed refresh token that was spent
	BotToken       string // sealed
	RefreshToken   string // sealed
	TokenExpiresAt time.Time
	Now            time.Time
}

// SlackInstallationRefreshFailedParams records a failed renewal by Holder:
// Stop when Slack refused it for good; otherwise it may be tried again from
// RetryAt.
type SlackInstallationRefreshFailedParams struct {
	TeamID  string
	Holder  string
	Error   string
	Stop    bool
	RetryAt *time.Time
	Now     time.Time
}

// SlackInstallationTouchParams records that an event of an install arrived
// at Now; TeamID is the team it came from, which for an organisation-wide
// install (Installation its enterprise id) is noted as served by it.
type SlackInstallationTouchParams struct {
	Installation string
	TeamID       string
	Now          time.Time
}

// SlackInstallationQueries are the installations' queries.
type SlackInstallationQueries interface {
	// SlackInstallationSave inserts or replaces the team's installation;
	// a replacement keeps CreatedAt and LastEventAt and starts renewal
	// afresh.
	SlackInstallationSave(ctx context.Context, p *SlackInstallationSaveParams) (*SlackInstallation, error)
	// SlackInstallationGet returns a team's installation; ErrNotFound when
	// the app is not installed there.
	SlackInstallationGet(ctx context.Context, teamID string) (*SlackInstallation, error)
	// SlackInstallationFind returns the installation that serves a team:
	// the team's own, else the organisation-wide install the team was
	// served by (SlackInstallationTouch), else the organisation-wide
	// install of EnterpriseID; ErrNotFound when none.
	SlackInstallationFind(ctx context.Context, p *SlackInstallationFindParams) (*SlackInstallation, error)
	SlackInstallationList(ctx context.Context, p *SlackInstallationListParams) ([]*SlackInstallation, error)
	// SlackInstallationDelete removes a team's installation (uninstalled,
	// tokens revoked) and what it served; ErrNotFound when there is none.
	SlackInstallationDelete(ctx context.Context, teamID string) error
	SlackInstallationReseal(ctx context.Context, p *SlackInstallationResealParams) (*SlackInstallation, error)
	// SlackInstallationExpiring lists rotating tokens due for renewal,
	// soonest expiry first.
	SlackInstallationExpiring(ctx context.Context, p *SlackInstallationExpiringParams) ([]*SlackInstallation, error)
	// SlackInstallationClaimRefresh claims a renewal and returns the row as
	// claimed: ErrConflict when the refresh token changed, renewal stopped
	// or another holder's claim is live (the holder's own is taken again);
	// ErrNotFound when the row is gone. Of two holders claiming at once,
	// exactly one gets it.
	SlackInstallationClaimRefresh(ctx context.Context, p *SlackInstallationClaimRefreshParams) (*SlackInstallation, error)
	// SlackInstallationRefreshed stores the renewed pair: ErrConflict when
	// the refresh token is no longer Expect.
	SlackInstallationRefreshed(ctx context.Context, p *SlackInstallationRefreshedParams) (*SlackInstallation, error)
	// SlackInstallationRefreshFailed records a failed renewal: ErrConflict
	// when Holder no longer holds it.
	SlackInstallationRefreshFailed(ctx context.Context, p *SlackInstallationRefreshFailedParams) (*SlackInstallation, error)
	// SlackInstallationRefreshStopped lists the installs whose renewal
	// stopped (doctor, /readyz), at most limit.
	SlackInstallationRefreshStopped(ctx context.Context, limit int) ([]*SlackInstallation, error)
	// SlackInstallationTouch records an event's arrival (see the params).
	SlackInstallationTouch(ctx context.Context, p *SlackInstallationTouchParams) error
}
