package skill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// OperatorScope is the owner layer's scope for the operator's agents (those
// of switchboard.yaml, owned by no person).
const OperatorScope = "operator"

// Library is the stored skills, as every instance sees them.
type Library struct {
	Store store.Store
	// AgentToolsFunc returns the names of the tools an agent is offered in
	// a context, with grants (the tools its skills grant) added: what
	// requires-tools is checked against when a tool call asks for a skill.
	// Nil: no tools.
	AgentToolsFunc func(agent string, contextName tool.ContextName, grants []string) []string
	Logger         *slog.Logger
	Now            func() time.Time
}

func (l *Library) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Library) log() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// ToStore is the save of s in layer and scope.
func ToStore(layer Layer, scope string, s *Skill, now time.Time) *store.SkillSaveParams {
	return &store.SkillSaveParams{
		Layer: string(layer), Scope: scope, Name: s.Name, Description: s.Description,
		FrontMatter: string(s.FrontMatter), Instructions: s.Instructions, Files: s.Files, Now: now,
	}
}

// FromStore parses a stored skill back; the front matter is the source of
// its rules.
func FromStore(r *store.Skill) (*Skill, error) {
	s, err := Parse(fmt.Sprintf("%s skill %s", r.Layer, r.Name), (&Skill{FrontMatter: []byte(r.FrontMatter), Instructions: r.Instructions}).Markdown())
	if err != nil {
		return nil, err
	}
	s.Files = r.Files
	return s, nil
}

// Save stores s in a layer.
func (l *Library) Save(ctx context.Context, layer Layer, scope string, s *Skill) error {
	if err := s.Validate(s.Name); err != nil {
		return err
	}
	_, err := l.Store.SkillSave(ctx, ToStore(layer, scope, s, l.now()))
	return err
}

// SyncPlatform makes the platform layer exactly skills: each is saved, and
// a platform skill no longer among them is removed.
func (l *Library) SyncPlatform(ctx context.Context, skills []*Skill) error {
	keep := map[string]bool{}
	for _, s := range skills {
		if keep[s.Name] {
			return fmt.Errorf("two platform skills are named %s", s.Name)
		}
		keep[s.Name] = true
		if err := l.Save(ctx, LayerPlatform, "", s); err != nil {
			return fmt.Errorf("saving platform skill %s: %w", s.Name, err)
		}
	}
	rows, err := l.Store.SkillList(ctx, &store.SkillListParams{})
	if err != nil {
		return fmt.Errorf("listing platform skills: %w", err)
	}
	for _, r := range rows {
		if r.Layer == store.SkillLayerPlatform && !keep[r.Name] {
			if err := l.Store.SkillDelete(ctx, store.SkillKey{Layer: r.Layer, Name: r.Name}); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("removing platform skill %s: %w", r.Name, err)
			}
		}
	}
	return nil
}

// OwnerScope is the owner layer's scope for an agent: its owner's id, or
// OperatorScope.
func (l *Library) OwnerScope(ctx context.Context, agentID *uuid.UUID) (string, error) {
	if agentID == nil {
		return OperatorScope, nil
	}
	sh, err := l.Store.AgentSharingGet(ctx, *agentID)
	if err != nil {
		return "", fmt.Errorf("finding the owner of agent %s: %w", agentID, err)
	}
	if sh.OwnerPersonID == nil {
		return OperatorScope, nil
	}
	return sh.OwnerPersonID.String(), nil
}

// Layers returns every skill an agent may see, in all three layers (not
// yet resolved). A stored skill that no longer parses is skipped and logged.
func (l *Library) Layers(ctx context.Context, agent string, agentID *uuid.UUID) ([]Layered, error) {
	owner, err := l.OwnerScope(ctx, agentID)
	if err != nil {
		return nil, err
	}
	rows, err := l.Store.SkillList(ctx, &store.SkillListParams{Owner: owner, Agent: agent})
	if err != nil {
		return nil, fmt.Errorf("listing the skills of %s: %w", agent, err)
	}
	out := make([]Layered, 0, len(rows))
	for _, r := range rows {
		s, err := FromStore(r)
		if err != nil {
			l.log().WarnContext(ctx, "stored skill does not parse; skipped", "skill", r.Name, "layer", r.Layer, "error", err)
			continue
		}
		out = append(out, Layered{Layer: Layer(r.Layer), Skill: s})
	}
	return out, nil
}

