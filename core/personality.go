package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// The personality document: each agent's Markdown document about itself,
// seeded from its persona in switchboard.yaml and sent to the model in
// place of the persona. The agent replaces it whole with update_personality
// (guarded against sharp shrinking, see agent.PersonalityGuard); the
// operator replaces it from the CLI or the API without the guard. Every
// version is kept.

// Authors of personality versions that no person or agent wrote.
const (
	PersonalitySeedAuthor     = "config"   // the persona in switchboard.yaml
	PersonalityOperatorAuthor = "operator" // the CLI or the operator's API token
)

// The personality tools' names.
const (
	ToolReadPersonality   = "read_personality"
	ToolUpdatePersonality = "update_personality"
)

// ErrPersonalityRefused is wrapped by a replacement the shrink guard refuses.
var ErrPersonalityRefused = errors.New("personality replacement refused")

// Personalities reads and replaces the agents' personality documents. The
// CLI makes one over a bare store; the service has one over its own.
type Personalities struct {
	st     store.Queries
	agents *config.Config // the guard's settings; nil: the defaults
	now    func() time.Time
}

// NewPersonalities reads and writes personality documents in st. agents
// (may be nil) holds each agent's guard settings; now (nil: time.Now) dates
// the versions.
func NewPersonalities(st store.Queries, agents *config.Config, now func() time.Time) *Personalities {
	if now == nil {
		now = time.Now
	}
	return &Personalities{st: st, agents: agents, now: now}
}

// Personalities is the service's personality documents.
func (s *Service) Personalities() *Personalities { return NewPersonalities(s.st, s.agents(), s.now) }

// PersonalityReplaceParams replaces an agent's document whole.
type PersonalityReplaceParams struct {
	Agent  string // the agent's name
	Text   string
	Author string
	// Guarded applies the agent's shrink guard: the agent's own
	// replacements are guarded, the operator's are not.
	Guarded bool
}

func (p *Personalities) agentID(ctx context.Context, name string) (*store.Agent, error) {
	a, err := p.st.AgentGetByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no agent named %q (agents are registered when the server starts): %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("finding agent %q: %w", name, err)
	}
	return a, nil
}

// Current is the agent's current document; ErrNotFound when it has none.
func (p *Personalities) Current(ctx context.Context, name string) (*store.Personality, error) {
	return p.Version(ctx, name, 0)
}

// Version is one version of the agent's document (0: the current one).
func (p *Personalities) Version(ctx context.Context, name string, version int) (*store.Personality, error) {
	a, err := p.agentID(ctx, name)
	if err != nil {
		return nil, err
	}
	doc, err := p.st.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: a.ID, Version: version})
	if err != nil {
		return nil, fmt.Errorf("reading the personality of %s: %w", name, err)
	}
	return doc, nil
}

// History lists the agent's versions, newest first.
func (p *Personalities) History(ctx context.Context, name string, limit int) ([]*store.Personality, error) {
	a, err := p.agentID(ctx, name)
	if err != nil {
		return nil, err
	}
	docs, err := p.st.PersonalityList(ctx, &store.PersonalityListParams{AgentID: a.ID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("listing the personality versions of %s: %w", name, err)
	}
	return docs, nil
}

// Replace writes a new version of the agent's document. A guarded
// replacement that shrinks it too sharply is refused with an error
// wrapping ErrPersonalityRefused that says why; one that races another
// writer gets ErrConflict.
func (p *Personalities) Replace(ctx context.Context, r *PersonalityReplaceParams) (*store.Personality, error) {
	text := strings.TrimSpace(r.Text)
	if text == "" {
		return nil, fmt.Errorf("replacing the personality of %s: %w", r.Agent, store.ErrInvalid)
	}
	a, err := p.agentID(ctx, r.Agent)
	if err != nil {
		return nil, err
	}
	after := 0
	cur, err := p.st.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: a.ID})
	switch {
	case err == nil:
		after = cur.Version
	case !errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("reading the personality of %s: %w", r.Agent, err)
	}
	if r.Guarded && cur != nil {
		if err := p.guardOf(r.Agent).Check(cur.Text, text); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPersonalityRefused, err)
		}
	}
	doc, err := p.st.PersonalityAppend(ctx, &store.PersonalityAppendParams{
		AgentID: a.ID, After: after, Text: text, Author: r.Author, Now: p.now(),
	})
	if err != nil {
		return nil, fmt.Errorf("replacing the personality of %s: %w", r.Agent, err)
	}
	return doc, nil
}

