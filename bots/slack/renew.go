package slack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slack-go/slack"
)

// Token rotation. With token rotation on in the Slack app, a bot token
// expires 12 hours after it is issued, and the refresh token that came
// with it buys the next pair through oauth.v2.access
// (grant_type=refresh_token), once: Slack revokes a refresh token when it
// is used. So every instance looks, every refreshCheck, for tokens that
// expire within the margin (OAuthOptions.RefreshMargin); each claims the
// renewal in the store first, and only the one whose claim succeeds calls
// Slack, so a token is renewed by exactly one instance. The others read
// the renewed token from the store at their next use of it (a cached token
// within the margin of its expiry is read again at each use).
//
// What happens on failure: Slack unreachable, or any answer other than a
// refusal of the refresh token, is logged and tried again after a pause
// (refreshRetry), while the old token still works. A refresh token Slack
// refuses for good (invalid_refresh_token, the app uninstalled) stops the
// renewal of that install: logged, shown by doctor and /readyz, and not
// tried again until the app is reinstalled. An instance that dies after
// Slack renewed the token and before it was stored loses the new pair;
// the claim expires, the next instance's refresh is refused
// invalid_refresh_token, and the install is reported as above.

// DefaultRefreshMargin is how long before its expiry a rotating token is
// renewed: a sixth of Slack's 12-hour lifetime, so a renewal that fails has
// hours of retries before the token runs out.
const DefaultRefreshMargin = 2 * time.Hour

func (a *Adapter) refreshMargin() time.Duration {
	if o := a.opts.OAuth; o != nil && o.RefreshMargin > 0 {
		return o.RefreshMargin
	}
	return DefaultRefreshMargin
}

// refreshCheck is how often an instance looks for tokens due: an eighth of
// the margin, at most a minute.
func (a *Adapter) refreshCheck() time.Duration {
	return min(max(a.refreshMargin()/8, 50*time.Millisecond), time.Minute)
}

// refreshClaim is how long a claimed renewal keeps the other instances
// out: longer than a refresh call takes, shorter than the margin.
func (a *Adapter) refreshClaim() time.Duration {
	return min(time.Minute, a.refreshMargin()/2)
}

// refreshRetry is the pause after a renewal that failed but may succeed
// later.
func (a *Adapter) refreshRetry() time.Duration {
	return min(5*time.Minute, a.refreshMargin()/4)
}

// permanentRefusal reports whether Slack refused a refresh for good.
func permanentRefusal(err error) bool {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "invalid_refresh_token", "token_revoked", "app_uninstalled", "account_inactive", "team_disabled":
			return true
		}
	}
	return false
}

// renewLoop renews the tokens that come due until ctx ends.
func (a *Adapter) renewLoop(ctx context.Context) {
	for {
		a.renewDue(ctx)
		if err := sleepTimer(ctx, a.refreshCheck()); err != nil {
			return
		}
	}
}

// renewDue renews every token due now that no other instance renews.
func (a *Adapter) renewDue(ctx context.Context) {
	now := a.opts.Now()
	due, err := a.opts.Installations.InstallationsExpiring(ctx, now.Add(a.refreshMargin()))
	if err != nil {
		if ctx.Err() == nil {
			a.log.WarnContext(ctx, "listing slack tokens due for renewal", "err", err)
		}
		return
	}
	for _, in := range due {
		if ctx.Err() != nil {
			return
		}
		if err := a.renew(ctx, in); err != nil && ctx.Err() == nil {
			a.log.ErrorContext(ctx, "renewing a slack token", "installation", in.TeamID, "err", err)
		}
	}
}

// renew claims in's renewal and, when this instance got it, spends the
// refresh token for a new pair and stores it.
func (a *Adapter) renew(ctx context.Context, in *Installation) error {
	now := a.opts.Now()
	ok, err := a.opts.Installations.InstallationClaimRenewal(ctx, in, now.Add(a.refreshClaim()))
	if err != nil || !ok {
		return err // !ok: another instance renews it, or it changed
	}
	o := a.opts.OAuth
	resp, err := slack.RefreshOAuthV2TokenContext(ctx, a.opts.HTTPClient, o.ClientID, o.ClientSecret, in.RefreshToken, slack.OAuthOptionAPIURL(a.opts.APIURL))
	if err == nil && (resp.AccessToken == "" || resp.RefreshToken == "" || resp.ExpiresIn <= 0) {
		err = fmt.Errorf("slack answered the refresh without a token, a refresh token and expires_in (token_type %q)", resp.TokenType)
	}
	if err != nil {
		stop := permanentRefusal(err)
		why := fmt.Sprintf("oauth.v2.access (grant_type=refresh_token): %v", err)
		retryAt := a.opts.Now().Add(a.refreshRetry())
		if ferr := a.opts.Installations.InstallationRenewFailed(ctx, in, why, stop, retryAt); ferr != nil {
			a.log.ErrorContext(ctx, "recording a failed slack token renewal", "installation", in.TeamID, "err", ferr)
		}
		if stop {
			a.log.ErrorContext(ctx, "slack refused to renew the bot token for good; reinstall the app there (doctor and /readyz report it)",
				"installation", in.TeamID, "team", firstOf(in.TeamName, in.EnterpriseName), "expires_at", in.TokenExpiresAt, "err", err)
			return nil
		}
		a.log.WarnContext(ctx, "renewing a slack bot token failed; trying again later", "installation", in.TeamID, "retry_at", retryAt, "err", err)
		return nil
	}
	next := *in
	next.BotToken, next.RefreshToken = resp.AccessToken, resp.RefreshToken
	next.TokenExpiresAt = a.opts.Now().Add(time.Duration(resp.ExpiresIn) * time.Second)
	if resp.Scope != "" {
		next.Scope = resp.Scope
	}
	if err := a.opts.Installations.InstallationRenewed(ctx, in, &next); err != nil {
		return fmt.Errorf("storing the renewed token of %s: %w", in.TeamID, err)
	}
	a.renewed(&next)
	a.log.InfoContext(ctx, "slack bot token renewed", "installation", in.TeamID, "expires_at", next.TokenExpiresAt)
	return nil
}
