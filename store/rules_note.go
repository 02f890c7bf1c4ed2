package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// The notes' rules: a note names its agent, family and scope, has text,
// and a conversation exactly when its scope is the conversation; searches
// get their terms here, so every driver looks for the same words.

// MaxNoteChars bounds a note's text.
const MaxNoteChars = 4000

func (q checked) NoteCreate(ctx context.Context, p *NoteCreateParams) (*Note, error) {
	if p == nil {
		return nil, fmt.Errorf("creating a note: %w", invalidf("nil params"))
	}
	c := *p
	c.Text = strings.TrimSpace(c.Text)
	switch {
	case c.Agent == "":
		return nil, invalidf("creating a note: empty Agent")
	case c.Family == "":
		return nil, invalidf("creating a note of %s: empty Family", c.Agent)
	case !c.Scope.Valid():
		return nil, invalidf("creating a note of %s: Scope %q is not agent, family or conversation", c.Agent, c.Scope)
	case c.Text == "":
		return nil, invalidf("creating a note of %s: empty Text", c.Agent)
	case len([]rune(c.Text)) > MaxNoteChars:
		return nil, invalidf("creating a note of %s: Text has %d characters, more than %d", c.Agent, len([]rune(c.Text)), MaxNoteChars)
	case c.Scope == NoteScopeConversation && (c.ConversationID == nil || *c.ConversationID == uuid.Nil):
		return nil, invalidf("creating a conversation note of %s: ConversationID is required", c.Agent)
	}
	if c.Scope != NoteScopeConversation {
		c.ConversationID = nil
	}
	tags := make([]string, 0, len(c.Tags))
	for _, t := range c.Tags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	c.Tags, c.ID, c.Now = tags, newID(), q.at(c.Now)
	return q.Queries.NoteCreate(ctx, &c)
}

func checkReader(r NoteReader) error {
	switch {
	case r.Agent == "":
		return invalidf("Reader.Agent is required")
	case r.Family == "":
		return invalidf("Reader.Family is required")
	}
	return nil
}

func (q checked) NoteSearch(ctx context.Context, p *NoteSearchParams) ([]*Note, error) {
	if p == nil {
		return nil, fmt.Errorf("searching notes: %w", invalidf("nil params"))
	}
	if err := checkReader(p.Reader); err != nil {
		return nil, fmt.Errorf("searching notes: %w", err)
	}
	for _, s := range p.Scopes {
		if !s.Valid() {
			return nil, invalidf("searching notes: Scope %q is not agent, family or conversation", s)
		}
	}
	c := *p
	c.Terms, c.Limit = SearchTerms(c.Query), limitOr(c.Limit, DefaultNoteLimit)
	if len(c.Terms) == 0 {
		return nil, nil
	}
	if len(c.Scopes) == 0 {
		c.Scopes = []NoteScope{NoteScopeAgent, NoteScopeFamily, NoteScopeConversation}
	}
	return q.Queries.NoteSearch(ctx, &c)
}

func (q checked) NoteListPinned(ctx context.Context, p *NoteListPinnedParams) ([]*Note, error) {
	if p == nil {
		return nil, fmt.Errorf("listing pinned notes: %w", invalidf("nil params"))
	}
	if err := checkReader(p.Reader); err != nil {
		return nil, fmt.Errorf("listing pinned notes: %w", err)
	}
	c := *p
	c.Limit = limitOr(c.Limit, DefaultNoteLimit)
	return q.Queries.NoteListPinned(ctx, &c)
}

func (q checked) NoteList(ctx context.Context, p *NoteListParams) ([]*Note, error) {
	if p == nil {
		return nil, fmt.Errorf("listing notes: %w", invalidf("nil params"))
	}
	c := *p
	c.Limit = limitOr(c.Limit, DefaultListLimit)
	return q.Queries.NoteList(ctx, &c)
}

func (q checked) NoteTouch(ctx context.Context, p *NoteTouchParams) (int, error) {
	if p == nil || p.Uses < 0 {
		return 0, invalidf("touching notes: Uses must not be negative")
	}
	if len(p.IDs) == 0 {
		return 0, nil
	}
	c := *p
	c.Now = q.at(c.Now)
	if c.Uses == 0 {
		c.Uses = 1
	}
	return q.Queries.NoteTouch(ctx, &c)
}

func (q checked) NoteRescore(ctx context.Context, p *NoteRescoreParams) error {
	if p == nil || p.ID == uuid.Nil {
		return invalidf("rescoring a note: ID is required")
	}
	if math.IsNaN(p.Relevance) || math.IsInf(p.Relevance, 0) || p.Relevance < 0 {
		return invalidf("rescoring note %s: Relevance %v must be a number, not negative", p.ID, p.Relevance)
	}
	return q.Queries.NoteRescore(ctx, p)
}

func (q checked) NoteArchive(ctx context.Context, p *NoteArchiveParams) (*Note, error) {
	switch {
	case p == nil || p.ID == uuid.Nil:
		return nil, invalidf("archiving a note: ID is required")
	case p.SupersededBy != nil && (*p.SupersededBy == p.ID || *p.SupersededBy == uuid.Nil):
		return nil, invalidf("archiving note %s: SupersededBy must name another note", p.ID)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.NoteArchive(ctx, &c)
}

func (q checked) SummarySearch(ctx context.Context, p *SummarySearchParams) ([]*SummaryHit, error) {
	if p == nil || p.AgentID == uuid.Nil {
		return nil, invalidf("searching summaries: AgentID is required")
	}
	c := *p
	c.Terms, c.Limit = SearchTerms(c.Query), limitOr(c.Limit, DefaultNoteLimit)
	if len(c.Terms) == 0 {
		return nil, nil
	}
	return q.Queries.SummarySearch(ctx, &c)
}
