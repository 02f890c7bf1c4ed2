package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Artifacts. The row and its version are written in one transaction; an
// update bumps the row's version (the UPDATE locks it, so two edits take
// turns) and inserts that version.

func artifact(r *dbsqlc.Artifact) *store.Artifact {
	return &store.Artifact{
		ID: r.ID, ConversationID: r.ConversationID, Kind: store.ArtifactKind(r.Kind), Title: r.Title,
		Language: r.Language, Content: r.Content, Version: int(r.Version), CreatedBy: store.Author(r.CreatedBy),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

func artifactVersion(r *dbsqlc.ArtifactVersion) *store.ArtifactVersion {
	return &store.ArtifactVersion{
		ArtifactID: r.ArtifactID, Version: int(r.Version), Title: r.Title, Language: r.Language,
		Content: r.Content, Author: store.Author(r.Author), CreatedAt: r.CreatedAt,
	}
}

func artifactComment(r *dbsqlc.ArtifactComment) *store.ArtifactComment {
	return &store.ArtifactComment{
		ID: r.ID, ArtifactID: r.ArtifactID, Version: int(r.Version), Author: store.Author(r.Author), Text: r.Text, CreatedAt: r.CreatedAt,
	}
}

func (q *queries) insertVersion(ctx context.Context, a *dbsqlc.Artifact, author store.Author) error {
	return exec(ctx, q, (*dbsqlc.Queries).ArtifactVersionInsert, &dbsqlc.ArtifactVersionInsertParams{
		ArtifactID: a.ID, Version: a.Version, Title: a.Title, Language: a.Language, Content: a.Content, Author: string(author), Now: a.UpdatedAt,
	})
}

func (q *queries) ArtifactCreate(ctx context.Context, p *store.ArtifactCreateParams) (*store.Artifact, error) {
	var out dbsqlc.Artifact
	err := q.atomic(ctx, func(t *queries) error {
		var err error
		out, err = call(ctx, t, (*dbsqlc.Queries).ArtifactInsert, &dbsqlc.ArtifactInsertParams{
			ID: p.ID, ConversationID: p.ConversationID, Kind: string(p.Kind), Title: p.Title, Language: p.Language,
			Content: p.Content, CreatedBy: string(p.Author), Now: ts(p.Now),
		})
		if err != nil {
			return err
		}
		return t.insertVersion(ctx, &out, p.Author)
	})
	if err != nil {
		return nil, wrap(err, "creating artifact %q in %s", p.Title, p.ConversationID)
	}
	return artifact(&out), nil
}

func (q *queries) ArtifactUpdate(ctx context.Context, p *store.ArtifactUpdateParams) (*store.Artifact, error) {
	var out dbsqlc.Artifact
	err := q.atomic(ctx, func(t *queries) error {
		var err error
		out, err = call(ctx, t, (*dbsqlc.Queries).ArtifactNext, &dbsqlc.ArtifactNextParams{
			ID: p.ID, Title: p.Title, Language: p.Language, Content: p.Content, BaseVersion: int32(p.BaseVersion), Now: ts(p.Now),
		})
		if errors.Is(err, store.ErrNotFound) && p.BaseVersion > 0 {
			cur, gerr := call(ctx, t, (*dbsqlc.Queries).ArtifactGet, p.ID)
			if gerr != nil {
				return gerr
			}
			return fmt.Errorf("%w: artifact %s is at version %d, not %d", store.ErrConflict, p.ID, cur.Version, p.BaseVersion)
		}
		if err != nil {
			return err
		}
		return t.insertVersion(ctx, &out, p.Author)
	})
	if err != nil {
		return nil, wrap(err, "updating artifact %s", p.ID)
	}
	return artifact(&out), nil
}

func (q *queries) ArtifactGet(ctx context.Context, id uuid.UUID) (*store.Artifact, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).ArtifactGet, id)
	if err != nil {
		return nil, wrap(err, "reading artifact %s", id)
	}
	return artifact(&r), nil
}

func (q *queries) ArtifactVersionGet(ctx context.Context, p *store.ArtifactVersionParams) (*store.ArtifactVersion, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).ArtifactVersionGet, &dbsqlc.ArtifactVersionGetParams{ArtifactID: p.ID, Version: int32(p.Version)})
	if err != nil {
		return nil, wrap(err, "reading version %d of artifact %s", p.Version, p.ID)
	}
	return artifactVersion(&r), nil
}

func (q *queries) ArtifactVersionList(ctx context.Context, id uuid.UUID) ([]*store.ArtifactVersion, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ArtifactVersionList, id)
	if err != nil {
		return nil, wrap(err, "listing the versions of artifact %s", id)
	}
	return each(rows, artifactVersion), nil
}

func (q *queries) ArtifactList(ctx context.Context, p *store.ArtifactListParams) ([]*store.Artifact, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ArtifactList, &dbsqlc.ArtifactListParams{
		AllWorkspaces: p.Visibility.All, Workspaces: idStrings(p.Visibility.Workspaces), Kind: string(p.Kind),
		ConversationID: p.ConversationID, Needle: p.Needle, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "listing artifacts")
	}
	return each(rows, artifact), nil
}

func (q *queries) ArtifactComment(ctx context.Context, p *store.ArtifactCommentParams) (*store.ArtifactComment, error) {
	var out dbsqlc.ArtifactComment
	err := q.atomic(ctx, func(t *queries) error {
		a, err := call(ctx, t, (*dbsqlc.Queries).ArtifactGet, p.ArtifactID)
		if err != nil {
			return err
		}
		v := int32(p.Version)
		if v == 0 {
			v = a.Version
		}
		if v > a.Version {
			return fmt.Errorf("version %d: %w", v, store.ErrNotFound)
		}
		out, err = call(ctx, t, (*dbsqlc.Queries).ArtifactCommentInsert, &dbsqlc.ArtifactCommentInsertParams{
			ID: newID(), ArtifactID: p.ArtifactID, Version: v, Author: string(p.Author), Text: p.Text, Now: ts(p.Now),
		})
		return err
	})
	if err != nil {
		return nil, wrap(err, "commenting on artifact %s", p.ArtifactID)
	}
	return artifactComment(&out), nil
}

func (q *queries) ArtifactCommentList(ctx context.Context, id uuid.UUID) ([]*store.ArtifactComment, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).ArtifactCommentList, id)
	if err != nil {
		return nil, wrap(err, "listing the comments on artifact %s", id)
	}
	return each(rows, artifactComment), nil
}
