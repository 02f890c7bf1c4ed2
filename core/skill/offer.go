package skill

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/switchboardhq/switchboard/core/tool"
)

// Layer is where a skill is declared. A more specific layer wins when two
// skills share a name: an agent's own over its owner's, the owner's over the
// platform's.
type Layer string

const (
	LayerPlatform Layer = "platform" // the operator's folder and the skills the binary ships
	LayerOwner    Layer = "owner"    // every agent of one owner
	LayerAgent    Layer = "agent"    // one agent
)

// rank orders the layers from least to most specific.
func (l Layer) rank() int {
	switch l {
	case LayerOwner:
		return 1
	case LayerAgent:
		return 2
	}
	return 0
}

// Valid reports whether l is a known layer.
func (l Layer) Valid() bool { return l == LayerPlatform || l == LayerOwner || l == LayerAgent }

// Layered is a skill with the layer it was declared in.
type Layered struct {
	Layer Layer
	*Skill
}

// Resolve keeps, for each name, the skill of the most specific layer, and
// returns them by name.
func Resolve(skills []Layered) []Layered {
	best := map[string]Layered{}
	for _, s := range skills {
		if cur, ok := best[s.Name]; !ok || s.Layer.rank() > cur.Layer.rank() {
			best[s.Name] = s
		}
	}
	out := make([]Layered, 0, len(best))
	for _, s := range best {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Active reports whether s is offered to an agent with the tools agentTools
// in the context ctxName: each requires-tools pattern must match one of the
// agent's tools, and the context must be listed when contexts are.
func (s *Skill) Active(agentTools []string, ctxName tool.ContextName) bool {
	if len(s.Contexts) > 0 && !slices.Contains(s.Contexts, ctxName) {
		return false
	}
	for _, p := range s.RequiresTools {
		if !slices.ContainsFunc(agentTools, func(t string) bool {
			ok, _ := path.Match(p, t)
			return ok
		}) {
			return false
		}
	}
	return true
}

// Offered resolves the layers and keeps the skills active for the agent's
// tools in ctxName.
func Offered(skills []Layered, agentTools []string, ctxName tool.ContextName) []Layered {
	var out []Layered
	for _, s := range Resolve(skills) {
		if s.Active(agentTools, ctxName) {
			out = append(out, s)
		}
	}
	return out
}

// indexLineLen bounds one description in the index, so the index stays
// compact however long a description is.
const indexLineLen = 160

// Index renders the compact skill index for the stable prompt block: one
// line per skill, its name and the first line of its description. It is ""
// when there are no skills, and the same bytes for the same skills.
func Index(skills []Layered) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Skills you can use. Call load_skill with a name to read its instructions before you follow it; read_skill_file reads a file it mentions.\n")
	sorted := slices.Clone(skills)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, s := range sorted {
		line, _, _ := strings.Cut(s.Description, "\n")
		line = strings.TrimSpace(line)
		if r := []rune(line); len(r) > indexLineLen {
			line = strings.TrimSpace(string(r[:indexLineLen])) + "…"
		}
		b.WriteString("- " + s.Name + ": " + line + "\n")
	}
	return b.String()
}

// GrantTools returns agentTools extended with the tools the skills allow,
// without repeats. An empty agentTools means every tool already, so it is
// returned as is.
func GrantTools(agentTools []string, skills ...*Skill) []string {
	if len(agentTools) == 0 {
		return agentTools
	}
	out := slices.Clone(agentTools)
	for _, s := range skills {
		for _, t := range s.AllowedTools {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}
