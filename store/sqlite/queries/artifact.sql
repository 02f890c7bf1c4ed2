-- Artifacts, their versions and comments. A listing joins the conversation
-- for its workspace, so an artifact is seen by exactly those who see its
-- conversation, and never once the conversation is deleted.

-- name: ArtifactInsert :one
INSERT INTO artifacts (id, conversation_id, kind, title, language, content, version, created_by, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(conversation_id), sqlc.arg(kind), sqlc.arg(title), sqlc.arg(language), sqlc.arg(content), 1,
        sqlc.arg(created_by), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: ArtifactVersionInsert :exec
INSERT INTO artifact_versions (artifact_id, version, title, language, content, author, created_at)
VALUES (sqlc.arg(artifact_id), sqlc.arg(version), sqlc.arg(title), sqlc.arg(language), sqlc.arg(content), sqlc.arg(author), CAST(sqlc.arg(now) AS INTEGER));

-- name: ArtifactGet :one
SELECT * FROM artifacts WHERE id = sqlc.arg(id);

-- name: ArtifactNext :one
UPDATE artifacts SET title = COALESCE(sqlc.narg(title), title), language = COALESCE(sqlc.narg(language), language),
    content = sqlc.arg(content), version = version + 1, updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND (CAST(sqlc.arg(base_version) AS INTEGER) = 0 OR version = CAST(sqlc.arg(base_version) AS INTEGER))
RETURNING *;

-- name: ArtifactVersionGet :one
SELECT * FROM artifact_versions WHERE artifact_id = sqlc.arg(artifact_id) AND version = sqlc.arg(version);

-- name: ArtifactVersionList :many
SELECT * FROM artifact_versions WHERE artifact_id = sqlc.arg(artifact_id) ORDER BY version;

-- name: ArtifactList :many
SELECT a.* FROM artifacts a
JOIN conversations c ON c.id = a.conversation_id
LEFT JOIN conversation_filing f ON f.conversation_id = a.conversation_id
WHERE f.deleted_at IS NULL
  AND (CAST(sqlc.arg(all_workspaces) AS INTEGER) = 1
       OR c.workspace_id IN (SELECT value FROM json_each(CAST(sqlc.arg(workspaces) AS TEXT))))
  AND (CAST(sqlc.arg(kind) AS TEXT) = '' OR a.kind = CAST(sqlc.arg(kind) AS TEXT))
  AND (sqlc.narg(conversation_id) IS NULL OR a.conversation_id = sqlc.narg(conversation_id))
  AND (CAST(sqlc.arg(needle) AS TEXT) = ''
       OR instr(lower(a.title), CAST(sqlc.arg(needle) AS TEXT)) > 0
       OR instr(lower(a.content), CAST(sqlc.arg(needle) AS TEXT)) > 0)
ORDER BY a.updated_at DESC, a.id DESC
LIMIT sqlc.arg(max_rows);

-- name: ArtifactCommentInsert :one
INSERT INTO artifact_comments (id, artifact_id, version, author, text, created_at)
VALUES (sqlc.arg(id), sqlc.arg(artifact_id), sqlc.arg(version), sqlc.arg(author), sqlc.arg(text), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: ArtifactCommentList :many
SELECT * FROM artifact_comments WHERE artifact_id = sqlc.arg(artifact_id) ORDER BY created_at, id;
