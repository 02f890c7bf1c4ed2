package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Artifacts. The row and its version are written in one transaction; an
// update bumps the row's version and inserts that version, so the row's
// content is always its newest version's.

func artifact(r dbsqlc.Artifact) *store.Artifact {
	return &store.Artifact{
		ID: r.ID, ConversationID: r.ConversationID, Kind: store.ArtifactKind(r.Kind), Title: r.Title,
		Language: r.Language, Content: r.Content, Version: int(r.Version), CreatedBy: store.Author(r.CreatedBy),
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func artifactVersion(r dbsqlc.ArtifactVersion) *store.ArtifactVersion {
	return &store.ArtifactVersion{
		ArtifactID: r.ArtifactID, Version: int(r.Version), Title: r.Title, Language: r.Language,
		Content: r.Content, Author: store.Author(r.Author), CreatedAt: fromMicros(r.CreatedAt),
	}
}

func artifactComment(r dbsqlc.ArtifactComment) *store.ArtifactComment {
	return &store.ArtifactComment{
		ID: r.ID, ArtifactID: r.ArtifactID, Version: int(r.Version), Author: store.Author(r.Author),
		Text: r.Text, CreatedAt: fromMicros(r.CreatedAt),
	}
}

func insertVersion(ctx context.Context, db *dbsqlc.Queries, a dbsqlc.Artifact, author string, now int64) error {
	return db.ArtifactVersionInsert(ctx, dbsqlc.ArtifactVersionInsertParams{
		ArtifactID: a.ID, Version: a.Version, Title: a.Title, Language: a.Language, Content: a.Content, Author: author, Now: now,
	})
}

func (q *queries) ArtifactCreate(ctx context.Context, p *store.ArtifactCreateParams) (*store.Artifact, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Artifact, error) {
		if err := t.mustExist(ctx, p.ConversationID); err != nil {
			return dbsqlc.Artifact{}, err
		}
		a, err := t.tx.ArtifactInsert(ctx, dbsqlc.ArtifactInsertParams{
			ID: p.ID, ConversationID: p.ConversationID, Kind: string(p.Kind), Title: p.Title, Language: p.Language,
			Content: p.Content, CreatedBy: string(p.Author), Now: micros(p.Now),
		})
		if err != nil {
			return a, err
		}
		return a, insertVersion(ctx, t.tx, a, string(p.Author), micros(p.Now))
	})
	if err != nil {
		return nil, wrap(err, "creating artifact %q in %s", p.Title, p.ConversationID)
	}
	return artifact(r), nil
}

func (q *queries) ArtifactUpdate(ctx context.Context, p *store.ArtifactUpdateParams) (*store.Artifact, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Artifact, error) {
		a, err := t.tx.ArtifactNext(ctx, dbsqlc.ArtifactNextParams{
			ID: p.ID, Title: textArg(p.Title), Language: textArg(p.Language), Content: p.Content,
			BaseVersion: int64(p.BaseVersion), Now: micros(p.Now),
		})
		if errors.Is(err, sql.ErrNoRows) && p.BaseVersion > 0 {
			cur, gerr := t.tx.ArtifactGet(ctx, p.ID)
			if gerr != nil {
				return a, gerr
			}
			return a, fmt.Errorf("%w: artifact %s is at version %d, not %d", store.ErrConflict, p.ID, cur.Version, p.BaseVersion)
		}
		if err != nil {
			return a, err
		}
		return a, insertVersion(ctx, t.tx, a, string(p.Author), micros(p.Now))
	})
	if err != nil {
		return nil, wrap(err, "updating artifact %s", p.ID)
	}
	return artifact(r), nil
}

func (q *queries) ArtifactGet(ctx context.Context, id uuid.UUID) (*store.Artifact, error) {
	r, err := q.read().ArtifactGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading artifact %s", id)
	}
	return artifact(r), nil
}

func (q *queries) ArtifactVersionGet(ctx context.Context, p *store.ArtifactVersionParams) (*store.ArtifactVersion, error) {
	r, err := q.read().ArtifactVersionGet(ctx, dbsqlc.ArtifactVersionGetParams{ArtifactID: p.ID, Version: int64(p.Version)})
	if err != nil {
		return nil, wrap(err, "reading version %d of artifact %s", p.Version, p.ID)
	}
	return artifactVersion(r), nil
}

func (q *queries) ArtifactVersionList(ctx context.Context, id uuid.UUID) ([]*store.ArtifactVersion, error) {
	rows, err := q.read().ArtifactVersionList(ctx, id)
	out, err := allOf(rows, err, artifactVersion)
	if err != nil {
		return nil, wrap(err, "listing the versions of artifact %s", id)
	}
	return out, nil
}

func (q *queries) ArtifactList(ctx context.Context, p *store.ArtifactListParams) ([]*store.Artifact, error) {
	all, ws := visibilityArgs(p.Visibility)
	rows, err := q.read().ArtifactList(ctx, dbsqlc.ArtifactListParams{
		AllWorkspaces: all, Workspaces: ws, Kind: string(p.Kind), ConversationID: uuidArg(p.ConversationID),
		Needle: p.Needle, MaxRows: limitArg(p.Limit),
	})
	out, err := allOf(rows, err, artifact)
	if err != nil {
		return nil, wrap(err, "listing artifacts")
	}
	return out, nil
}

func (q *queries) ArtifactComment(ctx context.Context, p *store.ArtifactCommentParams) (*store.ArtifactComment, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.ArtifactComment, error) {
		a, err := t.tx.ArtifactGet(ctx, p.ArtifactID)
		if err != nil {
			return dbsqlc.ArtifactComment{}, err
		}
		v := int64(p.Version)
		if v == 0 {
			v = a.Version
		}
		if v > a.Version {
			return dbsqlc.ArtifactComment{}, fmt.Errorf("version %d: %w", v, store.ErrNotFound)
		}
		return t.tx.ArtifactCommentInsert(ctx, dbsqlc.ArtifactCommentInsertParams{
			ID: newID(), ArtifactID: p.ArtifactID, Version: v, Author: string(p.Author), Text: p.Text, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "commenting on artifact %s", p.ArtifactID)
	}
	return artifactComment(r), nil
}

func (q *queries) ArtifactCommentList(ctx context.Context, id uuid.UUID) ([]*store.ArtifactComment, error) {
	rows, err := q.read().ArtifactCommentList(ctx, id)
	out, err := allOf(rows, err, artifactComment)
	if err != nil {
		return nil, wrap(err, "listing the comments on artifact %s", id)
	}
	return out, nil
}
