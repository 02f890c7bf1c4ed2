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
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func (q *queries) SlackInstallationSave(ctx context.Context, p *store.SlackInstallationSaveParams) (*store.SlackInstallation, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.SlackInstallation, error) {
		arg := dbsqlc.SlackInstallationSaveParams{
			TeamID: p.TeamID, TeamName: p.TeamName, BotUserID: p.BotUserID, AppID: p.AppID, Scope: p.Scope,
			BotToken: p.BotToken, InstalledBy: p.InstalledBy, Now: micros(p.Now),
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

func (q *queries) SlackInstallationList(ctx context.Context, p *store.SlackInstallationListParams) ([]*store.SlackInstallation, error) {
	rs, err := q.read().SlackInstallationList(ctx, dbsqlc.SlackInstallationListParams{AfterTeamID: p.AfterTeamID, MaxRows: int64(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing slack installations")
	}
	var out []*store.SlackInstallation
	for _, r := range rs {
		out = append(out, slackInstallation(r))
	}
	return out, nil
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
		return t.tx.SlackInstallationReseal(ctx, dbsqlc.SlackInstallationResealParams{BotToken: p.BotToken, Now: micros(p.Now), TeamID: p.TeamID, Expect: p.Expect})
	})
	if err != nil {
		return nil, wrap(err, "resealing the slack token of %s", p.TeamID)
	}
	return slackInstallation(r), nil
}
