-- Artifacts, their versions and comments. A listing joins the conversation
-- for its workspace, so an artifact is seen by exactly those who see its
-- conversation, and never once the conversation is deleted.

-- name: ArtifactInsert :one
INSERT INTO artifacts (id, conversation_id, kind, title, language, content, version, created_by, created_at, updated_at)
VALUES (@id, @conversation_id, @kind, @title, @language, @content, 1, @created_by, @now::timestamptz, @now::timestamptz)
RETURNING *;

-- name: ArtifactVersionInsert :exec
INSERT INTO artifact_versions (artifact_id, version, title, language, content, author, created_at)
VALUES (@artifact_id, @version, @title, @language, @content, @author, @now::timestamptz);

-- name: ArtifactGet :one
SELECT * FROM artifacts WHERE id = @id;

-- name: ArtifactNext :one
UPDATE artifacts SET title = COALESCE(sqlc.narg(title)::text, title), language = COALESCE(sqlc.narg(language)::text, language),
    content = @content, version = version + 1, updated_at = @now::timestamptz
WHERE id = @id AND (@base_version::int = 0 OR version = @base_version::int)
RETURNING *;

-- name: ArtifactVersionGet :one
SELECT * FROM artifact_versions WHERE artifact_id = @artifact_id AND version = @version;

-- name: ArtifactVersionList :many
SELECT * FROM artifact_versions WHERE artifact_id = @artifact_id ORDER BY version;

-- name: ArtifactList :many
SELECT a.* FROM artifacts a
JOIN conversations c ON c.id = a.conversation_id
LEFT JOIN conversation_filing f ON f.conversation_id = a.conversation_id
WHERE f.deleted_at IS NULL
  AND (@all_workspaces::bool OR c.workspace_id = ANY (CAST(@workspaces::text[] AS uuid[])))
  AND (@kind::text = '' OR a.kind = @kind::text)
  AND (sqlc.narg(conversation_id)::uuid IS NULL OR a.conversation_id = sqlc.narg(conversation_id)::uuid)
  AND (@needle::text = ''
       OR strpos(lower(a.title), @needle::text) > 0
       OR strpos(lower(a.content), @needle::text) > 0)
ORDER BY a.updated_at DESC, a.id DESC
LIMIT @max_rows::int;

-- name: ArtifactCommentInsert :one
INSERT INTO artifact_comments (id, artifact_id, version, author, text, created_at)
VALUES (@id, @artifact_id, @version, @author, @text, @now::timestamptz)
RETURNING *;

-- name: ArtifactCommentList :many
SELECT * FROM artifact_comments WHERE artifact_id = @artifact_id ORDER BY created_at, id;
