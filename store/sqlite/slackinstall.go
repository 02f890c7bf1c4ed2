package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func slackInstallation(r dbsqlc.SlackInstallation) *store.SlackInstallation {
	return &store.SlackInstallation{
		TeamID: r.TeamID, TeamName: r.TeamName, BotUserID: r.BotUserID, AppID: r.AppID, Scope: r.Scope,
		BotToken: r.BotToken, InstalledBy: r.InstalledBy,
		EnterpriseID: r.EnterpriseID, EnterpriseName: r.EnterpriseName, EnterpriseInstall: r.EnterpriseInstall != 0,
		RefreshToken: r.RefreshToken, TokenExpiresAt: nullMicros(r.TokenExpiresAt),
		RefreshHolder: r.RefreshHolder, RefreshUntil: nullMicros(r.RefreshUntil), RefreshError: r.RefreshError,
		RefreshFailedAt: nullMicros(r.RefreshFailedAt), RefreshStopped: r.RefreshStopped != 0, LastEventAt: nullMicros(r.LastEventAt),
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func slackInstallations(rs []dbsqlc.SlackInstallation) []*store.SlackInstallation {
	out := make([]*store.SlackInstallation, len(rs))
	for i := range rs {
		out[i] = slackInstallation(rs[i])
	}
	return out
}

func (q *queries) SlackInstallationSave(ctx context.Context, p *store.SlackInstallationSaveParams) (*store.SlackInstallation, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SlackInstallation, error) {
		arg := dbsqlc.SlackInstallationSaveParams{
			TeamID: p.TeamID, TeamName: p.TeamName, BotUserID: p.BotUserID, AppID: p.AppID, Scope: p.Scope,
			BotToken: p.BotToken, InstalledBy: p.InstalledBy, EnterpriseID: p.EnterpriseID, EnterpriseName: p.EnterpriseName,
			EnterpriseInstall: boolInt(p.EnterpriseInstall), RefreshToken: p.RefreshToken, TokenExpiresAt: microsArg(p.TokenExpiresAt),
			Now: micros(p.Now),
		}
		return t.tx.SlackInstallationSave(ctx, arg)
	})
	if err != nil {
		return nil, wrap(err, "saving the slack installation of %s", p.TeamID)
	}
	return slackInstallation(r), nil
}

func (q *queries) SlackInstallationGet(ctx context.Context, teamID string) (*store.SlackInstallation, error) {
	r, err := q.read().SlackInstallationGet(ctx, teamID)
	if err != nil {
		return nil, wrap(err, "reading the slack installation of %s", teamID)
	}
	return slackInstallation(r), nil
}

func (q *queries) SlackInstallationFind(ctx context.Context, p *store.SlackInstallationFindParams) (*store.SlackInstallation, error) {
	r, err := q.read().SlackInstallationFind(ctx, dbsqlc.SlackInstallationFindParams{TeamID: p.TeamID, EnterpriseID: p.EnterpriseID})
	if err != nil {
		return nil, wrap(err, "finding the slack installation of team %q (enterprise %q)", p.TeamID, p.EnterpriseID)
	}
	return slackInstallation(r), nil
}

func (q *queries) SlackInstallationList(ctx context.Context, p *store.SlackInstallationListParams) ([]*store.SlackInstallation, error) {
	rs, err := q.read().SlackInstallationList(ctx, dbsqlc.SlackInstallationListParams{AfterTeamID: p.AfterTeamID, MaxRows: int64(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing slack installations")
	}
	return slackInstallations(rs), nil
}

func (q *queries) SlackInstallationDelete(ctx context.Context, teamID string) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		n, err := t.tx.SlackInstallationDelete(ctx, teamID)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return struct{}{}, err
	})
	if err != nil {
		return wrap(err, "removing the slack installation of %s", teamID)
	}
	return nil
}

