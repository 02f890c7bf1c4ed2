package slack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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

// Installation is the app installed in one team, or organisation-wide in
// an Enterprise Grid organisation, its tokens in clear.
type Installation struct {
	// TeamID is the team; for an organisation-wide install, the enterprise
	// id (E…): the key the installation is stored under.
	TeamID      string
	TeamName    string
	BotUserID   string
	AppID       string
	Scope       string
	InstalledBy string
	BotToken    string
	// EnterpriseID and EnterpriseName are the organisation ("" outside
	// Enterprise Grid); EnterpriseInstall marks an organisation-wide
	// install, which serves every team of the organisation.
	EnterpriseID      string
	EnterpriseName    string
	EnterpriseInstall bool
	// RefreshToken buys the next bot token when the app has token rotation
	// on ("" otherwise); TokenExpiresAt is when BotToken expires (zero: it
	// does not).
	RefreshToken   string
	TokenExpiresAt time.Time
	// Rev is the stored row's version, opaque to the adapter: renewals
	// hand it back so that a row that changed meanwhile is not overwritten.
	Rev string
}

// Installations keeps the teams the app is installed in. The implementation
// stores the tokens sealed (internal/app); the adapter only sees them in
// clear.
type Installations interface {
	// InstallationSave stores a team's installation, replacing an earlier one.
	InstallationSave(ctx context.Context, in *Installation) error
	// InstallationGet returns the installation that serves team: the
	// team's own, else the organisation-wide install of enterprise ("" when
	// not known) or the one the team was seen under; an error matching
	// ErrNotInstalled when there is none.
	InstallationGet(ctx context.Context, team, enterprise string) (*Installation, error)
	// InstallationDelete removes an installation by its TeamID (no error if
	// none).
	InstallationDelete(ctx context.Context, key string) error
	// InstallationSeen records that an event of team arrived, served by
	// the installation key.
	InstallationSeen(ctx context.Context, key, team string) error
	// InstallationsExpiring lists the installations whose rotating token
	// expires before before and that no one renews now.
	InstallationsExpiring(ctx context.Context, before time.Time) ([]*Installation, error)
	// InstallationClaimRenewal claims the renewal of in's token until
	// until: false when another instance has it or in changed meanwhile.
	// Of several instances claiming one token, exactly one gets it.
	InstallationClaimRenewal(ctx context.Context, in *Installation, until time.Time) (bool, error)
	// InstallationRenewed stores in's renewed tokens (from was the
	// installation as claimed) and ends the claim.
	InstallationRenewed(ctx context.Context, from, in *Installation) error
	// InstallationRenewFailed records a failed renewal of the claimed
	// from: stop when Slack refused it for good (not tried again until a
	// reinstall), else tried again from retryAt.
	InstallationRenewFailed(ctx context.Context, from *Installation, why string, stop bool, retryAt time.Time) error
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
	// key is the installation serving the team ("" in the single-token
	// mode), token the bot token api holds, and expires when it expires
	// (zero: never). A token within the renewal margin of its expiry is
	// read again from the store at each use, so that a token another
	// instance renewed is picked up.
	key     string
	token   string
	expires time.Time
	// orgWide: key is an organisation-wide install, which installer made.
	orgWide   bool
	installer string
}

// teams caches the workspaces of installed teams by team id.
type teams struct {
	mu   sync.Mutex
	byID map[string]*workspace
	// channels remembers which team a channel is in, for calls that name
	// only a message (Update).
	channels map[string]string
	// seen is when each team's last event was recorded (Adapter.seen).
	seen map[string]time.Time
	// bound are the teams of organisation-wide installs this process
	// bound to a workspace (Adapter.bindOrgTeam).
	bound map[string]bool
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
	return a.workspaceOf(ctx, team, "")
}

// workspaceOf is workspaceFor with the enterprise an event named, which
// finds an organisation-wide install for a team not seen before.
func (a *Adapter) workspaceOf(ctx context.Context, team, enterprise string) (*workspace, error) {
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
	if ok && !a.renewing(w) {
		return w, nil
	}
	in, err := a.opts.Installations.InstallationGet(ctx, team, enterprise)
	if err != nil {
		if errors.Is(err, ErrNotInstalled) && single != nil && single.team == "" {
			return single, nil
		}
		if ok && !errors.Is(err, ErrNotInstalled) {
			// The store is unreachable: the cached token is still good
			// until it expires.
			a.log.WarnContext(ctx, "reading a slack installation again; keeping the cached token", "team_id", team, "err", err)
			return w, nil
		}
		return nil, fmt.Errorf("slack team %s: %w", team, err)
	}
	if ok && in.BotToken == w.token {
		return w, nil
	}
	if ok {
		return a.swapToken(team, w, in), nil
	}
	return a.remember(ctx, team, in)
}

