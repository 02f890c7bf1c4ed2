package store

import (
	"context"
	"time"
)

// Skills: skills in the Agent Skills format (package skill parses them),
// stored so that every instance offers the same set. A skill lives in one
// layer: the platform's (Scope ""), an owner's (Scope is the owner, shared
// by all that owner's agents) or one agent's (Scope is the agent's name).
// (Layer, Scope, Name) is unique; a save replaces.

// The skill layers, from least to most specific.
const (
	SkillLayerPlatform = "platform"
	SkillLayerOwner    = "owner"
	SkillLayerAgent    = "agent"
)

// MaxSkillBytes bounds one skill: its instructions and resource files
// together.
const MaxSkillBytes = 4 << 20

// Skill is one stored skill.
type Skill struct {
	Layer        string
	Scope        string // "" for the platform, the owner, or the agent's name
	Name         string
	Description  string
	FrontMatter  string // the YAML front matter as written
	Instructions string
	Files        map[string][]byte // resource files by path inside the skill
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// SkillSaveParams inserts or replaces a skill.
type SkillSaveParams struct {
	Layer        string
	Scope        string
	Name         string
	Description  string
	FrontMatter  string
	Instructions string
	Files        map[string][]byte
	Now          time.Time
}

// SkillKey names one stored skill.
type SkillKey struct {
	Layer string
	Scope string
	Name  string
}

// SkillListParams selects skills. With All, every skill of every layer;
// otherwise the platform's plus, when set, those of Owner and of Agent: what
// one agent may be offered.
type SkillListParams struct {
	All   bool
	Owner string
	Agent string
}

// SkillQueries are the skills' queries.
type SkillQueries interface {
	// SkillSave inserts or replaces a skill; a replacement keeps CreatedAt.
	SkillSave(ctx context.Context, p *SkillSaveParams) (*Skill, error)
	// SkillGet returns one skill; ErrNotFound when there is none.
	SkillGet(ctx context.Context, k SkillKey) (*Skill, error)
	// SkillList returns the selected skills by layer, scope and name.
	SkillList(ctx context.Context, p *SkillListParams) ([]*Skill, error)
	// SkillDelete removes a skill; ErrNotFound when there is none.
	SkillDelete(ctx context.Context, k SkillKey) error
}
