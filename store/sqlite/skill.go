package sqlite

import (
	"context"
	"encoding/json"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func skill(r dbsqlc.Skill) (*store.Skill, error) {
	out := &store.Skill{
		Layer: r.Layer, Scope: r.Scope, Name: r.Name, Description: r.Description,
		FrontMatter: r.FrontMatter, Instructions: r.Instructions,
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
	if err := json.Unmarshal([]byte(r.Files), &out.Files); err != nil {
		return nil, wrap(err, "decoding the files of skill %s", r.Name)
	}
	return out, nil
}

func (q *queries) SkillSave(ctx context.Context, p *store.SkillSaveParams) (*store.Skill, error) {
	files, err := json.Marshal(p.Files)
	if err != nil {
		return nil, wrap(err, "encoding the files of skill %s", p.Name)
	}
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Skill, error) {
		return t.tx.SkillSave(ctx, dbsqlc.SkillSaveParams{
			Layer: p.Layer, Scope: p.Scope, Name: p.Name, Description: p.Description, FrontMatter: p.FrontMatter,
			Instructions: p.Instructions, Files: string(files), Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "saving skill %s", p.Name)
	}
	return skill(r)
}

func (q *queries) SkillGet(ctx context.Context, k store.SkillKey) (*store.Skill, error) {
	r, err := q.read().SkillGet(ctx, dbsqlc.SkillGetParams(k))
	if err != nil {
		return nil, wrap(err, "reading skill %s (%s %s)", k.Name, k.Layer, k.Scope)
	}
	return skill(r)
}

func (q *queries) SkillList(ctx context.Context, p *store.SkillListParams) ([]*store.Skill, error) {
	all := int64(0)
	if p.All {
		all = 1
	}
	rs, err := q.read().SkillList(ctx, dbsqlc.SkillListParams{AllSkills: all, Owner: p.Owner, Agent: p.Agent})
	if err != nil {
		return nil, wrap(err, "listing skills")
	}
	var out []*store.Skill
	for _, r := range rs {
		s, err := skill(r)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (q *queries) SkillDelete(ctx context.Context, k store.SkillKey) error {
	_, err := write(ctx, q, func(t *queries) (int64, error) {
		n, err := t.tx.SkillDelete(ctx, dbsqlc.SkillDeleteParams(k))
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return n, err
	})
	if err != nil {
		return wrap(err, "removing skill %s (%s %s)", k.Name, k.Layer, k.Scope)
	}
	return nil
}
