package postgres

import (
	"context"
	"encoding/json"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func skillFromRow(r *dbsqlc.Skill) (*store.Skill, error) {
	s := store.Skill{
		Layer: r.Layer, Scope: r.Scope, Name: r.Name, Description: r.Description,
		FrontMatter: r.FrontMatter, Instructions: r.Instructions, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	return &s, json.Unmarshal(r.Files, &s.Files)
}

func (q *queries) SkillSave(ctx context.Context, p *store.SkillSaveParams) (*store.Skill, error) {
	files, err := json.Marshal(p.Files)
	if err != nil {
		return nil, wrap(err, "encoding the files of skill %s", p.Name)
	}
	row, err := call(ctx, q, (*dbsqlc.Queries).SkillSave, &dbsqlc.SkillSaveParams{
		Layer: p.Layer, Scope: p.Scope, Name: p.Name, Description: p.Description,
		FrontMatter: p.FrontMatter, Instructions: p.Instructions, Files: string(files), Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "saving skill %s", p.Name)
	}
	return skillFromRow(&row)
}

func (q *queries) SkillGet(ctx context.Context, k store.SkillKey) (*store.Skill, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).SkillGet, (*dbsqlc.SkillGetParams)(&k))
	if err != nil {
		return nil, wrap(err, "reading skill %s (%s %s)", k.Name, k.Layer, k.Scope)
	}
	return skillFromRow(&row)
}

func (q *queries) SkillList(ctx context.Context, p *store.SkillListParams) ([]*store.Skill, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).SkillList, &dbsqlc.SkillListParams{AllSkills: p.All, Owner: p.Owner, Agent: p.Agent})
	if err != nil {
		return nil, wrap(err, "listing skills")
	}
	out := make([]*store.Skill, len(rows))
	for i := range rows {
		if out[i], err = skillFromRow(&rows[i]); err != nil {
			return nil, wrap(err, "decoding skill %s", rows[i].Name)
		}
	}
	return out, nil
}

func (q *queries) SkillDelete(ctx context.Context, k store.SkillKey) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).SkillDelete, (*dbsqlc.SkillDeleteParams)(&k))
	if err == nil && n == 0 {
		err = errNoRow
	}
	return wrap(err, "removing skill %s (%s %s)", k.Name, k.Layer, k.Scope)
}