// Grants returns the tools the skills assigned to an agent (its own and its
// owner's) grant, and load_skill and read_skill_file when it has any skill
// at all, so that an agent limited to a list of tools can use its skills.
func (l *Library) Grants(ctx context.Context, agent string, agentID *uuid.UUID) ([]string, error) {
	all, err := l.Layers(ctx, agent, agentID)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	out := []string{LoadToolName, ReadFileToolName}
	for _, s := range Resolve(all) {
		if s.Layer == LayerPlatform {
			continue // the platform's skills are offered, not assigned
		}
		for _, t := range s.AllowedTools {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// Offered returns the skills offered to an agent with toolNames in
// contextName.
func (l *Library) Offered(ctx context.Context, agent string, agentID *uuid.UUID, contextName tool.ContextName, toolNames []string) ([]Layered, error) {
	all, err := l.Layers(ctx, agent, agentID)
	if err != nil {
		return nil, err
	}
	return Offered(all, toolNames, contextName), nil
}

// Index is the skill index for the stable prompt block (see Index).
func (l *Library) Index(ctx context.Context, agent string, agentID *uuid.UUID, contextName tool.ContextName, toolNames []string) (string, error) {
	offered, err := l.Offered(ctx, agent, agentID, contextName, toolNames)
	if err != nil {
		return "", err
	}
	return Index(offered), nil
}

// Source is the SourceFunc of load_skill and read_skill_file: the skills
// offered to the calling agent in the call's context.
func (l *Library) Source(ctx context.Context, req *tool.Request) ([]Layered, error) {
	var names []string
	if l.AgentToolsFunc != nil {
		grants, err := l.Grants(ctx, req.Agent, req.AgentID)
		if err != nil {
			return nil, err
		}
		names = l.AgentToolsFunc(req.Agent, req.Context, grants)
	}
	return l.Offered(ctx, req.Agent, req.AgentID, req.Context, names)
}

// target is the layer and scope an import or removal addresses: one agent's
// skills, or with no agent the operator's agents' (the owner layer of the
// operator). The platform layer is the operator's folder and the binary's
// skills, synced at start, so it is not written here.
func target(agent string) (Layer, string) {
	if agent != "" {
		return LayerAgent, agent
	}
	return LayerOwner, OperatorScope
}

// Assign stores skills for one agent (or, with agent "", for every agent of
// the operator). The tools their allowed-tools list are granted from the
// next turn on (see Grants).
func (l *Library) Assign(ctx context.Context, agent string, skills []*Skill) ([]*store.Skill, error) {
	layer, scope := target(agent)
	var out []*store.Skill
	for _, s := range skills {
		if err := s.Validate(s.Name); err != nil {
			return out, err
		}
		row, err := l.Store.SkillSave(ctx, ToStore(layer, scope, s, l.now()))
		if err != nil {
			return out, fmt.Errorf("saving skill %s: %w", s.Name, err)
		}
		out = append(out, row)
	}
	return out, nil
}

// ImportArchive imports a .zip or .tar.gz and assigns its skills (see
// Assign).
func (l *Library) ImportArchive(ctx context.Context, name string, data []byte, agent string) ([]*store.Skill, error) {
	skills, err := FromArchive(name, data, Limits{})
	if err != nil {
		return nil, err
	}
	return l.Assign(ctx, agent, skills)
}

// Remove removes a skill assigned to an agent (or, with agent "", to the
// operator's agents).
func (l *Library) Remove(ctx context.Context, name, agent string) error {
	layer, scope := target(agent)
	return l.Store.SkillDelete(ctx, store.SkillKey{Layer: string(layer), Scope: scope, Name: name})
}

// List lists every stored skill of every layer.
func (l *Library) List(ctx context.Context) ([]*store.Skill, error) {
	return l.Store.SkillList(ctx, &store.SkillListParams{All: true})
}