func (p *Personalities) guardOf(name string) config.PersonalityGuard {
	if p.agents != nil {
		if a, ok := p.agents.Find(name); ok {
			return a.Personality
		}
	}
	return config.PersonalityGuard{}
}

// seedPersonality writes an agent's first document from its persona, once:
// an agent that has one (seeded earlier, or replaced since) keeps it.
func (s *Service) seedPersonality(ctx context.Context, a *config.Agent, row *store.Agent) error {
	_, err := s.st.PersonalityAppend(ctx, &store.PersonalityAppendParams{
		AgentID: row.ID, Text: strings.TrimSpace(a.Persona), Author: PersonalitySeedAuthor, Now: s.now(),
	})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("seeding the personality of %q: %w", a.Name, err)
	}
	return nil
}

// withPersonalityOf is withPersonality with the current document of conv's
// agent read already (doc; nil: it has none): used when a is that agent,
// else the document of a is read.
func (s *Service) withPersonalityOf(ctx context.Context, a *config.Agent, conv *store.Conversation, doc *store.Personality) (*config.Agent, error) {
	id := s.agentID(a.Name)
	if id == nil || conv.AgentID == nil || *conv.AgentID != *id {
		return s.withPersonality(ctx, a)
	}
	if doc == nil {
		return a, nil
	}
	c := *a
	c.Persona = doc.Text
	return &c, nil
}

// withPersonality is the turn's agent with its current personality document
// as the persona the prompt is built from. The document is read once per
// turn, so a replacement made during a turn shows from the next one and the
// prompt stays the same across the turn's steps.
func (s *Service) withPersonality(ctx context.Context, a *config.Agent) (*config.Agent, error) {
	id := s.agentID(a.Name)
	if id == nil {
		return a, nil
	}
	doc, err := s.st.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: *id})
	if errors.Is(err, store.ErrNotFound) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the personality of %s: %w", a.Name, err)
	}
	c := *a
	c.Persona = doc.Text
	return &c, nil
}

// PersonalityOut is what the personality tools return to the model.
type PersonalityOut struct {
	Version    int    `json:"version"`
	Characters int    `json:"characters"`
	Text       string `json:"text,omitempty"`
}

// UpdatePersonalityIn is update_personality's input.
type UpdatePersonalityIn struct {
	Text string `json:"text" jsonschema:"the whole new personality document in Markdown; it replaces the current one"`
}

// RegisterPersonalityTools registers read_personality and
// update_personality, which act on the calling agent's own document.
func RegisterPersonalityTools(r *tool.Registry, p *Personalities) error {
	err := errors.Join(
		tool.Register(r, tool.Def{
			Name:        ToolReadPersonality,
			Description: "Read your personality document: the Markdown about who you are, how you talk and what you care about.",
			Risk:        tool.RiskLow,
		}, func(ctx context.Context, req *tool.Request, _ struct{}) (PersonalityOut, error) {
			doc, err := p.Current(ctx, req.Agent)
			if err != nil {
				return PersonalityOut{}, err
			}
			return PersonalityOut{Version: doc.Version, Characters: utf8.RuneCountInString(doc.Text), Text: doc.Text}, nil
		}),
		tool.Register(r, tool.Def{
			Name: ToolUpdatePersonality,
			Description: "Replace your personality document whole (read it first with read_personality). Keep what still " +
				"holds: a replacement that drops much of it is refused. The new document applies from your next turn.",
			Risk: tool.RiskLow,
		}, func(ctx context.Context, req *tool.Request, in UpdatePersonalityIn) (PersonalityOut, error) {
			doc, err := p.Replace(ctx, &PersonalityReplaceParams{
				Agent: req.Agent, Text: in.Text, Author: string(store.AgentAuthor(req.Agent)), Guarded: true,
			})
			if errors.Is(err, store.ErrConflict) {
				return PersonalityOut{}, errors.New("your personality document changed meanwhile; read it again and retry")
			}
			if err != nil {
				return PersonalityOut{}, err
			}
			return PersonalityOut{Version: doc.Version, Characters: utf8.RuneCountInString(doc.Text)}, nil
		}),
	)
	if err != nil {
		return fmt.Errorf("registering personality tools: %w", err)
	}
	return nil
}
