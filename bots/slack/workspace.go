package slack

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
)

// A workspace is one Slack team the adapter talks to, with the client that
// holds that team's bot token and who the bot is there. The single-token
// mode (Options.BotToken) is one workspace; every team installed through
// the OAuth flow (Options.Installations) is another, made when first used.

// ErrNotInstalled: the app is not installed in the team (never, or it was
// uninstalled or its tokens revoked). It matches bots.ErrGone, so delivery
// there stops instead of retrying.
var ErrNotInstalled = fmt.Errorf("%w: the slack app is not installed in this team (uninstalled or its tokens revoked)", bots.ErrGone)

// Installation is the app installed in one team, its bot token in clear.
type Installation struct {
	TeamID      string
	TeamName    string
	BotUserID   string
	AppID       string
	Scope       string
	InstalledBy string
	BotToken    string
}

// Installations keeps the teams the app is installed in. The implementation
// stores the token sealed (internal/app); the adapter only sees it in clear.
type Installations interface {
	// InstallationSave stores a team's installation, replacing an earlier one.
	InstallationSave(ctx context.Context, in *Installation) error
	// InstallationGet returns a team's installation; an error matching
	// ErrNotInstalled when there is none.
	InstallationGet(ctx context.Context, teamID string) (*Installation, error)
	// InstallationDelete removes a team's installation (no error if none).
	InstallationDelete(ctx context.Context, teamID string) error
}

// WorkspaceBinder binds a Slack team to a Switchboard workspace when the app
// is installed there (installer is the Slack user who installed it).
// Optional.
type WorkspaceBinder interface {
	BindWorkspace(ctx context.Context, platform, externalID, name, installer string) error
}

type workspace struct {
	team string
	api  *slack.Client
	me   self
}

// teams caches the workspaces of installed teams by team id.
type teams struct {
	mu   sync.Mutex
	byID map[string]*workspace
	// channels remembers which team a channel is in, for calls that name
	// only a message (Update).
	channels map[string]string
}

func (a *Adapter) newClient(token string) *slack.Client {
	opts := []slack.Option{
		slack.OptionAPIURL(a.opts.APIURL),
		slack.OptionHTTPClient(a.opts.HTTPClient),
		slack.OptionLog(slogOutput{a.log}),
	}
	if a.opts.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(a.opts.AppToken))
	}
	return slack.New(token, opts...)
}

// single is the single-token workspace, nil without SLACK_BOT_TOKEN.
func (a *Adapter) single() *workspace {
	if a.api == nil {
		return nil
	}
	me := a.me.Load()
	if me == nil {
		return nil
	}
	return &workspace{team: me.TeamID, api: a.api, me: *me}
}

// workspaceFor is the workspace of team: its installation's when it has
// one, else the single-token one when the team is that token's (or not
// known, or no installations are kept: the single-token mode as it always
// was). ErrNotInstalled otherwise.
func (a *Adapter) workspaceFor(ctx context.Context, team string) (*workspace, error) {
	single := a.single()
	if a.opts.Installations == nil || team == "" || (single != nil && single.team == team) {
		if single == nil {
			return nil, fmt.Errorf("slack team %q: %w", team, ErrNotInstalled)
		}
		return single, nil
	}
	a.teams.mu.Lock()
	w, ok := a.teams.byID[team]
	a.teams.mu.Unlock()
	if ok {
		return w, nil
	}
	in, err := a.opts.Installations.InstallationGet(ctx, team)
	if err != nil {
		if errors.Is(err, ErrNotInstalled) && single != nil && single.team == "" {
			return single, nil
		}
		return nil, fmt.Errorf("slack team %s: %w", team, err)
	}
	return a.remember(ctx, in)
}

// remember makes the workspace of an installation, learning the bot's ids
// with auth.test, and caches it.
func (a *Adapter) remember(ctx context.Context, in *Installation) (*workspace, error) {
	w := &workspace{team: in.TeamID, api: a.newClient(in.BotToken), me: self{UserID: in.BotUserID, TeamID: in.TeamID}}
	var auth *slack.AuthTestResponse
	err := a.retry(ctx, "auth.test", func(ctx context.Context) error {
		var err error
		auth, err = w.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		if gone(err) {
			a.forget(ctx, in.TeamID, "the token is refused: "+err.Error())
			return nil, fmt.Errorf("slack team %s: %w", in.TeamID, ErrNotInstalled)
		}
		return nil, fmt.Errorf("checking the bot token of slack team %s (auth.test): %w", in.TeamID, err)
	}
	w.me = self{UserID: auth.UserID, BotID: auth.BotID, TeamID: in.TeamID}
	a.teams.mu.Lock()
	a.teams.byID[in.TeamID] = w
	a.teams.mu.Unlock()
	return w, nil
}

// forget drops a team's installation: the app was uninstalled there or its
// tokens revoked. Delivery there fails from now on with ErrNotInstalled.
func (a *Adapter) forget(ctx context.Context, team, why string) {
	a.teams.mu.Lock()
	delete(a.teams.byID, team)
	a.teams.mu.Unlock()
	if a.opts.Installations == nil {
		a.log.WarnContext(ctx, "slack app removed from the single-token team; delivery there fails until SLACK_BOT_TOKEN is replaced", "team_id", team, "reason", why)
		return
	}
	if err := a.opts.Installations.InstallationDelete(ctx, team); err != nil {
		a.log.ErrorContext(ctx, "removing a slack installation", "team_id", team, "err", err)
		return
	}
	a.log.InfoContext(ctx, "slack installation removed", "team_id", team, "reason", why)
}

// gone reports whether Slack refused a token for good.
func gone(err error) bool {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "token_revoked", "account_inactive", "invalid_auth", "team_disabled", "app_uninstalled":
			return true
		}
	}
	return false
}

// noteChannel remembers that channel is in team.
func (a *Adapter) noteChannel(team, channel string) {
	if team == "" || channel == "" {
		return
	}
	a.teams.mu.Lock()
	defer a.teams.mu.Unlock()
	if len(a.teams.channels) > 65536 {
		clear(a.teams.channels)
	}
	a.teams.channels[channel] = team
}

func (a *Adapter) teamOfChannel(channel string) string {
	a.teams.mu.Lock()
	defer a.teams.mu.Unlock()
	return a.teams.channels[channel]
}

// target resolves a target to its workspace and channel.
func (a *Adapter) target(ctx context.Context, to bots.Target) (*workspace, string, error) {
	w, err := a.workspaceFor(ctx, to.Workspace)
	if err != nil {
		return nil, "", err
	}
	channel, err := a.channelFor(ctx, w, to)
	if err != nil {
		return nil, "", err
	}
	a.noteChannel(w.team, channel)
	return w, channel, nil
}
