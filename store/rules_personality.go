package store

import (
	"context"

	"github.com/google/uuid"
)

// The personality documents' rules: a version names its agent, has text and
// an author, and follows the one it replaces.

func (q checked) PersonalityAppend(ctx context.Context, p *PersonalityAppendParams) (*Personality, error) {
	switch {
	case p == nil || p.AgentID == uuid.Nil:
		return nil, invalidf("writing personality: AgentID is required")
	case p.Text == "":
		return nil, invalidf("writing personality of agent %s: empty Text", p.AgentID)
	case p.Author == "":
		return nil, invalidf("writing personality of agent %s: empty Author", p.AgentID)
	case p.After < 0:
		return nil, invalidf("writing personality of agent %s: After %d is negative", p.AgentID, p.After)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.PersonalityAppend(ctx, &c)
}

func (q checked) PersonalityGet(ctx context.Context, p *PersonalityGetParams) (*Personality, error) {
	if p == nil || p.AgentID == uuid.Nil || p.Version < 0 {
		return nil, invalidf("reading personality: AgentID is required and Version is not negative")
	}
	return q.Queries.PersonalityGet(ctx, p)
}

func (q checked) PersonalityList(ctx context.Context, p *PersonalityListParams) ([]*Personality, error) {
	if p == nil || p.AgentID == uuid.Nil {
		return nil, invalidf("listing personality versions: AgentID is required")
	}
	c := *p
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	return q.Queries.PersonalityList(ctx, &c)
}