func (q *queries) SlackInstallationReseal(ctx context.Context, p *store.SlackInstallationResealParams) (*store.SlackInstallation, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SlackInstallation, error) {
		return t.tx.SlackInstallationReseal(ctx, dbsqlc.SlackInstallationResealParams{
			BotToken: p.BotToken, RefreshToken: p.RefreshToken, Now: micros(p.Now), TeamID: p.TeamID, Expect: p.Expect,
		})
	})
	if err != nil {
		return nil, wrap(err, "resealing the slack token of %s", p.TeamID)
	}
	return slackInstallation(r), nil
}

func (q *queries) SlackInstallationExpiring(ctx context.Context, p *store.SlackInstallationExpiringParams) ([]*store.SlackInstallation, error) {
	rs, err := q.read().SlackInstallationExpiring(ctx, dbsqlc.SlackInstallationExpiringParams{Before: micros(p.Before), Now: micros(p.Now), MaxRows: int64(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing expiring slack tokens")
	}
	return slackInstallations(rs), nil
}

func (q *queries) SlackInstallationClaimRefresh(ctx context.Context, p *store.SlackInstallationClaimRefreshParams) (*store.SlackInstallation, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SlackInstallation, error) {
		return t.tx.SlackInstallationClaimRefresh(ctx, dbsqlc.SlackInstallationClaimRefreshParams{
			Holder: p.Holder, Until: micros(p.Until), TeamID: p.TeamID, Expect: p.Expect, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "claiming the token renewal of %s", p.TeamID)
	}
	return slackInstallation(r), nil
}

func (q *queries) SlackInstallationRefreshed(ctx context.Context, p *store.SlackInstallationRefreshedParams) (*store.SlackInstallation, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SlackInstallation, error) {
		return t.tx.SlackInstallationRefreshed(ctx, dbsqlc.SlackInstallationRefreshedParams{
			BotToken: p.BotToken, RefreshToken: p.RefreshToken, TokenExpiresAt: micros(p.TokenExpiresAt), Now: micros(p.Now),
			TeamID: p.TeamID, Expect: p.Expect,
		})
	})
	if err != nil {
		return nil, wrap(err, "storing the renewed token of %s", p.TeamID)
	}
	return slackInstallation(r), nil
}

func (q *queries) SlackInstallationRefreshFailed(ctx context.Context, p *store.SlackInstallationRefreshFailedParams) (*store.SlackInstallation, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SlackInstallation, error) {
		return t.tx.SlackInstallationRefreshFailed(ctx, dbsqlc.SlackInstallationRefreshFailedParams{
			RetryAt: microsArg(p.RetryAt), Error: p.Error, Now: micros(p.Now), Stop: boolInt(p.Stop), TeamID: p.TeamID, Holder: p.Holder,
		})
	})
	if err != nil {
		return nil, wrap(err, "recording the failed token renewal of %s", p.TeamID)
	}
	return slackInstallation(r), nil
}

func (q *queries) SlackInstallationRefreshStopped(ctx context.Context, limit int) ([]*store.SlackInstallation, error) {
	rs, err := q.read().SlackInstallationRefreshStopped(ctx, int64(limit))
	if err != nil {
		return nil, wrap(err, "listing stopped slack token renewals")
	}
	return slackInstallations(rs), nil
}

func (q *queries) SlackInstallationTouch(ctx context.Context, p *store.SlackInstallationTouchParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		if _, err := t.tx.SlackInstallationTouch(ctx, dbsqlc.SlackInstallationTouchParams{Now: micros(p.Now), TeamID: p.Installation}); err != nil {
			return struct{}{}, err
		}
		if p.TeamID == "" || p.TeamID == p.Installation {
			return struct{}{}, nil
		}
		return struct{}{}, t.tx.SlackInstallationTeamNote(ctx, dbsqlc.SlackInstallationTeamNoteParams{TeamID: p.TeamID, Now: micros(p.Now), Installation: p.Installation})
	})
	if err != nil {
		return wrap(err, "recording an event of slack installation %s", p.Installation)
	}
	return nil
}
