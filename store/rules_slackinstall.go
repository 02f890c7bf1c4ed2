package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// sealedPrefix is how a value sealed by package secret starts. The store
// cannot open it (it imports nothing of ours) but refuses anything else, so a
// clear-text token never reaches a table.
const sealedPrefix = "v1:"

func checkSealed(field, v string) error {
	if parts := strings.SplitN(v, ":", 3); !strings.HasPrefix(v, sealedPrefix) || len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return invalidf("%s is not a sealed secret (seal it with package secret; clear text is never stored)", field)
	}
	return nil
}

func (q checked) SlackInstallationSave(ctx context.Context, p *SlackInstallationSaveParams) (*SlackInstallation, error) {
	if p == nil || p.TeamID == "" {
		return nil, fmt.Errorf("saving a slack installation: %w", invalidf("empty TeamID"))
	}
	if p.BotUserID == "" {
		return nil, fmt.Errorf("saving the slack installation of %s: %w", p.TeamID, invalidf("empty BotUserID"))
	}
	if err := checkSealed("BotToken", p.BotToken); err != nil {
		return nil, fmt.Errorf("saving the slack installation of %s: %w", p.TeamID, err)
	}
	if p.RefreshToken != "" {
		if err := checkSealed("RefreshToken", p.RefreshToken); err != nil {
			return nil, fmt.Errorf("saving the slack installation of %s: %w", p.TeamID, err)
		}
		if p.TokenExpiresAt == nil {
			return nil, fmt.Errorf("saving the slack installation of %s: %w", p.TeamID, invalidf("a RefreshToken needs TokenExpiresAt"))
		}
	}
	if p.EnterpriseInstall && p.EnterpriseID != p.TeamID {
		return nil, fmt.Errorf("saving the slack installation of %s: %w", p.TeamID, invalidf("an organisation-wide install is keyed by its EnterpriseID (%q)", p.EnterpriseID))
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.SlackInstallationSave(ctx, &c)
}

func (q checked) SlackInstallationGet(ctx context.Context, teamID string) (*SlackInstallation, error) {
	if teamID == "" {
		return nil, fmt.Errorf("reading a slack installation: %w", invalidf("empty team id"))
	}
	return q.Queries.SlackInstallationGet(ctx, teamID)
}

func (q checked) SlackInstallationList(ctx context.Context, p *SlackInstallationListParams) ([]*SlackInstallation, error) {
	var c SlackInstallationListParams
	if p != nil {
		c = *p
	}
	if c.Limit < 0 {
		return nil, fmt.Errorf("listing slack installations: %w", invalidf("negative Limit"))
	}
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	return q.Queries.SlackInstallationList(ctx, &c)
}

func (q checked) SlackInstallationDelete(ctx context.Context, teamID string) error {
	if teamID == "" {
		return fmt.Errorf("removing a slack installation: %w", invalidf("empty team id"))
	}
	return q.Queries.SlackInstallationDelete(ctx, teamID)
}

func (q checked) SlackInstallationReseal(ctx context.Context, p *SlackInstallationResealParams) (*SlackInstallation, error) {
	if p == nil || p.TeamID == "" {
		return nil, fmt.Errorf("resealing a slack token: %w", invalidf("empty TeamID"))
	}
	for field, v := range map[string]string{"Expect": p.Expect, "BotToken": p.BotToken} {
		if err := checkSealed(field, v); err != nil {
			return nil, fmt.Errorf("resealing the slack token of %s: %w", p.TeamID, err)
		}
	}
	if p.RefreshToken != "" {
		if err := checkSealed("RefreshToken", p.RefreshToken); err != nil {
			return nil, fmt.Errorf("resealing the slack token of %s: %w", p.TeamID, err)
		}
	}
	c := *p
	c.Now = q.at(c.Now)
	out, err := q.Queries.SlackInstallationReseal(ctx, &c)
	if errors.Is(err, ErrNotFound) {
		// No row back: the team is gone (ErrNotFound), or its token changed
		// since the caller read it.
		if _, gerr := q.Queries.SlackInstallationGet(ctx, p.TeamID); gerr == nil {
			return nil, fmt.Errorf("resealing the slack token of %s: %w: the token changed since it was read", p.TeamID, ErrConflict)
		}
	}
	return out, err
}

func (q checked) SlackInstallationFind(ctx context.Context, p *SlackInstallationFindParams) (*SlackInstallation, error) {
	if p == nil || (p.TeamID == "" && p.EnterpriseID == "") {
		return nil, fmt.Errorf("finding a slack installation: %w", invalidf("empty TeamID and EnterpriseID"))
	}
	return q.Queries.SlackInstallationFind(ctx, p)
}

func (q checked) SlackInstallationExpiring(ctx context.Context, p *SlackInstallationExpiringParams) ([]*SlackInstallation, error) {
	if p == nil || p.Before.IsZero() {
		return nil, fmt.Errorf("listing expiring slack tokens: %w", invalidf("empty Before"))
	}
	if p.Limit < 0 {
		return nil, fmt.Errorf("listing expiring slack tokens: %w", invalidf("negative Limit"))
	}
	c := *p
	c.Now = q.at(c.Now)
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	return q.Queries.SlackInstallationExpiring(ctx, &c)
}

// refreshOutcome turns a write that matched no row into ErrConflict when
// the team's row is there (it changed since it was read), ErrNotFound when
// it is gone.
func (q checked) refreshOutcome(ctx context.Context, teamID, doing string, out *SlackInstallation, err error) (*SlackInstallation, error) {
	if errors.Is(err, ErrNotFound) {
		if _, gerr := q.Queries.SlackInstallationGet(ctx, teamID); gerr == nil {
			return nil, fmt.Errorf("%s of slack team %s: %w: the row changed since it was read", doing, teamID, ErrConflict)
		}
	}
	return out, err
}

func (q checked) SlackInstallationClaimRefresh(ctx context.Context, p *SlackInstallationClaimRefreshParams) (*SlackInstallation, error) {
	if p == nil || p.TeamID == "" || p.Holder == "" {
		return nil, fmt.Errorf("claiming a slack token renewal: %w", invalidf("empty TeamID or Holder"))
	}
	if err := checkSealed("Expect", p.Expect); err != nil {
		return nil, fmt.Errorf("claiming the token renewal of %s: %w", p.TeamID, err)
	}
	c := *p
	c.Now = q.at(c.Now)
	if !c.Until.After(c.Now) {
		return nil, fmt.Errorf("claiming the token renewal of %s: %w", p.TeamID, invalidf("Until must be after Now"))
	}
	out, err := q.Queries.SlackInstallationClaimRefresh(ctx, &c)
	return q.refreshOutcome(ctx, p.TeamID, "claiming the token renewal", out, err)
}

func (q checked) SlackInstallationRefreshed(ctx context.Context, p *SlackInstallationRefreshedParams) (*SlackInstallation, error) {
	if p == nil || p.TeamID == "" {
		return nil, fmt.Errorf("storing a renewed slack token: %w", invalidf("empty TeamID"))
	}
	for field, v := range map[string]string{"Expect": p.Expect, "BotToken": p.BotToken, "RefreshToken": p.RefreshToken} {
		if err := checkSealed(field, v); err != nil {
			return nil, fmt.Errorf("storing the renewed token of %s: %w", p.TeamID, err)
		}
	}
	if p.TokenExpiresAt.IsZero() {
		return nil, fmt.Errorf("storing the renewed token of %s: %w", p.TeamID, invalidf("empty TokenExpiresAt"))
	}
	c := *p
	c.Now = q.at(c.Now)
	out, err := q.Queries.SlackInstallationRefreshed(ctx, &c)
	return q.refreshOutcome(ctx, p.TeamID, "storing the renewed token", out, err)
}

func (q checked) SlackInstallationRefreshFailed(ctx context.Context, p *SlackInstallationRefreshFailedParams) (*SlackInstallation, error) {
	if p == nil || p.TeamID == "" || p.Holder == "" {
		return nil, fmt.Errorf("recording a failed slack token renewal: %w", invalidf("empty TeamID or Holder"))
	}
	if p.Error == "" {
		return nil, fmt.Errorf("recording the failed token renewal of %s: %w", p.TeamID, invalidf("empty Error"))
	}
	c := *p
	c.Now = q.at(c.Now)
	out, err := q.Queries.SlackInstallationRefreshFailed(ctx, &c)
	return q.refreshOutcome(ctx, p.TeamID, "recording the failed token renewal", out, err)
}

func (q checked) SlackInstallationRefreshStopped(ctx context.Context, limit int) ([]*SlackInstallation, error) {
	if limit < 0 {
		return nil, fmt.Errorf("listing stopped slack token renewals: %w", invalidf("negative limit"))
	}
	return q.Queries.SlackInstallationRefreshStopped(ctx, limitOr(limit, DefaultListLimit))
}

func (q checked) SlackInstallationTouch(ctx context.Context, p *SlackInstallationTouchParams) error {
	if p == nil || p.Installation == "" {
		return fmt.Errorf("recording a slack event: %w", invalidf("empty Installation"))
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.SlackInstallationTouch(ctx, &c)
}
