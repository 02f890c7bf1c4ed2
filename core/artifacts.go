package core

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Artifacts: what agents made in conversations, their versions and the
// comments people leave on them. Who may see one is who may use its
// conversation; the caller checks that.

// Artifact reads artifact id with its content.
func (s *Service) Artifact(ctx context.Context, id uuid.UUID) (*Artifact, error) {
	return s.st.ArtifactGet(ctx, id)
}

// Artifacts lists the artifacts p selects (p.Visibility: of the
// workspaces the caller sees).
func (s *Service) Artifacts(ctx context.Context, p *ArtifactListParams) ([]*Artifact, error) {
	return s.st.ArtifactList(ctx, p)
}

// ArtifactVersions lists the versions of artifact id.
func (s *Service) ArtifactVersions(ctx context.Context, id uuid.UUID) ([]*ArtifactVersion, error) {
	return s.st.ArtifactVersionList(ctx, id)
}

// ArtifactVersion reads version n of artifact id (ErrNotFound: no such
// version).
func (s *Service) ArtifactVersion(ctx context.Context, id uuid.UUID, n int) (*ArtifactVersion, error) {
	return s.st.ArtifactVersionGet(ctx, &store.ArtifactVersionParams{ID: id, Version: n})
}

// ArtifactComments lists the comments on artifact id.
func (s *Service) ArtifactComments(ctx context.Context, id uuid.UUID) ([]*ArtifactComment, error) {
	return s.st.ArtifactCommentList(ctx, id)
}

// CommentArtifact leaves by's comment text on version of artifact id
// (ErrNotFound: no such version).
func (s *Service) CommentArtifact(ctx context.Context, id uuid.UUID, version int, by Author, text string) (*ArtifactComment, error) {
	return s.st.ArtifactComment(ctx, &store.ArtifactCommentParams{ArtifactID: id, Version: version, Author: by, Text: text})
}
