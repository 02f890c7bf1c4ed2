package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Artifacts: a document, page or code an agent made in a conversation. An
// edit makes a new version; every version stays readable, and comments
// sit alongside, each naming the version it was made on.
//
//	create ──► version 1 ──(update)──► version 2 ──(update)──► ...
//
// An artifact is seen exactly by those who see its conversation: listings
// take the reader's Visibility, and an artifact of a deleted conversation
// is listed to no one.

// ArtifactKind says what an artifact holds.
type ArtifactKind string

const (
	ArtifactDocument ArtifactKind = "document" // prose, Markdown
	ArtifactPage     ArtifactKind = "page"     // a web page, HTML
	ArtifactCode     ArtifactKind = "code"     // source in Language
)

// Valid reports whether k is one of the kinds.
func (k ArtifactKind) Valid() bool {
	return k == ArtifactDocument || k == ArtifactPage || k == ArtifactCode
}

// Artifact is an artifact at its current version.
type Artifact struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	Kind           ArtifactKind
	Title          string
	Language       string
	Content        string
	Version        int
	CreatedBy      Author
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// ArtifactVersion is one version, never changed.
type ArtifactVersion struct {
	ArtifactID uuid.UUID
	Version    int
	Title      string
	Language   string
	Content    string
	Author     Author
	CreatedAt  time.Time
}

// ArtifactComment is a remark on an artifact's version.
type ArtifactComment struct {
	ID         uuid.UUID
	ArtifactID uuid.UUID
	Version    int
	Author     Author
	Text       string
	CreatedAt  time.Time
}

// ArtifactCreateParams makes an artifact at version 1.
type ArtifactCreateParams struct {
	ConversationID uuid.UUID
	Kind           ArtifactKind
	Title          string
	Language       string
	Content        string
	Author         Author
	Now            time.Time

	ID uuid.UUID // optional; a new id when zero
}

// ArtifactUpdateParams makes the next version. Title and Language, when
// nil, carry over from the current version.
type ArtifactUpdateParams struct {
	ID       uuid.UUID
	Title    *string
	Language *string
	Content  string
	Author   Author
	// BaseVersion, when set, is the version the edit was made on: the
	// update is ErrConflict when another edit came first.
	BaseVersion int
	Now         time.Time
}

// ArtifactVersionParams names one version.
type ArtifactVersionParams struct {
	ID      uuid.UUID
	Version int
}

// ArtifactListParams lists the artifacts a reader sees, newest first.
type ArtifactListParams struct {
	Visibility     Visibility
	Kind           ArtifactKind // "" means any
	ConversationID *uuid.UUID
	// Query matches the title or the current content, as a substring.
	Query string
	Limit int // 0 means DefaultListLimit

	Needle string // Query lowercased and trimmed, filled in by the rules
}

// ArtifactCommentParams comments on a version (0: the current one).
type ArtifactCommentParams struct {
	ArtifactID uuid.UUID
	Version    int
	Author     Author
	Text       string
	Now        time.Time
}

// MaxArtifactBytes bounds an artifact version's content.
const MaxArtifactBytes = 512 << 10

// MaxCommentChars bounds a comment.
const MaxCommentChars = 4000

// ArtifactQueries are the artifacts' reads and writes.
type ArtifactQueries interface {
	// ArtifactCreate makes an artifact and its version 1; ErrNotFound when
	// the conversation does not exist.
	ArtifactCreate(ctx context.Context, p *ArtifactCreateParams) (*Artifact, error)
	// ArtifactUpdate makes the next version; ErrNotFound when the artifact
	// does not exist, ErrConflict when BaseVersion is not the current one.
	ArtifactUpdate(ctx context.Context, p *ArtifactUpdateParams) (*Artifact, error)
	ArtifactGet(ctx context.Context, id uuid.UUID) (*Artifact, error)
	// ArtifactVersionGet reads one version; ErrNotFound when absent.
	ArtifactVersionGet(ctx context.Context, p *ArtifactVersionParams) (*ArtifactVersion, error)
	// ArtifactVersionList lists every version, oldest first.
	ArtifactVersionList(ctx context.Context, id uuid.UUID) ([]*ArtifactVersion, error)
	ArtifactList(ctx context.Context, p *ArtifactListParams) ([]*Artifact, error)
	// ArtifactComment adds a comment; ErrNotFound when the artifact or the
	// version does not exist.
	ArtifactComment(ctx context.Context, p *ArtifactCommentParams) (*ArtifactComment, error)
	// ArtifactCommentList lists the comments, oldest first.
	ArtifactCommentList(ctx context.Context, id uuid.UUID) ([]*ArtifactComment, error)
}
