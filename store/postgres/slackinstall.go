package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func slackInstallation(r dbsqlc.SlackInstallation) *store.SlackInstallation {
	return &store.SlackInstallation{
		TeamID: r.TeamID, TeamName: r.TeamName, BotUserID: r.BotUserID, AppID: r.AppID, Scope: r.Scope,
		BotToken: r.BotToken, InstalledBy: r.InstalledBy,
		EnterpriseID: r.EnterpriseID, EnterpriseName: r.EnterpriseName, EnterpriseInstall: r.EnterpriseInstall,
		RefreshToken: r.RefreshToken, TokenExpiresAt: r.TokenExpiresAt,
		RefreshHolder: r.RefreshHolder, RefreshUntil: r.RefreshUntil, RefreshError: r.RefreshError,
		RefreshFailedAt: r.RefreshFailedAt, RefreshStopped: r.RefreshStopped, LastEventAt: r.LastEventAt,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

func slackInstallations(rows []dbsqlc.SlackInstallation) []*store.SlackInstallation {
	out := make([]*store.SlackInstallation, len(rows))
	for i := range rows {
		out[i] = slackInstallation(rows[i])
	}
	return out
}

func (q *queries) SlackInstallationSave(ctx context.Context, p *store.SlackInstallationSaveParams) (*store.SlackInstallation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationSave, &dbsqlc.SlackInstallationSaveParams{
		TeamID: p.TeamID, TeamName: p.TeamName, BotUserID: p.BotUserID, AppID: p.AppID, Scope: p.Scope,
		BotToken: p.BotToken, InstalledBy: p.InstalledBy, EnterpriseID: p.EnterpriseID, EnterpriseName: p.EnterpriseName,
		EnterpriseInstall: p.EnterpriseInstall, RefreshToken: p.RefreshToken, TokenExpiresAt: tsPtr(p.TokenExpiresAt), Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "saving the slack installation of %s", p.TeamID)
	}
	return slackInstallation(row), nil
}

func (q *queries) SlackInstallationGet(ctx context.Context, teamID string) (*store.SlackInstallation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationGet, teamID)
	if err != nil {
		return nil, wrap(err, "reading the slack installation of %s", teamID)
	}
	return slackInstallation(row), nil
}

func (q *queries) SlackInstallationFind(ctx context.Context, p *store.SlackInstallationFindParams) (*store.SlackInstallation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationFind, &dbsqlc.SlackInstallationFindParams{TeamID: p.TeamID, EnterpriseID: p.EnterpriseID})
	if err != nil {
		return nil, wrap(err, "finding the slack installation of team %q (enterprise %q)", p.TeamID, p.EnterpriseID)
	}
	return slackInstallation(row), nil
}

func (q *queries) SlackInstallationList(ctx context.Context, p *store.SlackInstallationListParams) ([]*store.SlackInstallation, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationList, &dbsqlc.SlackInstallationListParams{
		AfterTeamID: p.AfterTeamID, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing slack installations")
	}
	return slackInstallations(rows), nil
}

func (q *queries) SlackInstallationDelete(ctx context.Context, teamID string) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationDelete, teamID)
	if err == nil && n == 0 {
		err = errNoRow
	}
	return wrap(err, "removing the slack installation of %s", teamID)
}

func (q *queries) SlackInstallationReseal(ctx context.Context, p *store.SlackInstallationResealParams) (*store.SlackInstallation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationReseal, &dbsqlc.SlackInstallationResealParams{
		BotToken: p.BotToken, RefreshToken: p.RefreshToken, Now: ts(p.Now), TeamID: p.TeamID, Expect: p.Expect,
	})
	if err != nil {
		return nil, wrap(err, "resealing the slack token of %s", p.TeamID)
	}
	return slackInstallation(row), nil
}

func (q *queries) SlackInstallationExpiring(ctx context.Context, p *store.SlackInstallationExpiringParams) ([]*store.SlackInstallation, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationExpiring, &dbsqlc.SlackInstallationExpiringParams{
		Before: ts(p.Before), Now: ts(p.Now), MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing expiring slack tokens")
	}
	return slackInstallations(rows), nil
}

func (q *queries) SlackInstallationClaimRefresh(ctx context.Context, p *store.SlackInstallationClaimRefreshParams) (*store.SlackInstallation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationClaimRefresh, &dbsqlc.SlackInstallationClaimRefreshParams{
		Holder: p.Holder, Until: ts(p.Until), TeamID: p.TeamID, Expect: p.Expect, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "claiming the token renewal of %s", p.TeamID)
	}
	return slackInstallation(row), nil
}

func (q *queries) SlackInstallationRefreshed(ctx context.Context, p *store.SlackInstallationRefreshedParams) (*store.SlackInstallation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationRefreshed, &dbsqlc.SlackInstallationRefreshedParams{
		BotToken: p.BotToken, RefreshToken: p.RefreshToken, TokenExpiresAt: ts(p.TokenExpiresAt), Now: ts(p.Now), TeamID: p.TeamID, Expect: p.Expect,
	})
	if err != nil {
		return nil, wrap(err, "storing the renewed token of %s", p.TeamID)
	}
	return slackInstallation(row), nil
}

func (q *queries) SlackInstallationRefreshFailed(ctx context.Context, p *store.SlackInstallationRefreshFailedParams) (*store.SlackInstallation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationRefreshFailed, &dbsqlc.SlackInstallationRefreshFailedParams{
		RetryAt: tsPtr(p.RetryAt), Error: p.Error, Now: ts(p.Now), Stop: p.Stop, TeamID: p.TeamID, Holder: p.Holder,
	})
	if err != nil {
		return nil, wrap(err, "recording the failed token renewal of %s", p.TeamID)
	}
	return slackInstallation(row), nil
}

func (q *queries) SlackInstallationRefreshStopped(ctx context.Context, limit int) ([]*store.SlackInstallation, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationRefreshStopped, int32(limit))
	if err != nil {
		return nil, wrap(err, "listing stopped slack token renewals")
	}
	return slackInstallations(rows), nil
}

// SlackInstallationTouch runs two statements, each its own transaction:
// both converge when repeated, and neither needs the other.
func (q *queries) SlackInstallationTouch(ctx context.Context, p *store.SlackInstallationTouchParams) error {
	if _, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationTouch, &dbsqlc.SlackInstallationTouchParams{Now: ts(p.Now), TeamID: p.Installation}); err != nil {
		return wrap(err, "recording an event of slack installation %s", p.Installation)
	}
	if p.TeamID == "" || p.TeamID == p.Installation {
		return nil
	}
	err := exec(ctx, q, (*dbsqlc.Queries).SlackInstallationTeamNote, &dbsqlc.SlackInstallationTeamNoteParams{TeamID: p.TeamID, Now: ts(p.Now), Installation: p.Installation})
	return wrap(err, "noting team %s under slack installation %s", p.TeamID, p.Installation)
}
