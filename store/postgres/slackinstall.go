package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) SlackInstallationSave(ctx context.Context, p *store.SlackInstallationSaveParams) (*store.SlackInstallation, error) {
	arg := dbsqlc.SlackInstallationSaveParams(*p)
	arg.Now = ts(p.Now)
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationSave, &arg)
	if err != nil {
		return nil, wrap(err, "saving the slack installation of %s", p.TeamID)
	}
	return (*store.SlackInstallation)(&row), nil
}

func (q *queries) SlackInstallationGet(ctx context.Context, teamID string) (*store.SlackInstallation, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationGet, teamID)
	if err != nil {
		return nil, wrap(err, "reading the slack installation of %s", teamID)
	}
	return (*store.SlackInstallation)(&row), nil
}

func (q *queries) SlackInstallationList(ctx context.Context, p *store.SlackInstallationListParams) ([]*store.SlackInstallation, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SlackInstallationList, &dbsqlc.SlackInstallationListParams{
		AfterTeamID: p.AfterTeamID, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing slack installations")
	}
	out := make([]*store.SlackInstallation, len(rows))
	for i := range rows {
		out[i] = (*store.SlackInstallation)(&rows[i])
	}
	return out, nil
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
		BotToken: p.BotToken, Now: ts(p.Now), TeamID: p.TeamID, Expect: p.Expect,
	})
	if err != nil {
		return nil, wrap(err, "resealing the slack token of %s", p.TeamID)
	}
	return (*store.SlackInstallation)(&row), nil
}
