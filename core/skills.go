package core

import (
	"context"
	"slices"
	"sort"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/tool"
)

// Skills is what an agent's skills add to a turn: the tools the skills
// assigned to it grant, and the compact index of the skills it is offered
// for the stable prompt block. Package skill's Library implements it.
type Skills interface {
	Grants(ctx context.Context, agent string, agentID *uuid.UUID) ([]string, error)
	Index(ctx context.Context, agent string, agentID *uuid.UUID, contextName tool.ContextName, toolNames []string) (string, error)
}

// offerSkills adds the tools the agent's skills grant to the turn's offer
// (an agent limited to a list gets them at once, without a restart), then
// computes the skill index against the tools offered. A store error costs
// the skills for this turn, not the turn.
func (t *turn) offerSkills(ctx context.Context) {
	sk := t.s.opts.Skills
	if sk == nil {
		return
	}
	id := t.s.agentID(t.agent.Name)
	if len(t.agent.Tools) > 0 {
		grants, err := sk.Grants(ctx, t.agent.Name, id)
		if err != nil {
			t.s.log.WarnContext(ctx, "reading the tools skills grant; offering the agent's own", "agent", t.agent.Name, "error", redact.String(err.Error()))
		}
		for _, tl := range t.s.opts.Tools(t.meta.Context) {
			if _, has := t.tools[tl.Name()]; !has && slices.Contains(grants, tl.Name()) {
				t.tools[tl.Name()] = tl
				t.list = append(t.list, tl)
			}
		}
		sort.Slice(t.list, func(i, j int) bool { return t.list[i].Name() < t.list[j].Name() })
	}
	names := make([]string, len(t.list))
	for i, tl := range t.list {
		names[i] = tl.Name()
	}
	index, err := sk.Index(ctx, t.agent.Name, id, t.meta.Context, names)
	if err != nil {
		t.s.log.WarnContext(ctx, "reading the skill index; this turn goes without", "agent", t.agent.Name, "error", redact.String(err.Error()))
	}
	t.skillIndex = index
}

// withSkillIndex puts the skill index at the end of the stable block (the
// first cached system block), so it is cached with it.
func withSkillIndex(req *model.Request, index string) {
	if index == "" {
		return
	}
	for i := range req.System {
		if req.System[i].Cache {
			req.System[i].Text += "\n" + index
			return
		}
	}
}
