package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
)

// Notes: what agents remember. A note belongs to the agent that wrote it
// and to the agent's family (the agents of one owner), and its scope says
// who reads it:
//
//	agent         the agent, in every conversation of the workspace
//	family        every agent of the family, in the workspace
//	conversation  the agent, in that one conversation
//
// A note is never deleted. Upkeep (package memory) lowers its relevance as
// it ages unused and archives it below a threshold; consolidation archives
// duplicates and, of two notes on one subject, the older, which the newer
// then names in Supersedes:
//
//	active ──(decay, duplicate, superseded)──► archived (archived_at set)
//
// Reads see only active notes of the reader's workspace (a note made
// outside any workspace is read only outside any workspace).

// NoteScope says who reads a note.
type NoteScope string

const (
	NoteScopeAgent        NoteScope = "agent"
	NoteScopeFamily       NoteScope = "family"
	NoteScopeConversation NoteScope = "conversation"
)

// Valid reports whether s is one of the scopes.
func (s NoteScope) Valid() bool {
	switch s {
	case NoteScopeAgent, NoteScopeFamily, NoteScopeConversation:
		return true
	}
	return false
}

// Note is one thing an agent remembers.
type Note struct {
	ID     uuid.UUID // UUIDv7: ordered by creation
	Agent  string    // the agent that wrote it
	Family string    // the agent's family when it wrote it
	// ConversationID is where it was written; set exactly for the
	// conversation scope.
	ConversationID *uuid.UUID
	Scope          NoteScope
	Text           string
	Tags           []string // never nil
	// Pinned notes are loaded at the start of every turn, and never decay.
	Pinned bool
	// Relevance is what decay computed last (1 when new).
	Relevance  float64
	Uses       int // how often it was recalled (and folded duplicates' uses)
	LastUsedAt *time.Time
	CreatedAt  time.Time
	ArchivedAt *time.Time
	// Supersedes is the older note this one replaced on the same subject.
	Supersedes  *uuid.UUID
	WorkspaceID *uuid.UUID
}

// NoteReader is who reads notes: an agent of a family, in a conversation
// (uuid.Nil: none) of a workspace (nil: none). A note is visible to it when
// it is active, of the same workspace, and its scope names the reader.
type NoteReader struct {
	Agent          string
	Family         string
	ConversationID uuid.UUID
	WorkspaceID    *uuid.UUID
}

// NoteCreateParams writes a note. ConversationID is required for the
// conversation scope and ignored otherwise.
type NoteCreateParams struct {
	Agent          string
	Family         string
	ConversationID *uuid.UUID
	Scope          NoteScope
	Text           string
	Tags           []string
	Pinned         bool
	WorkspaceID    *uuid.UUID
	Now            time.Time

	ID uuid.UUID // filled in by the rules (UUIDv7); callers leave it zero
}

// NoteSearchParams is a full-text search over the notes Reader sees.
type NoteSearchParams struct {
	Reader NoteReader
	// Scopes limits the search to these scopes; empty searches all three.
	Scopes []NoteScope
	// Query is free text; a note matches when it has any of its words
	// (stemmed; see SearchTerms), and the notes matching best come first.
	Query string
	Limit int // 0 means DefaultNoteLimit

	// Terms are Query's search terms, filled in by the rules for the
	// drivers; callers leave it empty.
	Terms []string
}

// NoteListPinnedParams lists the pinned notes Reader sees, oldest first.
type NoteListPinnedParams struct {
	Reader NoteReader
	Limit  int // 0 means DefaultNoteLimit
}

// NoteListParams pages through notes for upkeep, or lists one
// conversation's, in creation order. Every filter is optional.
type NoteListParams struct {
	Family         string
	Agent          string
	ConversationID *uuid.UUID
	// WithArchived lists archived notes too.
	WithArchived bool
	// After continues a listing after this note's id.
	After uuid.UUID
	Limit int // 0 means DefaultListLimit
}

// NoteTouchParams records that notes were used.
type NoteTouchParams struct {
	IDs  []uuid.UUID
	Uses int // added to each note's count; 0 means 1
	Now  time.Time
}

// NoteRescoreParams sets a note's relevance (decay).
type NoteRescoreParams struct {
	ID        uuid.UUID
	Relevance float64
}

