package memory

import (
	"context"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Source is one background source of a turn's memory. Fetch runs under the
// turn's budget: ctx ends when the budget is spent, and what the source
// returns after that is not waited for.
type Source interface {
	// Name identifies the source in logs; unique among the sources.
	Name() string
	Fetch(ctx context.Context, q *Query) ([]Snippet, error)
}

// Query is what memory is assembled for: the turn, and the agent's family.
type Query struct {
	core.MemoryQuery
	Family string
}

// Reader is who reads notes in this turn.
func (q *Query) Reader() store.NoteReader {
	return store.NoteReader{Agent: q.Agent, Family: q.Family, ConversationID: q.ConversationID, WorkspaceID: q.WorkspaceID}
}

// Snippet is one line of a turn's memory.
type Snippet struct {
	Layer  layer
	NoteID string // the note's id; "" for what is not a note
	Text   string
	Tags   []string
	Agent  string // the family note's author, shown beside it
}

func (s Snippet) line() string {
	max := maxNoteChars
	if s.Layer == layerSummary {
		max = maxSummaryChars
	}
	out := truncate(s.Text, max)
	if len(s.Tags) > 0 {
		out += " [" + strings.Join(s.Tags, ", ") + "]"
	}
	if s.Layer == layerFamily && s.Agent != "" {
		out += " (from " + s.Agent + ")"
	}
	return out
}

func snippetOf(n *store.Note) Snippet {
	at := layerAgent
	switch n.Scope {
	case store.NoteScopeFamily:
		at = layerFamily
	case store.NoteScopeConversation:
		at = layerConversation
	}
	return Snippet{Layer: at, NoteID: n.ID.String(), Text: n.Text, Tags: n.Tags, Agent: n.Agent}
}

func snippetsOf(ns []*store.Note) []Snippet {
	out := make([]Snippet, len(ns))
	for i, n := range ns {
		out[i] = snippetOf(n)
	}
	return out
}

// NoteSource searches the agent's and its family's notes (full text) for
// the latest message's words.
type NoteSource struct{ Store store.Queries }

// Name is "notes".
func (NoteSource) Name() string { return "notes" }

// Fetch searches the notes.
func (s NoteSource) Fetch(ctx context.Context, q *Query) ([]Snippet, error) {
	notes, err := s.Store.NoteSearch(ctx, &store.NoteSearchParams{
		Reader: q.Reader(), Scopes: []store.NoteScope{store.NoteScopeAgent, store.NoteScopeFamily},
		Query: q.Latest, Limit: 2 * maxBackground,
	})
	if err != nil {
		return nil, err
	}
	return snippetsOf(notes), nil
}

// SummarySource searches the summaries of the agent's other conversations.
type SummarySource struct{ Store store.Queries }

// Name is "summaries".
func (SummarySource) Name() string { return "summaries" }

// maxSummaries bounds the summaries one turn gets.
const maxSummaries = 3

// Fetch searches the summaries.
func (s SummarySource) Fetch(ctx context.Context, q *Query) ([]Snippet, error) {
	if q.AgentID == nil {
		return nil, nil
	}
	hits, err := s.Store.SummarySearch(ctx, &store.SummarySearchParams{
		AgentID: *q.AgentID, Exclude: q.ConversationID, WorkspaceID: q.WorkspaceID, Query: q.Latest, Limit: maxSummaries,
	})
	if err != nil {
		return nil, err
	}
	out := make([]Snippet, len(hits))
	for i, h := range hits {
		out[i] = Snippet{Layer: layerSummary, Text: h.Text}
	}
	return out, nil
}
