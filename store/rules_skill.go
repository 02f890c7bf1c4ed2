package store

import (
	"context"
	"fmt"
	"path"
	"strings"
)

func checkSkillKey(k SkillKey) error {
	switch {
	case k.Layer != SkillLayerPlatform && k.Layer != SkillLayerOwner && k.Layer != SkillLayerAgent:
		return invalidf("Layer %q is not platform, owner or agent", k.Layer)
	case k.Layer == SkillLayerPlatform && k.Scope != "":
		return invalidf("a platform skill has no Scope (got %q)", k.Scope)
	case k.Layer != SkillLayerPlatform && k.Scope == "":
		return invalidf("an %s skill needs a Scope", k.Layer)
	case k.Name == "":
		return invalidf("empty Name")
	}
	return nil
}

func (q checked) SkillSave(ctx context.Context, p *SkillSaveParams) (*Skill, error) {
	if p == nil {
		return nil, fmt.Errorf("saving a skill: %w", invalidf("nil params"))
	}
	if err := checkSkillKey(SkillKey{p.Layer, p.Scope, p.Name}); err != nil {
		return nil, fmt.Errorf("saving skill %q: %w", p.Name, err)
	}
	if p.Description == "" || p.Instructions == "" {
		return nil, fmt.Errorf("saving skill %s: %w", p.Name, invalidf("a skill needs a Description and Instructions"))
	}
	size := len(p.Instructions) + len(p.FrontMatter)
	for name, data := range p.Files {
		if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name || strings.HasPrefix(name, "../") || name == ".." {
			return nil, fmt.Errorf("saving skill %s: %w", p.Name, invalidf("file %q is not a clean path inside the skill", name))
		}
		size += len(name) + len(data)
	}
	if size > MaxSkillBytes {
		return nil, fmt.Errorf("saving skill %s: %w", p.Name, invalidf("%d bytes, more than the limit of %d", size, MaxSkillBytes))
	}
	c := *p
	c.Now = q.at(c.Now)
	if c.Files == nil {
		c.Files = map[string][]byte{}
	}
	return q.Queries.SkillSave(ctx, &c)
}

func (q checked) SkillGet(ctx context.Context, k SkillKey) (*Skill, error) {
	if err := checkSkillKey(k); err != nil {
		return nil, fmt.Errorf("reading skill %q: %w", k.Name, err)
	}
	return q.Queries.SkillGet(ctx, k)
}

func (q checked) SkillList(ctx context.Context, p *SkillListParams) ([]*Skill, error) {
	var c SkillListParams
	if p != nil {
		c = *p
	}
	return q.Queries.SkillList(ctx, &c)
}

func (q checked) SkillDelete(ctx context.Context, k SkillKey) error {
	if err := checkSkillKey(k); err != nil {
		return fmt.Errorf("removing skill %q: %w", k.Name, err)
	}
	return q.Queries.SkillDelete(ctx, k)
}