// NoteArchiveParams archives a note, never deleting it. SupersededBy, when
// set, is the newer note that replaces it: that note's Supersedes is set
// to ID in the same write.
type NoteArchiveParams struct {
	ID           uuid.UUID
	SupersededBy *uuid.UUID
	Now          time.Time
}

// SummarySearchParams searches the summaries of an agent's other
// conversations (entries of kind "summary", content {"text": ...}) in the
// workspace. With no summary entries it finds nothing.
type SummarySearchParams struct {
	AgentID uuid.UUID
	// Exclude is the conversation asking (its own summary is in its prompt).
	Exclude     uuid.UUID
	WorkspaceID *uuid.UUID
	Query       string
	Limit       int // 0 means DefaultNoteLimit

	Terms []string // filled in by the rules, as NoteSearchParams.Terms
}

// SummaryHit is a summary that matched.
type SummaryHit struct {
	EntryID        uuid.UUID
	ConversationID uuid.UUID
	Text           string
	CreatedAt      time.Time
}

// DefaultNoteLimit bounds searches and the pinned list.
const DefaultNoteLimit = 20

// NoteQueries are the notes' reads and writes.
type NoteQueries interface {
	NoteCreate(ctx context.Context, p *NoteCreateParams) (*Note, error)
	// NoteGet reads a note, archived or not; ErrNotFound when absent.
	NoteGet(ctx context.Context, id uuid.UUID) (*Note, error)
	// NoteSearch finds the reader's notes matching the query, best first
	// (then the most relevant, then the newest). A query without a word to
	// search for finds nothing.
	NoteSearch(ctx context.Context, p *NoteSearchParams) ([]*Note, error)
	NoteListPinned(ctx context.Context, p *NoteListPinnedParams) ([]*Note, error)
	NoteList(ctx context.Context, p *NoteListParams) ([]*Note, error)
	// NoteTouch adds Uses to each note's count and moves its last use to
	// Now; it returns how many notes it found.
	NoteTouch(ctx context.Context, p *NoteTouchParams) (int, error)
	// NoteRescore sets a note's relevance; ErrNotFound when absent.
	NoteRescore(ctx context.Context, p *NoteRescoreParams) error
	// NoteArchive archives a note (again: a no-op that keeps the first
	// time) and links the note that supersedes it; ErrNotFound when either
	// is absent.
	NoteArchive(ctx context.Context, p *NoteArchiveParams) (*Note, error)
	// SummarySearch finds summaries of the agent's other conversations
	// containing any of the query's words, the most words first.
	SummarySearch(ctx context.Context, p *SummarySearchParams) ([]*SummaryHit, error)
}

// maxSearchTerms bounds the words one search looks for.
const maxSearchTerms = 16

// SearchTerms are the words a search looks for: lowercase runs of letters
// and digits of two or more characters, common English words left out,
// each once, at most 16. Drivers build their dialect's query from them
// (Postgres: a tsquery of the terms OR-ed; SQLite: an FTS5 query of the
// quoted terms OR-ed), so no text of the caller's reaches a query parser.
func SearchTerms(query string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 2 || stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == maxSearchTerms {
			break
		}
	}
	return out
}

// stopWords are left out of searches: they match nearly every note.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about after all also am an and any are as at be because been before
		but by can could did do does doing for from had has have having he her here hers him his how i if in
		into is it its just me more most my no nor not now of off on once only or other our ours out over own
		same she should so some such than that the their theirs them then there these they this those through
		to too under until up very was we were what when where which while who whom why will with would you
		your yours yourself please tell know remember recall`) {
		m[w] = true
	}
	return m
}()

// ArchivedNote picks the archived note out of the rows a driver's archive
// statement returned (the note and the one superseding it), or says which
// of the two was missing. Drivers share it so both answer alike.
func ArchivedNote(rows []*Note, p *NoteArchiveParams) (*Note, error) {
	var archived *Note
	by := p.SupersededBy == nil
	for _, n := range rows {
		switch {
		case n.ID == p.ID:
			archived = n
		case p.SupersededBy != nil && n.ID == *p.SupersededBy:
			by = true
		}
	}
	switch {
	case archived == nil:
		return nil, fmt.Errorf("archiving note %s: %w", p.ID, ErrNotFound)
	case !by:
		return nil, fmt.Errorf("archiving note %s: the superseding note %s: %w", p.ID, *p.SupersededBy, ErrNotFound)
	}
	return archived, nil
}
