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

// SlackInstallation is the app installed in one Slack team.
type SlackInstallation struct {
	TeamID    string
	TeamName  string
	BotUserID string
	AppID     string
	Scope     string // the scopes granted, comma-separated as Slack sends them
	// BotToken is the team's bot token, sealed. Open it with the additional
	// data SlackInstallationAAD(TeamID).
	BotToken    string
	InstalledBy string // the Slack user who installed the app
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// SlackInstallationAAD is the additional data a team's bot token is sealed
// with: the row it belongs to, so a sealed token copied onto another team's
// row does not open.
func SlackInstallationAAD(teamID string) string { return "slack_installation:" + teamID }

// SlackInstallationSaveParams installs the app in a team, or replaces the
// team's installation (a reinstall brings a new token).
type SlackInstallationSaveParams struct {
	TeamID      string
	TeamName    string
	BotUserID   string
	AppID       string
	Scope       string
	BotToken    string // sealed
	InstalledBy string
	Now         time.Time
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
	Now      time.Time
}

// SlackInstallationQueries are the installations' queries.
type SlackInstallationQueries interface {
	// SlackInstallationSave inserts or replaces the team's installation;
	// a replacement keeps CreatedAt.
	SlackInstallationSave(ctx context.Context, p *SlackInstallationSaveParams) (*SlackInstallation, error)
	// SlackInstallationGet returns a team's installation; ErrNotFound when
	// the app is not installed there.
	SlackInstallationGet(ctx context.Context, teamID string) (*SlackInstallation, error)
	SlackInstallationList(ctx context.Context, p *SlackInstallationListParams) ([]*SlackInstallation, error)
	// SlackInstallationDelete removes a team's installation (uninstalled,
	// tokens revoked); ErrNotFound when there is none.
	SlackInstallationDelete(ctx context.Context, teamID string) error
	SlackInstallationReseal(ctx context.Context, p *SlackInstallationResealParams) (*SlackInstallation, error)
}
