package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Personality documents: each agent has one Markdown document about itself
// (tone, values, how it talks), kept with every version. A replacement is
// a new version; nothing is overwritten, so old versions stay readable.
//
//	version 1 (the seed from the persona) ─► 2 ─► 3 …   the highest is current
//
// Writes name the version they replace (After), so two writers that read
// the same document cannot both replace it: the second gets ErrConflict.

// Personality is one version of an agent's personality document.
type Personality struct {
	AgentID   uuid.UUID
	Version   int // 1 for the first, one more for each replacement
	Text      string
	Author    string // who wrote it: an agent's Author, the operator, "config"
	CreatedAt time.Time
}

// PersonalityAppendParams writes the next version of an agent's document.
type PersonalityAppendParams struct {
	AgentID uuid.UUID
	// After is the version this one replaces (0 when the agent has none);
	// the new row is After+1, and ErrConflict when that exists already.
	After  int
	Text   string
	Author string
	Now    time.Time
}

// PersonalityGetParams reads one version of an agent's document.
type PersonalityGetParams struct {
	AgentID uuid.UUID
	Version int // 0 for the current (highest) version
}

// PersonalityListParams lists an agent's versions, newest first.
type PersonalityListParams struct {
	AgentID uuid.UUID
	Limit   int // 0 means DefaultListLimit
}

// PersonalityQueries are the personality documents' reads and writes.
type PersonalityQueries interface {
	// PersonalityAppend writes version After+1; ErrConflict when it exists
	// (someone else replaced the document first, or it is already seeded).
	PersonalityAppend(ctx context.Context, p *PersonalityAppendParams) (*Personality, error)
	// PersonalityGet reads a version; ErrNotFound when there is none.
	PersonalityGet(ctx context.Context, p *PersonalityGetParams) (*Personality, error)
	PersonalityList(ctx context.Context, p *PersonalityListParams) ([]*Personality, error)
}