// renewing reports whether w's token is within the renewal margin of its
// expiry, so that it must be read again.
func (a *Adapter) renewing(w *workspace) bool {
	return !w.expires.IsZero() && !a.opts.Now().Before(w.expires.Add(-a.refreshMargin()))
}

// swapToken replaces the token of the cached workspace of team with in's
// (a renewal): the bot is the same, so no auth.test.
func (a *Adapter) swapToken(team string, old *workspace, in *Installation) *workspace {
	w := &workspace{team: team, api: a.newClient(in.BotToken), me: old.me, key: in.TeamID, token: in.BotToken, expires: in.TokenExpiresAt,
		orgWide: in.EnterpriseInstall, installer: in.InstalledBy}
	a.teams.mu.Lock()
	a.teams.byID[team] = w
	a.teams.mu.Unlock()
	return w
}

// remember makes the workspace of team from the installation serving it,
// learning the bot's ids with auth.test, and caches it.
func (a *Adapter) remember(ctx context.Context, team string, in *Installation) (*workspace, error) {
	for attempt := 0; ; attempt++ {
		w := &workspace{team: team, api: a.newClient(in.BotToken), me: self{UserID: in.BotUserID, TeamID: team},
			key: in.TeamID, token: in.BotToken, expires: in.TokenExpiresAt, orgWide: in.EnterpriseInstall, installer: in.InstalledBy}
		var auth *slack.AuthTestResponse
		err := a.retry(ctx, "auth.test", func(ctx context.Context) error {
			var err error
			auth, err = w.api.AuthTestContext(ctx)
			return err
		})
		if err != nil {
			if gone(err) || expired(err) {
				// A token another instance renewed meanwhile is no reason
				// to drop the install: read it again, once.
				if again, gerr := a.opts.Installations.InstallationGet(ctx, team, in.EnterpriseID); attempt == 0 && gerr == nil && again.BotToken != in.BotToken {
					in = again
					continue
				}
			}
			if gone(err) {
				a.forget(ctx, team, in.TeamID, "the token is refused: "+err.Error())
				return nil, fmt.Errorf("slack team %s: %w", team, ErrNotInstalled)
			}
			return nil, fmt.Errorf("checking the bot token of slack team %s (auth.test): %w", team, err)
		}
		w.me = self{UserID: auth.UserID, BotID: auth.BotID, TeamID: team}
		a.teams.mu.Lock()
		a.teams.byID[team] = w
		a.teams.mu.Unlock()
		return w, nil
	}
}

// renewed puts the renewed token of the installation key in every cached
// workspace it serves.
func (a *Adapter) renewed(in *Installation) {
	a.teams.mu.Lock()
	var teams []string
	for team, w := range a.teams.byID {
		if w.key == in.TeamID {
			teams = append(teams, team)
		}
	}
	old := make([]*workspace, len(teams))
	for i, team := range teams {
		old[i] = a.teams.byID[team]
	}
	a.teams.mu.Unlock()
	for i, team := range teams {
		a.swapToken(team, old[i], in)
	}
}

// forget drops the installation key that served team: the app was
// uninstalled there or its tokens revoked. Delivery there fails from now
// on with ErrNotInstalled.
func (a *Adapter) forget(ctx context.Context, team, key, why string) {
	a.teams.mu.Lock()
	delete(a.teams.byID, team)
	for t, w := range a.teams.byID {
		if key != "" && w.key == key {
			delete(a.teams.byID, t)
		}
	}
	a.teams.mu.Unlock()
	if a.opts.Installations == nil {
		a.log.WarnContext(ctx, "slack app removed from the single-token team; delivery there fails until SLACK_BOT_TOKEN is replaced", "team_id", team, "reason", why)
		return
	}
	if key == "" {
		return
	}
	if err := a.opts.Installations.InstallationDelete(ctx, key); err != nil {
		a.log.ErrorContext(ctx, "removing a slack installation", "team_id", team, "installation", key, "err", err)
		return
	}
	a.log.InfoContext(ctx, "slack installation removed", "team_id", team, "installation", key, "reason", why)
}

// expired reports whether Slack refused a token because it expired (token
// rotation): renewable, not gone.
func expired(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && se.Err == "token_expired"
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
