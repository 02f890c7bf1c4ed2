package core

import (
	"context"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// The admin view of Slack installs: each workspace (or Enterprise Grid
// organisation) the app was installed in through the OAuth flow, who
// installed it, what it was granted, when its token expires and whether
// its renewal works, and when its last event arrived. Read by GET
// /api/slack/installs, `switchboard installs` and the console; never a
// token.

// Renewal states of a rotating token (SlackInstall.Renewal).
const (
	RenewalNone     = ""         // the token does not expire
	RenewalOK       = "ok"       // renewed before it expires
	RenewalRetrying = "retrying" // the last renewal failed; tried again later
	RenewalStopped  = "stopped"  // Slack refused it for good: reinstall the app
)

// SlackInstall is one Slack install.
type SlackInstall struct {
	// Key is the team id, or for an organisation-wide install the
	// enterprise id.
	Key            string `json:"key"`
	TeamName       string `json:"team_name,omitempty"`
	EnterpriseID   string `json:"enterprise_id,omitempty"`
	EnterpriseName string `json:"enterprise_name,omitempty"`
	// OrgWide: installed organisation-wide; it serves every team of the
	// enterprise.
	OrgWide     bool     `json:"org_wide"`
	InstalledBy string   `json:"installed_by,omitempty"`
	BotUserID   string   `json:"bot_user_id"`
	Scopes      []string `json:"scopes"`
	// TokenExpiresAt is when the bot token expires (token rotation), null
	// when it does not.
	TokenExpiresAt *time.Time `json:"token_expires_at,omitempty"`
	// Renewal is "" (no rotation), ok, retrying or stopped; RenewalError
	// says why the last renewal failed.
	Renewal      string     `json:"renewal,omitempty"`
	RenewalError string     `json:"renewal_error,omitempty"`
	LastEventAt  *time.Time `json:"last_event_at,omitempty"`
	InstalledAt  time.Time  `json:"installed_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// SlackInstallList is a page of installs, in key order; Next is the key to
// read the next page after, "" on the last.
type SlackInstallList struct {
	Installs []SlackInstall `json:"installs"`
	Next     string         `json:"next,omitempty"`
}

// SlackInstalls reads a page of the Slack installs after the key after.
func (s *Service) SlackInstalls(ctx context.Context, after string, limit int) (*SlackInstallList, error) {
	return ReadSlackInstalls(ctx, s.st, after, limit)
}

// ReadSlackInstalls reads a page of at most limit (0: 100) Slack installs
// from st after the key after (the CLI's way, without a running service).
func ReadSlackInstalls(ctx context.Context, st store.SlackInstallationQueries, after string, limit int) (*SlackInstallList, error) {
	if limit <= 0 || limit > store.DefaultListLimit {
		limit = store.DefaultListLimit
	}
	rows, err := st.SlackInstallationList(ctx, &store.SlackInstallationListParams{AfterTeamID: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := &SlackInstallList{Installs: make([]SlackInstall, 0, len(rows))}
	for _, r := range rows {
		out.Installs = append(out.Installs, slackInstallOf(r))
	}
	if len(rows) == limit {
		out.Next = rows[len(rows)-1].TeamID
	}
	return out, nil
}

func slackInstallOf(r *store.SlackInstallation) SlackInstall {
	in := SlackInstall{
		Key: r.TeamID, TeamName: r.TeamName, EnterpriseID: r.EnterpriseID, EnterpriseName: r.EnterpriseName,
		OrgWide: r.EnterpriseInstall, InstalledBy: r.InstalledBy, BotUserID: r.BotUserID, Scopes: []string{},
		TokenExpiresAt: r.TokenExpiresAt, LastEventAt: r.LastEventAt, InstalledAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	for _, sc := range strings.Split(r.Scope, ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			in.Scopes = append(in.Scopes, sc)
		}
	}
	if r.RefreshToken != "" {
		switch {
		case r.RefreshStopped:
			in.Renewal = RenewalStopped
		case r.RefreshError != "":
			in.Renewal = RenewalRetrying
		default:
			in.Renewal = RenewalOK
		}
		in.RenewalError = r.RefreshError
	}
	return in
}
